package web

import (
	"bufio"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/internal/cooldown"
	"github.com/clawedge/clawedge/policy"
)

const switchOn = `{"tool":"gpio/write","args":{"pin":"led","value":1}}`

// Every refusal is decided before the call path: the led stays off and the
// audit stays empty.
func TestRefusalsNeverReachTheCallPath(t *testing.T) {
	d := newDash(t, nil)
	op := d.pair("phone", Operator)
	viewer := d.pair("tablet", Viewer)
	revoked := d.pair("old", Operator)
	if n, err := d.srv.Sessions.Revoke("old"); err != nil || n != 1 {
		t.Fatalf("revoke: %d %v", n, err)
	}
	site := d.http.URL
	for _, tc := range []struct {
		name   string
		b      browser
		status int
	}{
		{"no session", browser{d: d}, http.StatusUnauthorized},
		{"a forged cookie", browser{d: d, cookie: strings.Repeat("a", 64), csrf: op.csrf}, http.StatusUnauthorized},
		{"a revoked session", *revoked, http.StatusUnauthorized},
		{"no CSRF token", browser{d: d, cookie: op.cookie}, http.StatusForbidden},
		{"another session's CSRF token", browser{d: d, cookie: op.cookie, csrf: viewer.csrf}, http.StatusForbidden},
		{"a foreign Origin", browser{d: d, cookie: op.cookie, csrf: op.csrf, origin: "http://evil.example"}, http.StatusForbidden},
		{"Origin: null (a sandboxed page)", browser{d: d, cookie: op.cookie, csrf: op.csrf, origin: "null"}, http.StatusForbidden},
		{"an https Origin on http", browser{d: d, cookie: op.cookie, csrf: op.csrf, origin: strings.Replace(site, "http:", "https:", 1)}, http.StatusForbidden},
		{"a rebinding Host", browser{d: d, cookie: op.cookie, csrf: op.csrf, host: "evil.example"}, http.StatusMisdirectedRequest},
		{"a viewer switching a pin", *viewer, http.StatusForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := tc.b.do("POST", "/api/call", switchOn)
			if resp.StatusCode != tc.status {
				t.Errorf("status %d (%s), want %d", resp.StatusCode, body, tc.status)
			}
		})
	}
	// The operator's own page may call: the guards above refused for their
	// reason, not for every request.
	op.origin = site
	if resp, body := op.do("POST", "/api/call", `{"tool":"gpio/read","args":{"pin":"button"}}`); resp.StatusCode != 200 {
		t.Fatalf("the operator's call: %d %s", resp.StatusCode, body)
	}
	if d.level() != hal.Low {
		t.Error("a refused request switched the led")
	}
	// The viewer's call was refused by the policy's role layer on the call
	// path, so the trail shows who tried; the guards' refusals never got there.
	if a := d.audited(); len(a) != 2 || a[0].Who != "web:tablet" || a[0].OK || !strings.Contains(a[0].Detail, "is a viewer") ||
		a[1].Who != "web:phone" || !strings.HasPrefix(a[1].Command, "@gpio/read") {
		t.Errorf("audit %+v: want the viewer's refused gpio/write and the operator's gpio/read", a)
	}
	// A viewer's and a guest's reads of the API: the guest is refused.
	if resp, _ := viewer.do("GET", "/api/pins", ""); resp.StatusCode != 200 {
		t.Errorf("a viewer reading the pins: %d", resp.StatusCode)
	}
	if resp, _ := (&browser{d: d}).do("GET", "/api/audit", ""); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a guest reading the audit: %d", resp.StatusCode)
	}
	// Pages: a guest is sent to pairing.
	if resp, _ := (&browser{d: d}).do("GET", "/pins", ""); resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/pair" {
		t.Errorf("a guest's page: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
}

