package goals

// This file: what a goal and its steps are, and the states they move through.
// Every move is checked against the tables below and written to the store
// before whatever it announces happens (runtime.go), so that after a crash
// the record says exactly how far each step got.

import (
	"fmt"
	"strings"
	"time"

	"github.com/clawedge/clawedge/tools"
)

// State is a goal's state.
type State string

const (
	Active State = "active" // being pursued
	// Awaiting is a goal whose plan is over and whose check does not hold
	// yet, or a holding goal inside its band: it waits for the world,
	// judged at intervals and whenever what its check reads changes.
	Awaiting  State = "waiting"
	Done      State = "done"      // its check held, or the evaluator judged it reached
	Failed    State = "failed"    // it could not be planned, or every plan failed
	Stalled   State = "stalled"   // no progress after a re-plan: its owner was told
	Stopped   State = "stopped"   // its deadline passed or a budget ran out
	Cancelled State = "cancelled" // someone cancelled it
)

// Finished reports whether nothing more happens to a goal in state s.
func (s State) Finished() bool { return s != Active && s != Awaiting }

// StepState is a step's state: planned -> ready -> running -> waiting ->
// done | failed | blocked | cancelled.
type StepState string

const (
	Planned       StepState = "planned"   // in the plan; the steps before it are not done
	Ready         StepState = "ready"     // may start
	Running       StepState = "running"   // its call was handed to the call path
	Waiting       StepState = "waiting"   // for an approval, a time, a condition, an answer, a sub-goal
	StepDone      StepState = "done"      // its effect happened (or its wait ended as wanted)
	StepFailed    StepState = "failed"    // its call failed, its wait timed out, or a crash interrupted it
	Blocked       StepState = "blocked"   // the policy refused its call, or a person denied it
	StepCancelled StepState = "cancelled" // replaced by a new plan, or the goal ended
)

// Terminal reports whether a step in state s is over.
func (s StepState) Terminal() bool {
	return s == StepDone || s == StepFailed || s == Blocked || s == StepCancelled
}

// moves are the transitions a step may make. Running -> Waiting is a call
// waiting for a person's approval; Waiting -> Running is its decision.
// Ready -> Failed is a call that can no longer be prepared (its tool is
// gone); Waiting -> Ready is an approval lost to a restart, asked again (no
// intent was written while it waited, so nothing ran).
var moves = map[StepState][]StepState{
	Planned: {Ready, StepCancelled},
	Ready:   {Running, Waiting, StepFailed, StepCancelled},
	Running: {Waiting, StepDone, StepFailed, Blocked},
	Waiting: {Ready, Running, StepDone, StepFailed, Blocked, StepCancelled},
}

func canMove(from, to StepState) bool {
	for _, s := range moves[from] {
		if s == to {
			return true
		}
	}
	return false
}

// Kind is what a step does.
type Kind string

const (
	KindCall Kind = "call" // a tool call on the call path
	KindWait Kind = "wait" // a time, or a read until a condition holds (goal/wait, goal/until)
	KindAsk  Kind = "ask"  // a question to the owner (goal/ask)
	KindSub  Kind = "sub"  // a sub-goal (goal/sub)
)

// Step is one node of a plan.
type Step struct {
	ID      int       `json:"id"`
	Kind    Kind      `json:"kind"`
	Command string    `json:"command"`         // the step as the plan wrote it, in the command language
	After   []int     `json:"after,omitempty"` // the steps that must be done first
	State   StepState `json:"state"`
	// Waiting says for what: approval, time, condition, answer, subgoal.
	Waiting string `json:"waiting,omitempty"`
	Result  string `json:"result,omitempty"` // the outcome, or why it failed

	Seconds  int              `json:"seconds,omitempty"` // wait, until: how long at most
	Check    *tools.ReadCheck `json:"check,omitempty"`   // until: the read and its condition
	Question string           `json:"question,omitempty"`
	Answer   string           `json:"answer,omitempty"`
	Sub      string           `json:"sub,omitempty"` // sub: the objective
	Child    string           `json:"child,omitempty"`
	Ends     time.Time        `json:"ends,omitzero"` // a wait's end, kept so a resumed wait keeps it
	Started  time.Time        `json:"started,omitzero"`
	Ended    time.Time        `json:"ended,omitzero"`
	Moves    []StepMove       `json:"moves,omitempty"`
	Approval string           `json:"approval,omitempty"` // the id of the approval it waits for
	// Asked says an approval for it was counted: asked again (after a
	// restart), it is not counted again.
	Asked bool `json:"asked,omitempty"`
}

