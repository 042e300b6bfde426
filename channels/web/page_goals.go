package web

// The goals page (/goals): every goal with its owner, state and why, its
// deadline, what it spent of its budget, its plan step by step with each
// step's state and times, its evaluations and its check's last reading;
// a form to set a goal, and on each goal a button to cancel it and, while
// it asks, a field to answer. Each of those is a call of a goal/* tool by
// web:<name> on the one call path (goals/tools.go, the very tools the CLI
// and Telegram call), decided by the authorizer with the browser's role.
//
// Live: GET /api/goals/events sends an event "goals" (each goal's id, state
// and last change) at once and after every change the daemon's goal
// runtime reports; assets/goals.js then fetches this page again and swaps
// the goals whose last change differs, so the one renderer is this file's
// (every outside value escaped) and the page reads the same without
// JavaScript.

import (
	"fmt"
	"net/http"
	"strings"
	"time"
)

// GoalFacts is what the goals page reads of the daemon's goal runtime.
type GoalFacts interface {
	// Goals are every goal, oldest first.
	Goals() []Goal
	// Changed is closed at the next change of any goal: a watcher takes
	// it, reads Goals, and waits on it.
	Changed() <-chan struct{}
}

// Goal is one goal as the page shows it.
type Goal struct {
	ID        string    `json:"id"`
	Objective string    `json:"objective"`
	Owner     string    `json:"owner"`
	State     string    `json:"state"`            // active, waiting, done, failed, stalled, stopped, cancelled
	Reason    string    `json:"reason,omitempty"` // why it is in its state
	Finished  bool      `json:"finished"`
	Parent    string    `json:"parent,omitempty"`
	Deadline  time.Time `json:"deadline,omitzero"`
	// DeadlineAsSet is the deadline as it was given ("8h", "07:00").
	DeadlineAsSet string    `json:"deadline_as_set,omitempty"`
	Created       time.Time `json:"created"`
	Updated       time.Time `json:"updated"`
	// Check is its success check ("@gpio/read{pin=\"led\"} is high"), Hold
	// whether it must hold until the deadline rather than be reached once.
	Check   string       `json:"check,omitempty"`
	Hold    bool         `json:"hold,omitempty"`
	Reading *GoalReading `json:"reading,omitempty"`
	// Waiting says, in state waiting, since when and how it is watched.
	Waiting string      `json:"waiting,omitempty"`
	Spent   GoalSpent   `json:"spent"`
	Budget  GoalSpent   `json:"budget"` // 0: no bound
	Steps   []GoalStep  `json:"steps"`
	Evals   []GoalEval  `json:"evaluations,omitempty"`
	Asks    *GoalAsking `json:"asks,omitempty"` // the question it waits an answer to
}

// GoalReading is the last read of a goal's check.
type GoalReading struct {
	At    time.Time `json:"at"`
	Text  string    `json:"text"` // "the led reads high", or why the read failed
	Holds bool      `json:"holds"`
}

// GoalSpent is what a goal (with its sub-goals) spent, or its budget.
type GoalSpent struct {
	Plans     int `json:"plans"`
	Steps     int `json:"steps"`
	Tokens    int `json:"tokens"`
	Approvals int `json:"approvals"`
	Reads     int `json:"reads"`
}

// GoalStep is one step of a goal's plans.
type GoalStep struct {
	ID      int       `json:"id"`
	Kind    string    `json:"kind"`
	Command string    `json:"command"`
	State   string    `json:"state"`
	Waiting string    `json:"waiting,omitempty"` // what for: approval, time, condition, answer, subgoal
	Result  string    `json:"result,omitempty"`
	Started time.Time `json:"started,omitzero"`
	Ended   time.Time `json:"ended,omitzero"`
	// Old: a step of a plan given up (a new plan replaced it).
	Old bool `json:"old,omitempty"`
}

// GoalEval is one judgement of how near a goal is.
type GoalEval struct {
	At     time.Time `json:"at"`
	Score  float64   `json:"score"`
	By     string    `json:"by"`
	Reason string    `json:"reason"`
}

// GoalAsking is a question a goal asks its owner.
type GoalAsking struct {
	Step     int    `json:"step"`
	Question string `json:"question"`
}

func (s *Server) goalsRoutes() []route {
	return []route{
		{"GET /goals", read, s.guard(s.goalsPage, true)},
		{"POST /goals", call, s.guard(s.goalAddForm, true)},
		{"POST /goals/{id}/cancel", call, s.guard(s.goalCancelForm, true)},
		{"POST /goals/{id}/answer", call, s.guard(s.goalAnswerForm, true)},
		{"GET /api/goals", read, s.guard(s.apiGoals, true)},
		{"GET /api/goals/events", read, s.guard(s.apiGoalEvents, true)},
	}
}

func (s *Server) goals() []Goal {
	if s.Goals == nil {
		return []Goal{}
	}
	if g := s.Goals.Goals(); g != nil {
		return g
	}
	return []Goal{}
}

func (s *Server) apiGoals(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.goals())
}

