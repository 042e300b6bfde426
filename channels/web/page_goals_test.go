package web

import (
	"bufio"
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawedge/clawedge/tools"
)

// fakeGoals is a goal runtime's facts, changed by the test.
type fakeGoals struct {
	mu      sync.Mutex
	gs      []Goal
	changed chan struct{}
}

func newFakeGoals(gs ...Goal) *fakeGoals { return &fakeGoals{gs: gs, changed: make(chan struct{})} }

func (f *fakeGoals) Goals() []Goal {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Goal(nil), f.gs...)
}

func (f *fakeGoals) Changed() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.changed
}

func (f *fakeGoals) set(gs ...Goal) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gs = gs
	close(f.changed)
	f.changed = make(chan struct{})
}

func waitingGoal() Goal {
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	return Goal{ID: "3", Objective: `open the <b>gate</b>`, Owner: "telegram:42", State: "waiting",
		Reason: "the plan is over; the door reads low, not yet is high", Waiting: "since 2026-05-01 12:00:00; judged next by 2026-05-01 12:05:00",
		Check: `@gpio/read{pin="door"} is high`, Reading: &GoalReading{At: at, Text: "low"}, Deadline: at.Add(time.Hour), DeadlineAsSet: "1h",
		Created: at, Updated: at, Spent: GoalSpent{Plans: 1, Steps: 2, Tokens: 812}, Budget: GoalSpent{Steps: 20, Tokens: 20000},
		Steps: []GoalStep{
			{ID: 1, Kind: "call", Command: `@gpio/write{pin="gate";value=1}`, State: "done", Result: "gate = 1", Started: at, Ended: at.Add(time.Second)},
			{ID: 2, Kind: "ask", Command: `@goal/ask{question="which gate?"}`, State: "waiting", Waiting: "answer"},
		},
		Evals: []GoalEval{{At: at, Score: 0.4, By: "rule", Reason: "the door reads low"}},
		Asks:  &GoalAsking{Step: 2, Question: "which gate?"}}
}

// TestGoalsPage: the page shows a goal's owner, state and why, deadline,
// spending against its budget, steps with states and times, evaluations and
// the last reading, every value escaped; an operator gets the forms (set,
// answer, cancel), a viewer none; each form is the goal/* call by
// web:<name>, refused for a viewer by the authorizer and audited.
func TestGoalsPage(t *testing.T) {
	d := newDash(t, nil)
	d.srv.Goals = newFakeGoals(waitingGoal())
	phone, wall := d.pair("phone", Operator), d.pair("wall", Viewer)
	_, page := phone.do("GET", "/goals", "")
	for _, want := range []string{
		`<h2 id="goal-3-h">Goal 3: open the &lt;b&gt;gate&lt;/b&gt;</h2>`,
		`<dd class="state">waiting — the plan is over; the door reads low, not yet is high</dd>`,
		`<dt>Owner</dt><dd>telegram:42</dd>`, "(1h)", "judged next by",
		`<dd class="spent">1 plans, 2 of 20 steps, 812 of 20000 model tokens, 0 approvals, 0 reads</dd>`,
		`<li data-step="1" data-state="done"><span class="sstate">done</span> <code>@gpio/write{pin=&#34;gate&#34;;value=1}</code> <span class="times">started `,
		`<li data-step="2" data-state="waiting"><span class="sstate">waiting: answer</span>`,
		`40% by rule — the door reads low`, `<dd class="reading">`, `low (does not hold)`,
		`action="/goals/3/answer"`, `Goal 3 asks: which gate?`, `action="/goals/3/cancel"`, `id="goal-add"`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the goals page lacks %s\n%s", want, page)
		}
	}
	if strings.Contains(page, "<b>gate") {
		t.Error("the objective is not escaped")
	}
	if _, page := wall.do("GET", "/goals", ""); strings.Contains(page, `method="post"`) || !strings.Contains(page, "Goal 3") {
		t.Errorf("a viewer's page:\n%s", page)
	}
	// The forms are calls: here the tools have no runtime (the daemon's
	// test has one), so a call the authorizer lets through fails there.
	for _, c := range []struct {
		b          *browser
		path       string
		v          url.Values
		status     int
		who, cmd   string
		refusedFor string
	}{
		{wall, "/goals/3/cancel", url.Values{}, 403, "web:wall", `@goal/cancel{id="3"}`, "viewer"},
		{wall, "/goals", url.Values{"text": {"open it"}}, 403, "web:wall", `@goal/add{objective="open it"}`, "viewer"},
		{wall, "/goals/3/answer", url.Values{"text": {"the north one"}}, 403, "web:wall", `@goal/answer{id="3";text="the north one"}`, "viewer"},
		{phone, "/goals", url.Values{"text": {"open it"}, "until": {`@gpio/read{pin="led"} is high`}, "deadline": {"2h"}}, 422, "web:phone",
			`@goal/add{deadline="2h";objective="open it";until="@gpio/read{pin=\"led\"} is high"}`, ""},
	} {
		st, body := c.b.form(c.path, c.v)
		who, cmd, detail, ok := d.newestEntry()
		if st != c.status || who != c.who || cmd != c.cmd || ok {
			t.Errorf("%s by %s: %d, audited %s %s %q %v\n%.300s", c.path, c.who, st, who, cmd, detail, ok, body)
		}
		if c.refusedFor != "" && !strings.Contains(detail, c.refusedFor) {
			t.Errorf("%s by %s: refused for %q", c.path, c.who, detail)
		}
	}
}

