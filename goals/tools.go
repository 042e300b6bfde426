package goals

// This file: the goal/* tools. Setting, listing, showing, cancelling and
// answering goals are tools like the GPIO ones, so a person types them on a
// console or in Telegram (`/goal TEXT` stands for goal/add), the model may
// propose them (goal/add is risky: a person approves it unless a rule names
// it), and the policy and the audit cover them.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/tools"
)

// Handle lets the tools be registered before the runtime exists.
type Handle struct{ tools.Late[Runtime] }

func (h *Handle) get() (*Runtime, error) {
	return h.Get("goals are pursued by the daemon (clawedge run); none runs in this process")
}

// RegisterTools adds goal/add, goal/list, goal/show, goal/cancel and
// goal/answer to reg.
func RegisterTools(reg *tools.Registry, h *Handle) error {
	return reg.Register(addTool{h}, listTool{h}, showTool{h}, cancelTool{h}, answerTool{h})
}

var idParam = grammar.ArgSpec{Name: "id", Doc: "the goal's id", Type: grammar.TypeString, Required: true, MaxLen: 32}

type addTool struct{ h *Handle }

func (addTool) Spec() grammar.ToolSpec {
	return grammar.ToolSpec{Name: "goal/add", Doc: "Set a goal the board pursues over time (a plan, steps, checks) until it is reached, its deadline passes or its budget ends.",
		Params: []grammar.ArgSpec{
			{Name: "objective", Doc: "what should be reached", Type: grammar.TypeString, Required: true, MaxLen: MaxObjective},
			{Name: "until", Doc: `the success check: a read and a condition, such as @gpio/read{pin="led"} is high, or ... above 24`, Type: grammar.TypeString, MaxLen: 300},
			{Name: "hold", Doc: `a check that must hold from now until the deadline, such as @sensor/read{name="greenhouse"} between 18 and 24 (instead of until)`, Type: grammar.TypeString, MaxLen: 300},
			{Name: "deadline", Doc: "how long it may be pursued (a duration such as 8h)", Type: grammar.TypeString, MaxLen: 16},
			{Name: "until_time", Doc: "when it ends, as a time: 07:00 (the next one), or 2026-06-01 07:00 (instead of deadline)", Type: grammar.TypeString, MaxLen: 32},
			{Name: "steps", Doc: "at most this many steps", Type: grammar.TypeInteger, Min: tools.Float(1), Max: tools.Float(MaxBudgetSteps)},
			{Name: "tokens", Doc: "at most this many model tokens", Type: grammar.TypeInteger, Min: tools.Float(1), Max: tools.Float(MaxBudgetTokens)},
			{Name: "approvals", Doc: "at most this many approvals asked", Type: grammar.TypeInteger, Min: tools.Float(1), Max: tools.Float(MaxBudgetApprovals)},
			{Name: "reads", Doc: "at most this many reads of its checks", Type: grammar.TypeInteger, Min: tools.Float(1), Max: tools.Float(MaxBudgetReads)},
		}}
}

func (t addTool) Run(ctx context.Context, a grammar.Args) (tools.Result, error) {
	return t.RunFor(ctx, tools.Caller{}, "", a)
}

// RunFor makes the caller the goal's owner, whose rights its steps have (or,
// for a goal set by an automation or another goal, their own creator).
func (t addTool) RunFor(_ context.Context, caller tools.Caller, _ string, a grammar.Args) (tools.Result, error) {
	r, err := t.h.get()
	if err != nil {
		return tools.Result{}, err
	}
	n := NewGoal{Objective: a.String("objective"), Owner: OwnerOf(caller)}
	if a.String("until") != "" && a.String("hold") != "" {
		return tools.Result{}, errors.New("until and hold: a goal has one check, reached once (until) or held until its deadline (hold)")
	}
	for _, key := range []string{"until", "hold"} {
		if s := a.String(key); s != "" {
			c, err := tools.ParseReadCheck(s)
			if err != nil {
				return tools.Result{}, fmt.Errorf("%s: %w", key, err)
			}
			n.Check, n.Hold = &c, key == "hold"
		}
	}
	if s := a.String("deadline"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			return tools.Result{}, fmt.Errorf("deadline: %q is not a duration such as 30m or 8h", s)
		}
		n.Deadline = d
	}
	if s := a.String("until_time"); s != "" {
		at, err := ParseUntilTime(s, r.opt.Now(), r.opt.Location)
		if err != nil {
			return tools.Result{}, fmt.Errorf("until_time: %w", err)
		}
		n.At = at
	}
	n.Budget = Budget{Steps: int(a.Int("steps")), Tokens: int(a.Int("tokens")), Approvals: int(a.Int("approvals")), Reads: int(a.Int("reads"))}
	g, err := r.Add(n)
	if err != nil {
		return tools.Result{}, err
	}
	text := fmt.Sprintf("goal %s set: %s", g.ID, g.Objective)
	switch {
	case g.Check != nil && g.Hold != nil:
		text += "; holds " + g.Check.String()
	case g.Check != nil:
		text += "; until " + g.Check.String()
	}
	if !g.Deadline.IsZero() {
		text += "; deadline " + g.Deadline.In(r.opt.Location).Format("2006-01-02 15:04")
	}
	return tools.Result{Text: text, Fields: map[string]grammar.Value{"id": grammar.StringValue(g.ID)}}, nil
}