// goalEventGap is the least time between two goals events of a stream.
const goalEventGap = 150 * time.Millisecond

// goalMark is what the live page compares: a goal's id, state and last change.
type goalMark struct {
	ID      string `json:"id"`
	State   string `json:"state"`
	Updated string `json:"updated"`
}

func marks(gs []Goal) []goalMark {
	out := make([]goalMark, len(gs))
	for i, g := range gs {
		out[i] = goalMark{g.ID, g.State, g.Updated.UTC().Format(time.RFC3339Nano)}
	}
	return out
}

// apiGoalEvents streams the goals' marks (event "goals") at once and after
// each change, until the browser leaves, the stream's life ends (the
// browser's EventSource connects again) or the session is revoked. It counts
// among the session's event streams (maxStreams).
func (s *Server) apiGoalEvents(w http.ResponseWriter, r *http.Request) {
	if s.Goals == nil {
		apiError(w, http.StatusNotFound, "no goals on this dashboard")
		return
	}
	events := s.openStream(w, r)
	if events == nil {
		return
	}
	defer events.close()
	check := time.NewTicker(time.Second)
	defer check.Stop()
	for {
		changed := s.Goals.Changed() // before reading: a change after it closes it
		if events.send("goals", marks(s.Goals.Goals())) != nil {
			return
		}
		for waiting := true; waiting; {
			select {
			case <-r.Context().Done():
				return
			case <-events.end.C:
				return
			case <-changed:
				waiting = false
				// A burst of moves (a plan written, its steps readied)
				// is one event: the page fetches once for them all.
				select {
				case <-r.Context().Done():
					return
				case <-time.After(goalEventGap):
				}
			case <-check.C:
				if events.revoked(s) {
					return // the stream ends with the session
				}
			}
		}
	}
}

// goalCall makes one goal/* call for the form's browser and answers with
// the goals page: back to it on success (303), else the page again with
// why, and the status that says who refused.
func (s *Server) goalCall(w http.ResponseWriter, r *http.Request, tool string, args map[string]any) {
	res := s.formCall(w, r, tool, args)
	if status := callStatus(res); status != http.StatusOK {
		writeHTML(w, status, s.goalsHTML(sessionOf(r), res.Text))
		return
	}
	http.Redirect(w, r, "/goals", http.StatusSeeOther)
}

// goalAddForm is goal/add: the objective (text), and when given the check
// (until) and the deadline (a duration), as the CLI's goal add takes them.
func (s *Server) goalAddForm(w http.ResponseWriter, r *http.Request) {
	args := map[string]any{"objective": r.PostFormValue("text")}
	if v := strings.TrimSpace(r.PostFormValue("until")); v != "" {
		args["until"] = v
	}
	if v := strings.TrimSpace(r.PostFormValue("deadline")); v != "" {
		args["deadline"] = v
	}
	s.goalCall(w, r, "goal/add", args)
}

func (s *Server) goalCancelForm(w http.ResponseWriter, r *http.Request) {
	s.goalCall(w, r, "goal/cancel", map[string]any{"id": r.PathValue("id")})
}

func (s *Server) goalAnswerForm(w http.ResponseWriter, r *http.Request) {
	s.goalCall(w, r, "goal/answer", map[string]any{"id": r.PathValue("id"), "text": r.PostFormValue("text")})
}

func (s *Server) goalsPage(w http.ResponseWriter, r *http.Request) {
	writeHTML(w, http.StatusOK, s.goalsHTML(sessionOf(r), ""))
}

// goalsHTML is the goals page, showing note (an error) when set.
func (s *Server) goalsHTML(se session, note string) string {
	var body htmlPage
	body.WriteString("<h1>Goals</h1>\n")
	if s.Goals == nil {
		body.WriteString("<p>Goals are not pursued on this board (the daemon's goals did not start).</p>\n")
	} else {
		s.goalsBody(&body, se)
	}
	var p htmlPage
	p.head("goals", se, note)
	p.WriteString(body.String())
	p.foot()
	return p.String()
}

func (s *Server) goalsBody(p *htmlPage, se session) {
	call := se.Role != Viewer
	if call {
		p.f(`<form id="goal-add" method="post" action="/goals" class="stack" aria-labelledby="goal-add-h"><h2 id="goal-add-h">Set a goal</h2>
<input type="hidden" name="csrf" value="%s">
<label>Objective <input name="text" maxlength="%d" required autocomplete="off" placeholder="keep the greenhouse between 18 and 24 °C"></label>
<label>Until (optional) <input name="until" maxlength="300" autocomplete="off" placeholder='@gpio/read{pin="led"} is high'></label>
<label>Deadline (optional) <input name="deadline" maxlength="16" autocomplete="off" placeholder="8h"></label>
<button>Set goal</button></form>
`, se.CSRF, 500)
	}
	gs := s.goals()
	p.WriteString(`<div id="goals">`)
	if len(gs) == 0 {
		p.WriteString(`<p id="no-goals">No goals yet.</p>`)
	}
	// Newest first: the one just set is at the top.
	for i := len(gs) - 1; i >= 0; i-- {
		goalSection(p, gs[i], se, call)
	}
	p.WriteString("</div>\n<script src=\"/static/goals.js\" defer></script>\n")
}