// StepMove is one recorded transition.
type StepMove struct {
	To StepState `json:"to"`
	At time.Time `json:"at"`
}

// Budget bounds what a goal tree may spend (a goal and its sub-goals, from
// one ledger: the root's Tree); 0 is no bound.
type Budget struct {
	Tokens    int           `json:"tokens,omitempty"`    // model tokens, planning and evaluating
	Steps     int           `json:"steps,omitempty"`     // call and sub-goal steps started
	Wall      time.Duration `json:"wall,omitempty"`      // time since the root was set
	Approvals int           `json:"approvals,omitempty"` // approval requests, one a step
	Reads     int           `json:"reads,omitempty"`     // the checks' reads (until, goal/until)
}

// The most a goal may set for itself (goal/add), far past any goal a board
// pursues: they bound a typo, not a plan.
const (
	MaxBudgetSteps     = 100000
	MaxBudgetTokens    = 100000000
	MaxBudgetApprovals = 10000
	MaxBudgetReads     = 10000000
)

// over is b with each bound it leaves at 0 taken from def.
func (b Budget) over(def Budget) Budget {
	pick := func(v, d int) int {
		if v != 0 {
			return v
		}
		return d
	}
	b.Tokens, b.Steps, b.Approvals = pick(b.Tokens, def.Tokens), pick(b.Steps, def.Steps), pick(b.Approvals, def.Approvals)
	b.Reads = pick(b.Reads, def.Reads)
	if b.Wall == 0 {
		b.Wall = def.Wall
	}
	return b
}

// Spent is what a goal (or, as a root's Tree, its whole tree) has used.
type Spent struct {
	Tokens    int `json:"tokens"`
	Steps     int `json:"steps"`
	Approvals int `json:"approvals"`
	Plans     int `json:"plans"`
	Reads     int `json:"reads"`
}

// Evaluation is one judgement of how near a goal is.
type Evaluation struct {
	At     time.Time `json:"at"`
	Score  float64   `json:"score"` // 0 nothing, 1 reached
	Reason string    `json:"reason"`
	By     string    `json:"by"` // "rule", or "model <name>"
}

