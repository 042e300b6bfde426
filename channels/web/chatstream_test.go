package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/llm/openai/openaitest"
	"github.com/clawedge/clawedge/policy"
)

// The answer comes as it is produced: the model sends two pieces and then
// stalls, and both pieces reach the browser while the turn is still
// running (no reply event can have been written yet).
func TestChatStreamsTheAnswer(t *testing.T) {
	d := newDash(t, nil)
	model := d.withModel(t)
	model.Push(openaitest.Stall("The led ", "is off."))
	ev := d.pair("phone", Operator).chat(t, "is the led on?")
	var text string
	for text != "The led is off." {
		e := ev.next(t)
		if e.name != "text" {
			t.Fatalf("before the whole answer: event %s %s", e.name, e.data)
		}
		var piece string
		if err := json.Unmarshal([]byte(e.data), &piece); err != nil {
			t.Fatal(err)
		}
		text += piece
	}
}

// A whole answer streamed ends with the reply event, which says so.
func TestChatStreamEndsWithTheReply(t *testing.T) {
	d := newDash(t, nil)
	model := d.withModel(t)
	model.Push(openaitest.Text("All ", "quiet."))
	last, pieces := d.pair("phone", Operator).chat(t, "anything new?").until(t, "reply")
	var r replyEvent
	if err := json.Unmarshal([]byte(last.data), &r); err != nil || !r.Streamed || r.Failed || r.Reply != "All quiet." || strings.Join(pieces, "") != "All quiet." {
		t.Fatalf("reply %s (%v), pieces %q", last.data, err, pieces)
	}
}

// A call the model proposes that asks is shown in the chat with what the
// browser may do about it; the owner's answer goes through
// /api/approvals/ID, the one decision path, and the chat then shows the
// request settled and the rest of the answer. An operator's browser sees
// the request but may not answer it.
func TestChatApprovalInline(t *testing.T) {
	pol := &policy.Policy{Default: policy.Allow, Users: map[string]map[string]policy.Action{
		"web:phone": {"gpio/write": policy.Ask}, "web:tablet": {"gpio/write": policy.Ask}}}
	d := newDash(t, pol)
	model := d.withModel(t)
	owner, op := d.pair("phone", Owner), d.pair("tablet", Operator)

	model.Push(openaitest.ToolCall("gpio/write", `{"pin":"led","value":1}`))
	ev := op.chat(t, "turn on the led")
	e, _ := ev.until(t, "approval")
	var a approvalEvent
	if err := json.Unmarshal([]byte(e.data), &a); err != nil || a.May || !strings.Contains(a.Call, "gpio/write") {
		t.Fatalf("an operator's approval event: %s (%v)", e.data, err)
	}
	if resp, _ := op.do("POST", "/api/approvals/"+a.ID, `{"approve":true}`); resp.StatusCode != http.StatusForbidden || d.level() != hal.Low {
		t.Fatalf("an operator answering: %d, led %v", resp.StatusCode, d.level())
	}
	ev.cancel() // the operator leaves: the request ends with its turn
	for deadline := time.Now().Add(30 * time.Second); len(d.auth.List()) > 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the request outlived the chat that made it")
		}
	}

	model.Push(openaitest.ToolCall("gpio/write", `{"pin":"led","value":1}`), openaitest.Text("The led ", "is on."))
	ev = owner.chat(t, "turn on the led")
	e, _ = ev.until(t, "approval")
	if err := json.Unmarshal([]byte(e.data), &a); err != nil || !a.May || a.Call != `@gpio/write{pin="led";value=1}` {
		t.Fatalf("the owner's approval event: %s (%v)", e.data, err)
	}
	if d.level() != hal.Low {
		t.Fatal("the call ran before anyone answered")
	}
	if resp, body := owner.do("POST", "/api/approvals/"+a.ID, `{"approve":true}`); resp.StatusCode != 200 {
		t.Fatalf("approving: %d %s", resp.StatusCode, body)
	}
	e, _ = ev.until(t, "settled")
	var s settledEvent
	if json.Unmarshal([]byte(e.data), &s); s.ID != a.ID || s.Outcome != "decided" {
		t.Errorf("settled: %s", e.data)
	}
	e, pieces := ev.until(t, "reply")
	if d.level() != hal.High || !strings.Contains(strings.Join(pieces, ""), "The led is on.") {
		t.Fatalf("after approving: led %v, text %q, %s", d.level(), pieces, e.data)
	}
	// The operator's request, never answered, is audited as not run; the
	// owner's as run, for web:phone (its model acting for it).
	var audited []string
	for _, e := range d.audited() {
		audited = append(audited, fmt.Sprintf("%s %s ok=%v", e.Who, e.Command, e.OK))
	}
	want := []string{`web:tablet @gpio/write{pin="led";value=1} ok=false`, `web:phone @gpio/write{pin="led";value=1} ok=true`}
	if !slices.Equal(audited, want) {
		t.Errorf("audit %q", audited)
	}
}