// Guessing codes: past cooldown.MaxWrong wrong ones, even the right code is refused
// for a cooldown that doubles; no session is made meanwhile.
func TestGuessedCodesCoolDown(t *testing.T) {
	d := newDash(t, nil)
	code, _, err := d.srv.Sessions.Pair("phone", Owner)
	if err != nil {
		t.Fatal(err)
	}
	guess := &browser{d: d}
	wrong := "00000000"
	if wrong == code {
		wrong = "00000001"
	}
	for i := range cooldown.MaxWrong {
		if resp, body := guess.do("POST", "/api/session", `{"code":"`+wrong+`"}`); resp.StatusCode != http.StatusForbidden {
			t.Fatalf("wrong code %d: %d %s", i, resp.StatusCode, body)
		}
	}
	resp, body := guess.do("POST", "/api/session", `{"code":"`+code+`"}`)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" || len(resp.Cookies()) != 0 {
		t.Fatalf("the right code during the cooldown: %d %s", resp.StatusCode, body)
	}
	if d.srv.Sessions.PausedUntil().IsZero() {
		t.Error("no pause told to the person issuing codes")
	}
	// The cooldown is in the store: a restarted door keeps it.
	again, err := OpenSessions(d.st, d.now)
	if err != nil {
		t.Fatal(err)
	}
	var cool *CooldownError
	if _, _, _, err := again.Redeem(code); !errors.As(err, &cool) {
		t.Errorf("after a restart: %v, want the cooldown", err)
	}
	d.advance(cooldown.FirstWait + time.Second)
	for range cooldown.MaxWrong {
		guess.do("POST", "/api/session", `{"code":"`+wrong+`"}`)
	}
	d.advance(cooldown.FirstWait + time.Second) // the second cooldown is twice as long
	if resp, _ := guess.do("POST", "/api/session", `{"code":"`+code+`"}`); resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("the second cooldown ended after one first cooldown's time: %d", resp.StatusCode)
	}
	if len(d.srv.Sessions.List()) != 0 || len(d.audited()) != 0 {
		t.Error("guessing made a session or reached the call path")
	}
	d.advance(cooldown.FirstWait)
	if resp, body := guess.do("POST", "/api/session", `{"code":"`+code+`"}`); resp.StatusCode != 200 {
		t.Errorf("the right code after the cooldowns: %d %s", resp.StatusCode, body)
	}
	// Used once.
	if resp, _ := guess.do("POST", "/api/session", `{"code":"`+code+`"}`); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a code used twice: %d", resp.StatusCode)
	}
	// Expired.
	code2, _, _ := d.srv.Sessions.Pair("late", Viewer)
	d.advance(CodeTTL)
	if resp, _ := guess.do("POST", "/api/session", `{"code":"`+code2+`"}`); resp.StatusCode != http.StatusForbidden {
		t.Errorf("an expired code: %d", resp.StatusCode)
	}
}