// TestGoalEvents: the stream sends the goals' marks at once, and again at
// each change the runtime reports, with no polling between.
func TestGoalEvents(t *testing.T) {
	d := newDash(t, nil)
	f := newFakeGoals(waitingGoal())
	d.srv.Goals = f
	phone := d.pair("phone", Viewer)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", d.http.URL+"/api/goals/events", nil)
	req.AddCookie(&http.Cookie{Name: cookieName, Value: phone.cookie})
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	lines := bufio.NewScanner(resp.Body)
	next := func() string {
		t.Helper()
		for lines.Scan() {
			if data, ok := strings.CutPrefix(lines.Text(), "data: "); ok {
				return data
			}
		}
		t.Fatalf("the stream ended: %v", lines.Err())
		return ""
	}
	if first := next(); first != `[{"id":"3","state":"waiting","updated":"2026-05-01T12:00:00Z"}]` {
		t.Errorf("first event: %s", first)
	}
	g := waitingGoal()
	g.State, g.Updated = "done", g.Updated.Add(time.Minute)
	f.set(g)
	if second := next(); second != `[{"id":"3","state":"done","updated":"2026-05-01T12:01:00Z"}]` {
		t.Errorf("after the change: %s", second)
	}
	// Revoked, the browser's stream ends (within the second the stream
	// checks its session).
	if _, err := d.srv.Sessions.Revoke("phone"); err != nil {
		t.Fatal(err)
	}
	for lines.Scan() {
	}
	if ctx.Err() != nil {
		t.Fatal("the stream outlived the session")
	}
	phone = d.pair("phone", Viewer)
	// Without goals the stream is refused at once (not held open).
	d.srv.Goals = nil
	if resp, body := phone.do("GET", "/api/goals/events", ""); resp.StatusCode != 404 {
		t.Errorf("no goals: %d %s", resp.StatusCode, body)
	}
}

// FuzzGoalAndMemoryPages: whatever a goal's or an entry's text holds (an
// objective, a step's command and result, a question, a reason; a fact, an
// author, tags, a search), the pages carry it escaped and nothing else
// changes: the page is the one with a placeholder, the text escaped in its
// place.
func FuzzGoalAndMemoryPages(f *testing.F) {
	f.Add(`<script>alert(1)</script>`)
	f.Add(`"><img src=x onerror=alert(1)>`)
	f.Add("a & b ' \" \x00 \u2028 </section>")
	render := func(s string) string {
		g := waitingGoal()
		g.Objective, g.Owner, g.Reason, g.Check, g.Waiting = s, s, s, s, s
		g.Steps[0].Command, g.Steps[0].Result, g.Steps[1].Waiting = s, s, s
		g.Asks.Question, g.Evals[0].Reason, g.Evals[0].By = s, s, s
		var p htmlPage
		goalSection(&p, g, session{CSRF: "t"}, true)
		srv := &Server{Memory: fixedMemory{MemoryEntry{ID: 1, Author: s, Text: s, Tags: []string{s}}}}
		srv.memoryBody(&p, session{CSRF: "t", Device: Device{Role: Owner}}, s)
		return p.String()
	}
	const mark = "\x01mark\x01"
	template := render(mark)
	f.Fuzz(func(t *testing.T, s string) {
		if strings.TrimSpace(s) == "" || len(s) > memoryQueryMax {
			return // an empty text leaves its line out, a longer search is refused: other pages
		}
		if got, want := render(s), strings.ReplaceAll(template, mark, esc(s)); got != want {
			t.Fatalf("%q is not only escaped text on the page:\n%s", s, got)
		}
	})
}

// fixedMemory is a workspace's facts that are always the same entry.
type fixedMemory struct{ e MemoryEntry }

func (m fixedMemory) Entries(tools.Caller) ([]MemoryEntry, error) { return []MemoryEntry{m.e}, nil }
func (m fixedMemory) Search(tools.Caller, string, int) ([]MemoryEntry, error) {
	return []MemoryEntry{m.e}, nil
}
func (m fixedMemory) Persona() (string, string, error) { return "You are terse.", "", nil }
