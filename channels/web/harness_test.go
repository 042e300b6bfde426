package web

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawedge/clawedge/automations"
	"github.com/clawedge/clawedge/channels"
	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/internal/rigtest"
	"github.com/clawedge/clawedge/memory"
	"github.com/clawedge/clawedge/policy"
	"github.com/clawedge/clawedge/store"
)

// dash is the door over a simulated board with the real GPIO tools, the
// real store, runner and authorizer, served on a loopback port.
type dash struct {
	t     testing.TB
	b     *hal.Board
	st    *store.Store
	auth  *policy.Authorizer
	srv   *Server
	http  *httptest.Server
	mu    sync.Mutex
	clock time.Time
	extra []Fact // more overview lines (an XSS probe)
	sched *automations.Scheduler
	// What the models page and the overview's doctor section show.
	models   []Model
	findings []Finding
	mem      *memory.Workspace // the memory/* tools' workspace
}

func newDash(t testing.TB, pol *policy.Policy) *dash {
	t.Helper()
	if pol == nil {
		pol = &policy.Policy{Default: policy.Allow}
	}
	rig := rigtest.New(t, rigtest.Options{Policy: pol, Pins: []hal.PinConfig{{Name: "led", GPIO: 17, Mode: hal.ModeOut}, {Name: "button", GPIO: 27, Mode: hal.ModeIn, Pull: hal.PullUp}}})
	b, st, reg := rig.Board, rig.Store, rig.Registry
	// One real automation, its auto/* tools on the same runner.
	sched, err := automations.New([]automations.Spec{{Name: "porch", Every: time.Hour, Do: `@gpio/read{pin="button"}`}}, automations.Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	var handle automations.Handle
	if err := automations.RegisterTools(reg, &handle); err != nil {
		t.Fatal(err)
	}
	handle.Set(sched)
	d := &dash{t: t, b: b, st: st, sched: sched, clock: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
	d.mem = pageTools(t, reg) // page_memory_test.go: the goal/* and memory/* tools the pages call
	d.auth = rig.Auth
	sess, err := OpenSessions(st, d.now)
	if err != nil {
		t.Fatal(err)
	}
	runner := rig.Runner
	d.srv = &Server{Runner: runner, Auth: d.auth, Sessions: sess, Facts: d,
		Chat: &channels.Dispatcher{Runner: runner, Approvals: d.auth}}
	d.http = httptest.NewServer(d.srv.Handler())
	t.Cleanup(d.http.Close)
	return d
}

func (d *dash) now() time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.clock
}

func (d *dash) advance(by time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.clock = d.clock.Add(by)
}

// Facts of the board, as the daemon gives them.
func (d *dash) Pins() []Pin {
	var out []Pin
	for _, p := range d.b.Pins() {
		l, err := p.Read()
		lv := 0
		if l == hal.High {
			lv = 1
		}
		if err != nil {
			lv = -1
		}
		out = append(out, Pin{Name: p.Name(), GPIO: p.GPIO(), Mode: string(p.Mode()), Level: lv, Output: p.Mode() == hal.ModeOut})
	}
	return out
}
func (d *dash) Overview() []Fact {
	return append([]Fact{{Label: "board", Value: d.b.Driver()}}, d.extra...)
}
func (d *dash) Automations() []Automation {
	var out []Automation
	for _, a := range d.sched.List() {
		out = append(out, Automation{Name: a.Name, Trigger: a.Trigger, Outcome: a.Outcome, Paused: a.Paused})
	}
	return out
}
func (d *dash) Models() []Model {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.models
}
func (d *dash) Doctor() []Finding {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.findings
}
func (d *dash) Audit(before uint64, n int) ([]store.AuditEntry, error) {
	return d.st.TailBefore(before, n)
}

// browser is one client: its cookie and CSRF token, and the headers it sends.
type browser struct {
	d      *dash
	cookie string
	csrf   string
	origin string // "" : none (a script)
	host   string // "" : the server's own
}

// pair issues a code as `clawedge web pair` does and redeems it.
func (d *dash) pair(name string, role Role) *browser {
	d.t.Helper()
	code, _, err := d.srv.Sessions.Pair(name, role)
	if err != nil {
		d.t.Fatal(err)
	}
	b := &browser{d: d}
	resp, body := b.do("POST", "/api/session", `{"code":"`+code+`"}`)
	if resp.StatusCode != 200 {
		d.t.Fatalf("pairing: %d %s", resp.StatusCode, body)
	}
	var rep sessionReply
	json.Unmarshal([]byte(body), &rep)
	for _, c := range resp.Cookies() {
		if c.Name == cookieName {
			b.cookie = c.Value
			if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode {
				d.t.Errorf("cookie %+v: want HttpOnly and SameSite=Strict", c)
			}
		}
	}
	if b.cookie == "" || rep.CSRF == "" {
		d.t.Fatalf("pairing gave no cookie or token: %s", body)
	}
	b.csrf = rep.CSRF
	return b
}

func (b *browser) do(method, path, body string) (*http.Response, string) {
	b.d.t.Helper()
	req, err := http.NewRequest(method, b.d.http.URL+path, strings.NewReader(body))
	if err != nil {
		b.d.t.Fatal(err)
	}
	if b.cookie != "" {
		req.AddCookie(&http.Cookie{Name: cookieName, Value: b.cookie})
	}
	if b.csrf != "" {
		req.Header.Set(csrfHeader, b.csrf)
	}
	if b.origin != "" {
		req.Header.Set("Origin", b.origin)
	}
	if b.host != "" {
		req.Host = b.host
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		b.d.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp, string(raw)
}

// level is the led's level on the board.
func (d *dash) level() hal.Level {
	p, _ := d.b.Pin("led")
	l, err := p.Read()
	if err != nil {
		d.t.Fatal(err)
	}
	return l
}

// audited is every audit entry, oldest first.
func (d *dash) audited() []store.AuditEntry {
	e, err := d.st.TailBefore(0, 1000)
	if err != nil {
		d.t.Fatal(err)
	}
	return e
}