func goalSection(p *htmlPage, g Goal, se session, call bool) {
	id := "goal-" + strings.ReplaceAll(g.ID, ".", "-")
	p.f(`<section class="goal" id="%s" data-goal="%s" data-state="%s" data-updated="%s" aria-labelledby="%s-h">
<h2 id="%s-h">Goal %s: %s</h2>
<dl class="facts"><dt>Owner</dt><dd>%s</dd><dt>State</dt><dd class="state">%s`,
		id, g.ID, g.State, g.Updated.UTC().Format(time.RFC3339Nano), id, id, g.ID, g.Objective, g.Owner, g.State)
	if g.Reason != "" {
		p.f(` — %s`, g.Reason)
	}
	p.WriteString("</dd>")
	if g.Waiting != "" {
		p.f(`<dt>Waiting</dt><dd>%s</dd>`, g.Waiting)
	}
	if g.Parent != "" {
		p.f(`<dt>Sub-goal of</dt><dd>%s</dd>`, g.Parent)
	}
	if !g.Deadline.IsZero() {
		p.f(`<dt>Deadline</dt><dd>%s`, when(g.Deadline))
		if g.DeadlineAsSet != "" {
			p.f(` (%s)`, g.DeadlineAsSet)
		}
		p.WriteString("</dd>")
	}
	if g.Check != "" {
		verb := "until"
		if g.Hold {
			verb = "holds, until the deadline,"
		}
		p.f(`<dt>Check</dt><dd>%s <code>%s</code></dd>`, verb, g.Check)
	}
	if rd := g.Reading; rd != nil {
		holds := "does not hold"
		if rd.Holds {
			holds = "holds"
		}
		p.f(`<dt>Last reading</dt><dd class="reading">%s: %s (%s)</dd>`, when(rd.At), rd.Text, holds)
	}
	p.f(`<dt>Spent</dt><dd class="spent">%d plans, %s steps, %s model tokens, %s approvals, %s reads</dd></dl>`,
		g.Spent.Plans, ofBudget(g.Spent.Steps, g.Budget.Steps), ofBudget(g.Spent.Tokens, g.Budget.Tokens), ofBudget(g.Spent.Approvals, g.Budget.Approvals), ofBudget(g.Spent.Reads, g.Budget.Reads))
	p.f(`<h3>Plan</h3>`)
	if len(g.Steps) == 0 {
		p.WriteString(`<p class="steps-none">No plan yet.</p>`)
	} else {
		p.WriteString(`<ol class="steps">`)
		for _, st := range g.Steps {
			class := ""
			if st.Old {
				class = ` class="old"`
			}
			state := st.State
			if st.Waiting != "" {
				state += ": " + st.Waiting
			}
			p.f(`<li data-step="%d" data-state="%s"%s><span class="sstate">%s</span> <code>%s</code>`, st.ID, st.State, class, state, st.Command)
			if !st.Started.IsZero() || !st.Ended.IsZero() {
				p.WriteString(` <span class="times">`)
				if !st.Started.IsZero() {
					p.f(`started %s`, when(st.Started))
				}
				if !st.Ended.IsZero() {
					if !st.Started.IsZero() {
						p.WriteString(", ")
					}
					p.f(`ended %s`, when(st.Ended))
				}
				p.WriteString(`</span>`)
			}
			if st.Result != "" {
				p.f(` <span class="result">→ %s</span>`, st.Result)
			}
			p.WriteString("</li>")
		}
		p.WriteString("</ol>")
	}
	if len(g.Evals) > 0 {
		p.WriteString(`<h3>Evaluations</h3><ul class="evals">`)
		for _, e := range g.Evals {
			p.f(`<li>%s: %.0f%% by %s — %s</li>`, when(e.At), e.Score*100, e.By, e.Reason)
		}
		p.WriteString("</ul>")
	}
	if call && g.Asks != nil && !g.Finished {
		p.f(`<form method="post" action="/goals/%s/answer" class="answer"><input type="hidden" name="csrf" value="%s">
<label>Goal %s asks: %s <input name="text" maxlength="500" required autocomplete="off"></label> <button>Answer</button></form>`,
			g.ID, se.CSRF, g.ID, g.Asks.Question)
	}
	if call && !g.Finished {
		p.f(`<form method="post" action="/goals/%s/cancel" class="cancel"><input type="hidden" name="csrf" value="%s"><button aria-label="Cancel goal %s">Cancel goal</button></form>`,
			g.ID, se.CSRF, g.ID)
	}
	p.WriteString("</section>\n")
}

// ofBudget is "3 of 20", or "3" when there is no bound.
func ofBudget(n, bound int) string {
	if bound > 0 {
		return fmt.Sprintf("%d of %d", n, bound)
	}
	return fmt.Sprint(n)
}