// A command typed in the chat that asks (the sender's own rules say ask) is
// shown inline like the model's calls are, and the owner's answer runs it.
func TestChatTypedCommandApprovalInline(t *testing.T) {
	pol := &policy.Policy{Default: policy.Allow, Users: map[string]map[string]policy.Action{"web:phone": {"gpio/write": policy.Ask}}}
	d := newDash(t, pol)
	owner := d.pair("phone", Owner)
	ev := owner.chat(t, `@gpio/write{pin="led";value=1}`)
	e, _ := ev.until(t, "approval")
	var a approvalEvent
	if err := json.Unmarshal([]byte(e.data), &a); err != nil || !a.May || a.Call != `@gpio/write{pin="led";value=1}` {
		t.Fatalf("the approval event: %s (%v)", e.data, err)
	}
	if d.level() != hal.Low {
		t.Fatal("the call ran before anyone answered")
	}
	if resp, body := owner.do("POST", "/api/approvals/"+a.ID, `{"approve":true}`); resp.StatusCode != 200 {
		t.Fatalf("approving: %d %s", resp.StatusCode, body)
	}
	e, _ = ev.until(t, "reply")
	var r replyEvent
	if err := json.Unmarshal([]byte(e.data), &r); err != nil || r.Failed || !strings.Contains(r.Reply, "led = 1") || d.level() != hal.High {
		t.Fatalf("after approving: led %v, reply %s", d.level(), e.data)
	}
}

// Without JavaScript the chat is a plain form: it needs the CSRF token in
// its field and this site's Origin, and answers with the whole reply on
// the page, escaped.
func TestChatFormWithoutScript(t *testing.T) {
	d := newDash(t, nil)
	model := d.withModel(t)
	b := d.pair("phone", Operator)
	form := func(values url.Values, origin string) (int, string) {
		req, _ := http.NewRequest("POST", d.http.URL+"/chat", strings.NewReader(values.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.AddCookie(&http.Cookie{Name: cookieName, Value: b.cookie})
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var sb strings.Builder
		buf := make([]byte, 4096)
		for {
			n, err := resp.Body.Read(buf)
			sb.Write(buf[:n])
			if err != nil {
				break
			}
		}
		return resp.StatusCode, sb.String()
	}
	write := `@gpio/write{pin="led";value=1}`
	if status, _ := form(url.Values{"text": {write}}, ""); status != http.StatusForbidden {
		t.Errorf("no token: %d", status)
	}
	wrong := "0" + b.csrf[1:] // another token, whatever the session's begins with
	if wrong == b.csrf {
		wrong = "1" + b.csrf[1:]
	}
	if status, _ := form(url.Values{"text": {write}, "csrf": {wrong}}, ""); status != http.StatusForbidden {
		t.Errorf("a wrong token: %d", status)
	}
	if status, _ := form(url.Values{"text": {write}, "csrf": {b.csrf}}, "http://evil.example"); status != http.StatusForbidden {
		t.Errorf("another site's form: %d", status)
	}
	if len(d.audited()) != 0 || d.level() != hal.Low {
		t.Fatal("a refused form reached the call path")
	}
	model.Push(openaitest.Text("<b>bold</b> ", "claim"))
	status, page := form(url.Values{"text": {"say <i>hi</i>"}, "csrf": {b.csrf}}, d.http.URL)
	if status != 200 || !strings.Contains(page, `<li class="me">say &lt;i&gt;hi&lt;/i&gt;</li><li class="board">&lt;b&gt;bold&lt;/b&gt; claim</li>`) {
		t.Fatalf("the form's answer: %d\n%s", status, page)
	}
	if status, page := form(url.Values{"text": {write}, "csrf": {b.csrf}}, ""); status != 200 || !strings.Contains(page, "led = 1") || d.level() != hal.High {
		t.Errorf("a command by form: %d, led %v\n%s", status, d.level(), page)
	}
}

// Chat turns are bounded: past maxChats the next is refused at once.
func TestChatTurnsBounded(t *testing.T) {
	d := newDash(t, nil)
	b := d.pair("phone", Operator)
	d.srv.chats.Store(maxChats)
	if resp, body := b.do("POST", "/api/chat", `{"text":"@gpio/read{pin=\"button\"}"}`); resp.StatusCode != http.StatusServiceUnavailable || len(d.audited()) != 0 {
		t.Errorf("past the bound: %d %s", resp.StatusCode, body)
	}
	d.srv.chats.Store(maxChats - 1)
	if resp, body := b.do("POST", "/api/chat", `{"text":"@gpio/read{pin=\"button\"}"}`); resp.StatusCode != 200 {
		t.Errorf("under the bound: %d %s", resp.StatusCode, body)
	}
	if n := d.srv.chats.Load(); n != maxChats-1 {
		t.Errorf("a finished turn left %d counted", n)
	}
}