// OwnerOf is the owner a goal set by caller gets: an automation's or a
// goal's own creator (they cannot pass on more than they have), else the
// caller.
func OwnerOf(caller tools.Caller) tools.Principal {
	p := tools.ActsAs(caller)
	if p.Actor == "" {
		p.Actor = tools.Program
	}
	return p
}

type listTool struct{ h *Handle }

func (listTool) ReadOnly() {}

func (listTool) Spec() grammar.ToolSpec {
	return grammar.ToolSpec{Name: "goal/list", Doc: "List the goals: id, state, objective, steps done, owner."}
}

func (t listTool) Run(context.Context, grammar.Args) (tools.Result, error) {
	r, err := t.h.get()
	if err != nil {
		return tools.Result{}, err
	}
	l := r.List()
	return tools.Result{Text: FormatList(l), Fields: map[string]grammar.Value{"count": grammar.IntValue(int64(len(l)))}}, nil
}

type showTool struct{ h *Handle }

func (showTool) ReadOnly() {}

func (showTool) Spec() grammar.ToolSpec {
	return grammar.ToolSpec{Name: "goal/show", Doc: "Show a goal: its plan with each step's state, its evaluations, the budget spent.", Params: []grammar.ArgSpec{idParam}}
}

func (t showTool) Run(_ context.Context, a grammar.Args) (tools.Result, error) {
	r, err := t.h.get()
	if err != nil {
		return tools.Result{}, err
	}
	g, err := r.Get(a.String("id"))
	if err != nil {
		return tools.Result{}, err
	}
	return tools.Result{Text: Show(g), Fields: map[string]grammar.Value{"state": grammar.StringValue(string(g.State))}}, nil
}

// managed is the runtime and the goal id names. Who may cancel or answer it
// is the authorizer's to decide (OwnerOf), before the call runs.
func (h *Handle) managed(id string) (*Runtime, Goal, error) {
	r, err := h.get()
	if err != nil {
		return nil, Goal{}, err
	}
	g, err := r.Get(id)
	if err != nil {
		return nil, Goal{}, err
	}
	return r, g, nil
}

// ownerOf is whose the goal args name is, for the authorizer (tools.Owned).
func (h *Handle) ownerOf(a grammar.Args) (tools.Principal, bool) {
	_, g, err := h.managed(a.String("id"))
	if err != nil {
		return tools.Principal{}, false
	}
	return g.Owner, true
}

type cancelTool struct{ h *Handle }

func (cancelTool) Spec() grammar.ToolSpec {
	return grammar.ToolSpec{Name: "goal/cancel", Doc: "Cancel a goal (and its sub-goals): nothing more of it runs.", Params: []grammar.ArgSpec{idParam}}
}

func (t cancelTool) Run(ctx context.Context, a grammar.Args) (tools.Result, error) {
	return t.RunFor(ctx, tools.Caller{}, "", a)
}

// OwnerOf: a goal is cancelled by its owner, an owner or a person at the board.
func (t cancelTool) OwnerOf(a grammar.Args) (tools.Principal, bool) { return t.h.ownerOf(a) }

func (t cancelTool) RunFor(_ context.Context, caller tools.Caller, _ string, a grammar.Args) (tools.Result, error) {
	r, g, err := t.h.managed(a.String("id"))
	if err != nil {
		return tools.Result{}, err
	}
	by := caller.User
	if by == "" {
		by = "this process"
	}
	if g, err = r.Cancel(g.ID, by); err != nil {
		return tools.Result{}, err
	}
	return tools.Result{Text: "cancelled goal " + g.ID, Fields: map[string]grammar.Value{"id": grammar.StringValue(g.ID)}}, nil
}

type answerTool struct{ h *Handle }

func (answerTool) Spec() grammar.ToolSpec {
	return grammar.ToolSpec{Name: "goal/answer", Doc: "Answer the question a goal asked its owner.",
		Params: []grammar.ArgSpec{idParam, {Name: "text", Doc: "the answer", Type: grammar.TypeString, Required: true, MaxLen: 500}}}
}

func (t answerTool) Run(ctx context.Context, a grammar.Args) (tools.Result, error) {
	return t.RunFor(ctx, tools.Caller{}, "", a)
}

// OwnerOf: a goal's question is answered by its owner, an owner or a person
// at the board.
func (t answerTool) OwnerOf(a grammar.Args) (tools.Principal, bool) { return t.h.ownerOf(a) }

func (t answerTool) RunFor(_ context.Context, caller tools.Caller, _ string, a grammar.Args) (tools.Result, error) {
	r, g, err := t.h.managed(a.String("id"))
	if err != nil {
		return tools.Result{}, err
	}
	if _, err := r.Answer(g.ID, a.String("text")); err != nil {
		return tools.Result{}, err
	}
	return tools.Result{Text: "answered goal " + g.ID}, nil
}
