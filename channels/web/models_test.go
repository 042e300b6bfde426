package web

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/policy"
)

// The models page and /api/models show what the daemon hands in, escaped.
func TestModelsPage(t *testing.T) {
	d := newDash(t, nil)
	v := d.pair("phone", Viewer)
	if _, body := v.do("GET", "/models", ""); !strings.Contains(body, "No model is configured") {
		t.Errorf("no models: %s", body)
	}
	d.models = []Model{
		{Name: "local", Model: "qwen2.5-1.5b-q4_k_m.gguf", Where: "on the board", Route: "answers first (local-first)", Calls: 3,
			LastSpeed: "prompt 812 tokens, 40 generated (6.1 tokens/s)"},
		{Name: "lan", Model: "<img src=x>", Where: "192.168.1.5:11434", Route: "when the local model cannot", LastError: "<script>x</script>"},
	}
	resp, body := v.do("GET", "/models", "")
	if resp.StatusCode != 200 || !strings.Contains(body, `<tr data-model="local"><td>local</td><td><code>qwen2.5-1.5b-q4_k_m.gguf</code>`) ||
		!strings.Contains(body, "6.1 tokens/s") || !strings.Contains(body, "answers first") {
		t.Errorf("models page: %d\n%s", resp.StatusCode, body)
	}
	if strings.Contains(body, "<img") || strings.Contains(body, "<script>x") || !strings.Contains(body, "&lt;script&gt;x") {
		t.Errorf("models page: outside text unescaped or missing\n%s", body)
	}
	var got []Model
	if resp, body := v.do("GET", "/api/models", ""); resp.StatusCode != 200 || json.Unmarshal([]byte(body), &got) != nil || len(got) != 2 || got[0].Calls != 3 {
		t.Errorf("/api/models: %d %s", resp.StatusCode, body)
	}
}

// Doctor's findings are on the overview, failures first, with their fix,
// escaped; /api/doctor has them too.
func TestOverviewDoctor(t *testing.T) {
	d := newDash(t, nil)
	v := d.pair("phone", Viewer)
	if _, body := v.do("GET", "/", ""); !strings.Contains(body, "checks are running") {
		t.Errorf("before the first findings:\n%s", body)
	}
	d.findings = []Finding{
		{What: "clock", Status: "ok", Info: "synchronized"},
		{What: "disk", Status: "warn", Info: "91% full", Fix: "free some space"},
		{What: "local model runner", Status: "fail", Info: "<not found>", Fix: "make runner"},
	}
	_, body := v.do("GET", "/", "")
	fail, warn, ok := strings.Index(body, `<li class="fail">`), strings.Index(body, `<li class="warn">`), strings.Index(body, `<li class="ok">`)
	if fail < 0 || warn < fail || ok < warn {
		t.Errorf("findings out of order (%d %d %d):\n%s", fail, warn, ok, body)
	}
	if !strings.Contains(body, "&lt;not found&gt;") || !strings.Contains(body, "fix: make runner") || strings.Contains(body, "<not found>") {
		t.Errorf("a failure's text or fix:\n%s", body)
	}
	var got []Finding
	if resp, body := v.do("GET", "/api/doctor", ""); resp.StatusCode != 200 || json.Unmarshal([]byte(body), &got) != nil || len(got) != 3 {
		t.Errorf("/api/doctor: %d %s", resp.StatusCode, body)
	}
}

// The approvals page answers without JavaScript too: a plain form with the
// CSRF token, an owner's browser only.
func TestApprovalsForm(t *testing.T) {
	pol := &policy.Policy{Default: policy.Allow, Owners: []string{"web:admin"},
		Users: map[string]map[string]policy.Action{"web:phone": {"gpio/toggle": policy.Ask}}}
	d := newDash(t, pol)
	op, owner := d.pair("phone", Operator), d.pair("admin", Owner)
	done := make(chan string)
	go func() {
		_, body := op.do("POST", "/api/call", `{"tool":"gpio/toggle","args":{"pin":"led"}}`)
		done <- body
	}()
	for deadline := time.Now().Add(30 * time.Second); len(d.auth.List()) == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no approval asked")
		}
	}
	id := d.auth.List()[0].ID
	if _, page := owner.do("GET", "/approvals", ""); !strings.Contains(page, `action="/approvals/`+id+`"`) || !strings.Contains(page, `name="csrf" value="`+owner.csrf+`"`) {
		t.Fatalf("the owner's approvals page has no form:\n%s", page)
	}
	if _, page := op.do("GET", "/approvals", ""); strings.Contains(page, `action="/approvals/`) {
		t.Error("an operator's approvals page has the form")
	}
	post := func(b *browser, values url.Values) int {
		req, _ := http.NewRequest("POST", d.http.URL+"/approvals/"+id, strings.NewReader(values.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.AddCookie(&http.Cookie{Name: cookieName, Value: b.cookie})
		c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if s := post(owner, url.Values{"approve": {"true"}}); s != http.StatusForbidden {
		t.Errorf("no token: %d", s)
	}
	if s := post(op, url.Values{"approve": {"true"}, "csrf": {op.csrf}}); s != http.StatusForbidden {
		t.Errorf("an operator: %d", s)
	}
	if s := post(owner, url.Values{"approve": {"yes"}, "csrf": {owner.csrf}}); s != http.StatusBadRequest {
		t.Errorf("a bad answer: %d", s)
	}
	if len(d.auth.List()) != 1 || d.level() != hal.Low {
		t.Fatal("a refused answer decided the request")
	}
	if s := post(owner, url.Values{"approve": {"true"}, "csrf": {owner.csrf}}); s != http.StatusSeeOther {
		t.Errorf("the owner approving: %d", s)
	}
	if body := <-done; !strings.Contains(body, "led") || d.level() != hal.High {
		t.Errorf("the approved toggle: %s, led %v", body, d.level())
	}
}
