package web

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/clawedge/clawedge/channels/web/webtest"
	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/llm/openai/openaitest"
	"github.com/clawedge/clawedge/policy"
)

// chromium is Debian's headless browser, or a skip (webtest.Chromium).
func chromium(t *testing.T) string { return webtest.Chromium(t) }

// TestBrowser drives a real chromium: it pairs with a code on the pairing
// page, sees the pins, switches the led and sees the level pushed back by
// the event stream, reads its call in the audit as web:phone, pauses an
// automation; in the chat it sees the scripted model's answer streamed,
// approves inline the gpio/write the model proposes (the policy asks for
// the model's calls on the web door), sees the pin change and the call in
// the audit; a command that asks is approved on the approvals page in a
// second tab. With CLAWEDGE_WEB_SCREENSHOTS=DIR it also saves the chat and
// approvals as they are mid-exchange there (docs/web/ holds the committed
// ones; every page as it loads is TestAccessibility's).
func TestBrowser(t *testing.T) {
	bin := chromium(t)
	// The model's writes on the web door ask a person (policy.channels
	// holds the model, not the person's own clicks); web:phone's typed
	// toggles ask too. An owner's browser may answer its own requests.
	d := newDash(t, &policy.Policy{Default: policy.Allow,
		Channels: map[string]map[string]policy.Action{Channel: {"gpio/write": policy.Ask}},
		Users:    map[string]map[string]policy.Action{"web:phone": {"gpio/toggle": policy.Ask}}})
	model := d.withModel(t)
	d.showcase() // a11y_test.go
	code, _, err := d.srv.Sessions.Pair("phone", Owner)
	if err != nil {
		t.Fatal(err)
	}
	bctx := startChromium(t, bin)
	ctx, cancelT := context.WithTimeout(bctx, 60*time.Second)
	defer cancelT()
	shots := os.Getenv("CLAWEDGE_WEB_SCREENSHOTS")
	axe := webtest.MaybeAxe(t) // level A in the states only this test reaches (a11y_test.go)

	base := d.http.URL
	led := chromedp.CSS(`tr[data-pin="led"] .level`)
	err = chromedp.Do(ctx,
		chromedp.Navigate(base+"/pins"), // no session: sent to pairing
		chromedp.WaitVisible(chromedp.CSS(`#pair input[name=code]`)),
		chromedp.SendKeys(chromedp.CSS(`#pair input[name=code]`), code),
		chromedp.Submit(chromedp.CSS(`#pair`)),
		chromedp.WaitVisible(chromedp.CSS(`dl.facts`)),
		chromedp.WaitVisible(chromedp.CSS(`#doctor li.warn`)), // doctor's findings on the overview
		chromedp.Navigate(base+"/pins"),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-pin="led"] .level[data-level="0"]`)),
		chromedp.Click(chromedp.CSS(`tr[data-pin="led"] button[data-write="1"]`)),
		// No reload: the level comes back through /api/events.
		chromedp.WaitVisible(chromedp.CSS(`tr[data-pin="led"] .level[data-level="1"]`)),
	)
	if err != nil {
		html, _ := chromedp.Run(bctx, chromedp.Evaluate[string](`location.href + "\n" + document.body.outerHTML`))
		t.Fatalf("pairing and switching in chromium: %v\n%s", err, html)
	}
	level, err := chromedp.Run(ctx, chromedp.Text(led))
	if err != nil || level != "1" || d.level() != hal.High {
		t.Fatalf("the page shows %q (%v), the board %v", level, err, d.level())
	}
	if who, command := newestAudited(t, ctx, base); who != "web:phone" || command != `@gpio/write{pin="led";value=1}` {
		t.Errorf("the audit shows %q %q", who, command)
	}

	// An automation paused from its page: the button's call, the page reloaded.
	err = chromedp.Do(ctx,
		chromedp.Navigate(base+"/automations"),
		chromedp.Click(chromedp.CSS(`tr[data-auto="porch"] button[data-tool="auto/pause"]`)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-auto="porch"] button[data-tool="auto/resume"]`)))
	if err != nil {
		t.Fatalf("pausing an automation: %v", err)
	}
	if l := d.sched.List(); len(l) != 1 || !l[0].Paused {
		t.Errorf("the scheduler: %+v", l)
	}

	// The models page: what the daemon hands in.
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/models"), chromedp.WaitVisible(chromedp.CSS(`#models tr[data-model="local"]`))); err != nil {
		t.Fatalf("the models page: %v", err)
	}

	// The chat, free text for the model. Its answer comes in three pieces a
	// quarter of a second apart: the page shows the first while the turn
	// still runs (the answer not yet marked done).
	model.Push(openaitest.Reply{Text: []string{"Hello! ", "The led is on, ", "the button is up."}, Delay: 250 * time.Millisecond})
	err = chromedp.Do(ctx,
		chromedp.Navigate(base+"/chat"),
		chromedp.WaitVisible(chromedp.CSS(`#chat input[name=text]`)),
		chromedp.SendKeys(chromedp.CSS(`#chat input[name=text]`), "how is the board?"),
		chromedp.Click(chromedp.CSS(`#chat button`))) // a click fires the form's submit event; Submit would not
	if err != nil {
		t.Fatalf("the chat: %v", err)
	}
	partial, err := chromedp.Run(ctx, chromedp.Poll[string](`(function(){var li=document.querySelector("#chatlog li.board");return li&&!li.dataset.done&&li.textContent.indexOf("Hello!")===0?li.textContent:""})()`,
		chromedp.WithPollingInterval(20*time.Millisecond)))
	if err != nil || partial == "Hello! The led is on, the button is up." {
		t.Fatalf("no part of the answer while it streamed: %q (%v)", partial, err)
	}
	whole, err := chromedp.Run(ctx, chromedp.Poll[string](`(function(){var li=document.querySelector("#chatlog li.board");return li&&li.dataset.done?li.textContent:""})()`))
	if err != nil || whole != "Hello! The led is on, the button is up." {
		t.Fatalf("the whole answer: %q (%v)", whole, err)
	}

	// The model proposes gpio/write, which asks: the request is in the
	// chat with its buttons; Approve runs it through /api/approvals/ID.
	model.Push(openaitest.ToolCall("gpio/write", `{"pin":"led","value":0}`), openaitest.Text("Done: ", "the led is off."))
	err = chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS(`#chat input[name=text]`), "turn the led off"),
		chromedp.Click(chromedp.CSS(`#chat button`)),
		chromedp.WaitVisible(chromedp.CSS(`#chatlog li.approval button[data-answer="true"]`)))
	if err != nil {
		t.Fatalf("the inline approval: %v", err)
	}
	if d.level() != hal.High {
		t.Fatal("the model's write ran before anyone approved it")
	}
	call, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#chatlog li.approval code`)))
	if call != `@gpio/write{pin="led";value=0}` {
		t.Errorf("the request shows %q", call)
	}
	accessible(t, ctx, axe, "the chat with a call waiting inline")
	if shots != "" {
		shot(t, ctx, shots, "chat-approval", false)
	}
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`#chatlog li.approval button[data-answer="true"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#chatlog li.approval[data-outcome="approved"]`)))
	if err != nil {
		t.Fatalf("approving inline: %v", err)
	}
	after, err := chromedp.Run(ctx, chromedp.Poll[string](`(function(){var l=document.querySelectorAll("#chatlog li.board");var li=l[l.length-1];return li&&li.textContent.indexOf("the led is off.")>=0?li.textContent:""})()`))
	if err != nil || d.level() != hal.Low {
		t.Fatalf("after approving: %q (%v), the board %v", after, err, d.level())
	}
	accessible(t, ctx, axe, "the chat after an exchange")
	if shots != "" {
		shot(t, ctx, shots, "chat-exchange", true)
	}
	err = chromedp.Do(ctx, chromedp.Navigate(base+"/pins"), chromedp.WaitVisible(chromedp.CSS(`tr[data-pin="led"] .level[data-level="0"]`)))
	if err != nil {
		t.Fatalf("the pins page after the model's write: %v", err)
	}
	if who, command := newestAudited(t, ctx, base); who != "web:phone" || command != `@gpio/write{pin="led";value=0}` {
		t.Errorf("the audit shows the model's write as %q %q", who, command)
	}

	// A typed command that asks, shown inline in the chat and approved on
	// the approvals page in a second tab; the chat says it was answered
	// elsewhere and its reply shows the toggle ran.
	err = chromedp.Do(ctx,
		chromedp.Navigate(base+"/chat"),
		chromedp.WaitVisible(chromedp.CSS(`#chat input[name=text]`)),
		chromedp.SendKeys(chromedp.CSS(`#chat input[name=text]`), `@gpio/toggle{pin="led"}`),
		chromedp.Click(chromedp.CSS(`#chat button`)),
		chromedp.WaitVisible(chromedp.CSS(`#chatlog li.board`)))
	if err != nil {
		t.Fatalf("the chat: %v", err)
	}
	tab, closeTab := chromedp.NewContext(bctx)
	defer closeTab()
	tctx, cancelTab := context.WithTimeout(tab, 60*time.Second)
	defer cancelTab()
	for deadline := time.Now().Add(30 * time.Second); len(d.auth.List()) == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the chat's toggle asked nobody")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := chromedp.Do(tctx, chromedp.Navigate(base+"/approvals"), chromedp.WaitVisible(chromedp.CSS(`li[data-approval] button[data-approve="true"]`))); err != nil {
		t.Fatalf("the approvals page: %v", err)
	}
	accessible(t, tctx, axe, "the approvals page with a call waiting")
	if shots != "" {
		shot(t, tctx, shots, "approvals-waiting", true)
	}
	err = chromedp.Do(tctx,
		chromedp.Click(chromedp.CSS(`li[data-approval] button[data-approve="true"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#status`)))
	if err != nil {
		t.Fatalf("the approvals page: %v", err)
	}
	reply, err := chromedp.Run(ctx, chromedp.Poll[string](`(function(){var li=document.querySelector("#chatlog li.board");return li&&li.textContent.indexOf("led")>=0?li.textContent:""})()`))
	if err != nil || d.level() != hal.High {
		t.Fatalf("the chat's reply %q (%v), the board %v", reply, err, d.level())
	}
	card, err := chromedp.Run(ctx, chromedp.TextContent(chromedp.CSS(`#chatlog li.approval`)))
	if err != nil ||
		!strings.Contains(card, "@gpio/toggle{pin=\"led\"}") || !strings.Contains(card, "answered elsewhere") {
		t.Fatalf("the chat's inline request: %q (%v)", card, err)
	}

}

