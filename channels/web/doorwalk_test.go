package web

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/internal/rigtest"
	"github.com/clawedge/clawedge/policy"
)

// The door walk of the dashboard: every route is what its kind says. A read
// leaves the board and the trail as they were and reaches no authorizer; a
// call reaches the authorizer (and so the trail) once; a decision is the
// authorizer's Decide, which answers for an approval that does not exist; a
// pairing takes a code and calls nothing. Asked by an owner's browser, so
// that nothing is refused before the route does its part.
func TestEveryRouteIsAReadOrACall(t *testing.T) {
	d := newDash(t, &policy.Policy{Default: policy.Allow, Owners: []string{"web:phone"}})
	d.withSkills(t, d.srv.Runner.Registry)
	d.withSetup(t, d.srv.Runner.Registry)
	auth := &rigtest.CountingAuthorizer{Inner: d.srv.Runner.Authorizer}
	d.srv.Runner.Authorizer = auth // the chat's Dispatcher shares the runner
	owner := d.pair("phone", Owner)
	for _, r := range d.srv.routes() {
		method, path, _ := strings.Cut(r.pattern, " ")
		path = strings.NewReplacer("{$}", "", "{id}", "7").Replace(path)
		if path == "/static/" {
			path = "/static/app.js"
		}
		trail, calls := len(d.audited()), auth.Count()
		var status int
		var body string
		switch {
		case r.kind == read && path == "/api/events":
			continue // a stream that does not end; what it sends is TestEvents'
		case r.kind == read:
			resp, b := owner.do(method, path, "")
			status, body = resp.StatusCode, b
		case r.kind == call && strings.HasPrefix(path, "/skills/"):
			status, body = owner.skillsDoor(path) // page_skills_test.go
		case r.kind == call && strings.HasPrefix(path, "/setup/"):
			status, body = owner.setupDoor(path) // page_setup_test.go
		case r.kind == call && strings.HasPrefix(path, "/api/call"):
			resp, b := owner.do(method, path, `{"tool":"gpio/write","args":{"pin":"led","value":0}}`)
			status, body = resp.StatusCode, b
		case r.kind == call && strings.HasPrefix(path, "/api/"):
			resp, b := owner.do(method, path, `{"text":"@gpio/write{pin=\"led\";value=0}"}`)
			status, body = resp.StatusCode, b
		case r.kind == call:
			status, body = owner.form(path, url.Values{"text": {`@gpio/write{pin="led";value=0}`}})
		case r.kind == decide && strings.HasPrefix(path, "/api/"):
			resp, b := owner.do(method, path, `{"approve":true}`)
			status, body = resp.StatusCode, b
		case r.kind == decide:
			status, body = owner.form(path, url.Values{"approve": {"true"}})
		case r.kind == pair && strings.HasPrefix(path, "/api/"):
			resp, b := (&browser{d: d}).do(method, path, `{"code":"00000000"}`)
			status, body = resp.StatusCode, b
		case r.kind == pair:
			status, body = (&browser{d: d}).form(path, url.Values{"code": {"00000000"}})
		default:
			t.Errorf("%s: a route of no kind the walk knows", r.pattern)
			continue
		}
		grew, asked := len(d.audited())-trail, auth.Count()-calls
		switch r.kind {
		case read, pair:
			if grew != 0 || asked != 0 || status >= 500 {
				t.Errorf("%s (%d): wrote %d audit entries, reached the authorizer %d times: %.200s", r.pattern, status, grew, asked, body)
			}
		case call:
			if asked != 1 || grew != 1 {
				t.Errorf("%s (%d): reached the authorizer %d times, audited %d: %.200s", r.pattern, status, asked, grew, body)
			}
		case decide:
			if asked != 0 || grew != 0 || !strings.Contains(body, "no call is waiting for approval") {
				t.Errorf("%s (%d): not the authorizer's answer: %.200s", r.pattern, status, body)
			}
		}
	}
	if d.level() != hal.Low {
		t.Error("the led is not where the calls left it")
	}
}

// form posts values as a browser's form does, with the session's token.
func (b *browser) form(path string, v url.Values) (int, string) {
	b.d.t.Helper()
	if b.csrf != "" {
		v.Set(csrfField, b.csrf)
	}
	req, err := http.NewRequest("POST", b.d.http.URL+path, strings.NewReader(v.Encode()))
	if err != nil {
		b.d.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", b.d.http.URL)
	if b.cookie != "" {
		req.AddCookie(&http.Cookie{Name: cookieName, Value: b.cookie})
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		b.d.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}