// The API as a script uses it: cookie and token, no Origin.
func TestAPIFromAScript(t *testing.T) {
	pol := &policy.Policy{Default: policy.Allow, Owners: []string{"web:admin"},
		Users: map[string]map[string]policy.Action{"web:phone": {"gpio/toggle": policy.Ask}}}
	d := newDash(t, pol)
	op := d.pair("phone", Operator)
	owner := d.pair("admin", Owner)

	// Sessions are durable: a restarted door knows the browser.
	again, err := OpenSessions(d.st, d.now)
	if err != nil {
		t.Fatal(err)
	}
	if se, ok := again.lookup(op.cookie); !ok || se.Name != "phone" || se.Role != Operator {
		t.Fatalf("after a restart: %+v %v", se, ok)
	}

	events := d.stream(op)
	if pins := events.next(t); len(pins) != 2 || led(pins).Level != 0 || !led(pins).Output {
		t.Fatalf("first pins event: %+v", pins)
	}
	resp, body := op.do("POST", "/api/call", switchOn)
	if resp.StatusCode != 200 || d.level() != hal.High {
		t.Fatalf("switching: %d %s, led %v", resp.StatusCode, body, d.level())
	}
	if pins := events.next(t); led(pins).Level != 1 {
		t.Errorf("pushed after the switch: %+v", pins)
	}
	var pins []Pin
	if resp, body := op.do("GET", "/api/pins", ""); resp.StatusCode != 200 || json.Unmarshal([]byte(body), &pins) != nil || led(pins).Level != 1 {
		t.Errorf("GET /api/pins: %d %s", resp.StatusCode, body)
	}
	// A bad call is refused by the runner, with its reason.
	if resp, body := op.do("POST", "/api/call", `{"tool":"gpio/write","args":{"pin":"button","value":1}}`); resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, "not run") {
		t.Errorf("a call to an input: %d %s", resp.StatusCode, body)
	}

	// A call that asks waits for an owner; the operator may not answer it.
	done := make(chan string)
	go func() {
		_, body := op.do("POST", "/api/call", `{"tool":"gpio/toggle","args":{"pin":"led"}}`)
		done <- body
	}()
	var waiting []policy.Pending
	for deadline := time.Now().Add(30 * time.Second); len(waiting) == 0; {
		if time.Now().After(deadline) {
			t.Fatal("no approval asked")
		}
		_, body := owner.do("GET", "/api/approvals", "")
		json.Unmarshal([]byte(body), &waiting)
		if len(waiting) == 0 {
			time.Sleep(5 * time.Millisecond)
		}
	}
	if resp, _ := op.do("POST", "/api/approvals/"+waiting[0].ID, `{"approve":true}`); resp.StatusCode != http.StatusForbidden {
		t.Errorf("an operator answering: %d", resp.StatusCode)
	}
	if resp, body := owner.do("POST", "/api/approvals/"+waiting[0].ID, `{"approve":true}`); resp.StatusCode != 200 {
		t.Fatalf("the owner approving: %d %s", resp.StatusCode, body)
	}
	if body := <-done; !strings.Contains(body, "led") || d.level() != hal.Low {
		t.Errorf("the approved toggle: %s, led %v", body, d.level())
	}

	// The audit, filtered, newest first, as web:phone.
	var page auditPage
	resp, body = op.do("GET", "/api/audit?caller=web:phone&tool=gpio/write&n=5", "")
	if resp.StatusCode != 200 || json.Unmarshal([]byte(body), &page) != nil {
		t.Fatalf("audit: %d %s", resp.StatusCode, body)
	}
	// (the write to an input was refused before the call path: not audited)
	if len(page.Entries) != 1 || page.Entries[0].Command != `@gpio/write{pin="led";value=1}` || !page.Entries[0].OK {
		t.Errorf("audit entries %+v", page.Entries)
	}
	for _, e := range page.Entries {
		if e.Who != "web:phone" || e.Channel != Channel {
			t.Errorf("audited as %s on %s", e.Who, e.Channel)
		}
	}
	if resp, _ := op.do("GET", "/api/audit?n=0", ""); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("n=0: %d", resp.StatusCode)
	}
	if resp, _ := op.do("POST", "/api/call", `{"tool":`); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a broken body: %d", resp.StatusCode)
	}
	if resp, _ := op.do("POST", "/api/call", `{"tool":"gpio/read","args":{"pin":"`+strings.Repeat("x", maxBody)+`"}}`); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("an oversized body: %d", resp.StatusCode)
	}
}

// Pages render for a session, escape what they show, and send no script of
// their own inline (the CSP forbids it).
func TestPages(t *testing.T) {
	d := newDash(t, nil)
	d.extra = []Fact{{Label: "model", Value: `<script>alert(1)</script>`}}
	v := d.pair("phone", Viewer)
	for _, p := range []string{"/", "/pins", "/approvals", "/automations", "/models", "/chat", "/audit?caller=%3Cb%3E"} {
		resp, body := v.do("GET", p, "")
		if resp.StatusCode != 200 || !strings.Contains(body, "web:phone (viewer)") {
			t.Errorf("%s: %d", p, resp.StatusCode)
		}
		if strings.Contains(body, "<script>alert") || strings.Contains(body, "<b>") {
			t.Errorf("%s: unescaped outside text", p)
		}
		if !strings.Contains(resp.Header.Get("Content-Security-Policy"), "script-src 'self'") {
			t.Errorf("%s: no CSP", p)
		}
		if strings.Contains(body, "data-write") {
			t.Errorf("%s: a viewer's page has switches", p)
		}
	}
	if resp, body := v.do("GET", "/static/app.js", ""); resp.StatusCode != 200 || !strings.Contains(body, "EventSource") {
		t.Errorf("app.js: %d", resp.StatusCode)
	}
	// Pairing without JavaScript: the form.
	code, _, _ := d.srv.Sessions.Pair("laptop", Operator)
	req, _ := http.NewRequest("POST", d.http.URL+"/pair", strings.NewReader("code="+code))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || len(resp.Cookies()) != 1 {
		t.Errorf("form pairing: %d", resp.StatusCode)
	}
}