// startChromium starts a headless chromium for the test (webtest.Start).
func startChromium(t *testing.T, bin string, extra ...chromedp.ExecAllocatorOption) context.Context {
	return webtest.Start(t, bin, extra...)
}

// TestBrowserWithoutScript: with JavaScript off in chromium, pairing and
// the chat still work as plain forms, and the chat page shows the model's
// whole answer.
func TestBrowserWithoutScript(t *testing.T) {
	bin := chromium(t)
	d := newDash(t, nil)
	model := d.withModel(t)
	code, _, err := d.srv.Sessions.Pair("laptop", Operator)
	if err != nil {
		t.Fatal(err)
	}
	bctx := startChromium(t, bin, chromedp.Flag("blink-settings", "scriptEnabled=false"))
	ctx, cancel := context.WithTimeout(bctx, 60*time.Second)
	defer cancel()
	base := d.http.URL
	model.Push(openaitest.Text("Hello ", "without script."))
	err = chromedp.Do(ctx,
		chromedp.Navigate(base+"/chat"),
		chromedp.WaitVisible(chromedp.CSS(`#pair input[name=code]`)),
		chromedp.SendKeys(chromedp.CSS(`#pair input[name=code]`), code),
		chromedp.Submit(chromedp.CSS(`#pair`)),
		chromedp.WaitVisible(chromedp.CSS(`dl.facts`)),
		chromedp.Navigate(base+"/chat"),
		chromedp.SendKeys(chromedp.CSS(`#chat input[name=text]`), "hello?"),
		// A click, as a person would: with script on, app.js would take it.
		chromedp.Click(chromedp.CSS(`#chat button`)),
		chromedp.WaitVisible(chromedp.CSS(`#chatlog li.board`)))
	if err != nil {
		html, _ := chromedp.Run(bctx, chromedp.Evaluate[string](`location.href + "\n" + document.body.outerHTML`))
		t.Fatalf("the chat without script: %v\n%s", err, html)
	}
	reply, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#chatlog li.board`)))
	if err != nil || reply != "Hello without script." {
		t.Errorf("the answer: %q (%v)", reply, err)
	}
	// The script really was off: app.js would have marked its answer
	// done; this one is the server's page.
	if marked, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector("#chatlog li.board").hasAttribute("data-done")`)); err != nil || marked {
		t.Errorf("the answer came through the script (%v)", err)
	}
}

// newestAudited is the newest gpio/write of web:phone on the audit page.
func newestAudited(t *testing.T, ctx context.Context, base string) (who, command string) {
	t.Helper()
	err := chromedp.Do(ctx,
		chromedp.Navigate(base+"/audit?caller=web:phone&tool=gpio/write"),
		chromedp.WaitVisible(chromedp.CSS(`#audit td.who`)))
	if err != nil {
		t.Fatalf("the audit page: %v", err)
	}
	who, _ = chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#audit td.who`)))
	command, _ = chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#audit td code`)))
	return who, command
}

// shot saves the page as it is at a phone's size and, when desktop, at a
// laptop's too, without reloading it: the chat's exchange lives in the
// page only. The pages as they load are shown by TestAccessibility.
func shot(t *testing.T, ctx context.Context, dir, name string, desktop bool) {
	sizes := []webtest.Size{webtest.Phone, webtest.Desktop}
	if !desktop {
		sizes = sizes[:1]
	}
	webtest.Shot(t, ctx, dir, name, sizes...)
}