// Goal is an objective pursued over time for its owner.
type Goal struct {
	ID        string           `json:"id"`
	Objective string           `json:"objective"`
	Owner     tools.Principal  `json:"owner"`
	Check     *tools.ReadCheck `json:"check,omitempty"` // the success rule; nil: the model judges
	Deadline  time.Time        `json:"deadline,omitzero"`
	// Budget is the tree's: a sub-goal shows its root's.
	Budget Budget `json:"budget"`
	// Spent is what this goal spent itself; Tree, a root's only, what it
	// and every sub-goal below it spent: the one ledger Budget bounds,
	// charged before what it pays for.
	Spent   Spent     `json:"spent"`
	Tree    *Spent    `json:"tree,omitempty"`
	State   State     `json:"state"`
	Reason  string    `json:"reason,omitempty"` // why it is in its state
	Parent  string    `json:"parent,omitempty"` // a sub-goal's parent
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
	Steps   []Step    `json:"steps"`
	// PlanFrom is the first step of the current plan: the steps before it
	// belong to plans already given up.
	PlanFrom int `json:"plan_from,omitempty"`
	// Evaluations are the newest maxEvaluations judgements.
	Evaluations []Evaluation `json:"evaluations,omitempty"`
	// Best is the best score so far; Progress when it last improved (or a
	// step finished).
	Best     float64   `json:"best"`
	Progress time.Time `json:"progress,omitzero"`
	// Flat counts evaluations since the last progress; Stalls counts stalls.
	Flat      int  `json:"flat"`
	Stalls    int  `json:"stalls"`
	Escalated bool `json:"escalated,omitempty"` // planning moved to the escalation model
	// NeedsOwner: it stalled past every re-plan and its owner was told; it
	// writes no more plans and waits for the world until its deadline.
	NeedsOwner bool `json:"needs_owner,omitempty"`

	// DeadlineAsSet is the deadline as it was given ("5m", "07:00"), for
	// the reason it ends with.
	DeadlineAsSet string `json:"deadline_as_set,omitempty"`
	// Reading is what its check read last.
	Reading *Reading `json:"reading,omitempty"`
	// Near is the smallest distance of the check's number to its threshold
	// since the current plan (or excursion) began: a judgement nearer than
	// it is progress.
	Near *float64 `json:"near,omitempty"`
	// Judged is when it was last judged after a step or at an interval
	// (judgements at a change of the reading come between them); Next is
	// when it is judged next at the latest.
	Judged time.Time `json:"judged,omitzero"`
	Next   time.Time `json:"next_judgement,omitzero"`
	// Watched says how its check is watched between judgements: "events"
	// (each change the daemon feeds) or "poll".
	Watched string `json:"watched,omitempty"`
	// WaitingSince is when it last began waiting (state waiting).
	WaitingSince time.Time `json:"waiting_since,omitzero"`
	// Planned is when its last plan was written: the next waits Poll.
	Planned time.Time `json:"planned,omitzero"`
	// Want is why a new plan is wanted (a stall, a step that failed), for
	// the next round that may write one.
	Want string `json:"want,omitempty"`
	// PlanText is the current plan as it was written, so that a holding
	// goal can run again the plan that brought it back.
	PlanText string `json:"plan_text,omitempty"`
	// Hold is a holding goal's record: its check must hold until its
	// deadline (nil: it is done when its check holds once).
	Hold *Hold `json:"hold,omitempty"`
}

// Reading is one read of a goal's check.
type Reading struct {
	At    time.Time `json:"at"`
	Value float64   `json:"value"`
	Holds bool      `json:"holds"`
	Err   string    `json:"error,omitempty"` // the read failed: why (Value means nothing)
}

const maxEvaluations = 20

// rootOf is the id of the root of goal id's tree: a sub-goal's id is its
// parent's, a dot, and its step ("3.2.1" is of 3).
func rootOf(id string) string {
	root, _, _ := strings.Cut(id, ".")
	return root
}

// depthOf is how far below its root goal id is (a root: 0).
func depthOf(id string) int { return strings.Count(id, ".") }

// step returns the step with id, or nil.
func (g *Goal) step(id int) *Step {
	for i := range g.Steps {
		if g.Steps[i].ID == id {
			return &g.Steps[i]
		}
	}
	return nil
}

// move moves step id to state to, or says why it may not.
func (g *Goal) move(id int, to StepState, at time.Time) error {
	s := g.step(id)
	if s == nil {
		return fmt.Errorf("goal %s: no step %d", g.ID, id)
	}
	if !canMove(s.State, to) {
		return fmt.Errorf("goal %s step %d: %s -> %s is not a transition a step makes", g.ID, id, s.State, to)
	}
	s.State = to
	s.Moves = append(s.Moves, StepMove{To: to, At: at})
	switch {
	case to == Running && s.Started.IsZero():
		s.Started = at
	case to.Terminal():
		s.Ended = at
	}
	if to != Waiting {
		s.Waiting = ""
	}
	return nil
}

// caller is who the goal's calls are made as: the goal itself, an actor that
// only its own rules hold (exec), and through Creator everything that holds
// its owner's model — a goal has its owner's rights and no more, and asks
// where its owner's rules say ask. User names the step, so the audit trail
// says which step of which goal made each call.
func (g *Goal) caller(step int) tools.Caller {
	owner := g.Owner
	if owner.Actor == tools.Person || owner.Actor == "" {
		owner.Actor = tools.Model // the plan is the model's, written for the person
	}
	who := "goal:" + g.ID
	if step > 0 {
		who += fmt.Sprintf(" step %d", step)
	}
	return tools.Caller{Channel: "goal", User: who, Actor: tools.Automation, Creator: &owner}
}