// stream is an open /api/events.
type stream struct{ r *bufio.Reader }

func (d *dash) stream(b *browser) *stream {
	req, _ := http.NewRequest("GET", d.http.URL+"/api/events", nil)
	req.AddCookie(&http.Cookie{Name: cookieName, Value: b.cookie})
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		d.t.Fatalf("events: %v %v", err, resp)
	}
	d.t.Cleanup(func() { resp.Body.Close() })
	return &stream{r: bufio.NewReader(resp.Body)}
}

// next is the next pins event's list.
func (s *stream) next(t *testing.T) []Pin {
	t.Helper()
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			t.Fatalf("events: %v", err)
		}
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			var pins []Pin
			if err := json.Unmarshal([]byte(data), &pins); err != nil {
				t.Fatalf("event %q: %v", data, err)
			}
			return pins
		}
	}
}

func led(pins []Pin) Pin {
	for _, p := range pins {
		if p.Name == "led" {
			return p
		}
	}
	return Pin{Level: -2}
}

// Event streams are bounded per session: past maxStreams a browser's next
// is refused at once, another browser's (the owner's) is still served, and a
// closed one frees its place. Before, 8 streams in all were allowed, and a
// viewer's 8 tabs locked the owner out of live updates.
func TestEventStreamsBounded(t *testing.T) {
	d := newDash(t, nil)
	viewer := d.pair("phone", Viewer)
	owner := d.pair("owner", Owner)
	var open []*http.Response
	defer func() {
		for _, r := range open {
			r.Body.Close()
		}
	}()
	stream := func(b *browser) *http.Response {
		req, _ := http.NewRequest("GET", d.http.URL+"/api/events", nil)
		req.AddCookie(&http.Cookie{Name: cookieName, Value: b.cookie})
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode == 200 {
			open = append(open, resp)
		} else {
			resp.Body.Close()
		}
		return resp
	}
	n := 0
	for range 16 { // the viewer opens all it may
		if stream(viewer).StatusCode != 200 {
			break
		}
		n++
	}
	if n != maxStreams {
		t.Errorf("the viewer opened %d streams, want %d", n, maxStreams)
	}
	if resp, body := viewer.do("GET", "/api/events", ""); resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("one stream too many: %d %s", resp.StatusCode, body)
	}
	resp := stream(owner)
	if resp.StatusCode != 200 {
		t.Fatalf("the owner's stream while the viewer holds %d: %d", n, resp.StatusCode)
	}
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || line != "event: pins\n" {
		t.Errorf("the owner's first event: %q, %v", line, err)
	}
	for _, r := range open {
		r.Body.Close()
	}
	open = nil
	for deadline := time.Now().Add(30 * time.Second); d.srv.streams.total() > 0; {
		if time.Now().After(deadline) {
			t.Fatalf("%d streams still counted after their clients left", d.srv.streams.total())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// total is what every session holds.
func (p *perSession) total() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, v := range p.n {
		n += v
	}
	return n
}

// A revoked browser's event stream ends with its session.
func TestRevokeEndsTheStream(t *testing.T) {
	d := newDash(t, nil)
	op := d.pair("phone", Viewer)
	events := d.stream(op)
	events.next(t)
	if _, err := d.srv.Sessions.Revoke("phone"); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := events.r.ReadString(0) // to the end of the stream
		done <- err
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the stream outlived its session")
	}
}
