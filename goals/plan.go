package goals

// This file: plans. A plan is written in the command language: steps chained
// with "->" (each after the one before), parallel blocks "[a,b]" (steps that
// need only what came before the block), every step a call of a tool the
// owner's model may be offered or one of the step tools below. The model
// writes it under a constraint compiled from exactly those specs
// (grammar.FormCommand), so even a tiny local model writes only plans that
// ParsePlan accepts; whatever wrote it, ParsePlan checks it again.

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/tools"
)

// The step tools: not registered tools, only words of a plan.
const (
	toolWait  = "goal/wait"
	toolUntil = "goal/until"
	toolAsk   = "goal/ask"
	toolSub   = "goal/sub"
)

// MaxPlanSteps bounds a plan: a small board pursues small plans, and a plan
// is re-written when it no longer fits.
const MaxPlanSteps = 8

// maxDay is the longest single wait: a longer one is a goal of its own.
const maxDay = 86400

// maxReads bounds the read commands goal/until may name.
const maxReads = 32

// PlanTools are what a plan may use: the tools the owner's model may be
// offered (the registry's specs, the policy already applied), with the step
// tools added. Reads are the read commands goal/until may poll: every
// invocation of a read-only tool whose parameters are all choices (a pin's
// name), written out, so the constraint lists them and a plan cannot name a
// read that does not exist.
type PlanTools struct {
	Specs []grammar.ToolSpec
	Reads []string

	// subs bounds the sub-goals of a plan pursued at once (goal/sub steps
	// of one stage) when subsBound; subsWhy says what bounds them.
	subs      int
	subsBound bool
	subsWhy   string
}

// limitSubs lets a plan pursue at most n sub-goals at once, because of why;
// with n 0, goal/sub is not offered at all.
func (pt *PlanTools) limitSubs(n int, why string) {
	pt.subs, pt.subsBound, pt.subsWhy = n, true, why
	if n == 0 {
		pt.Specs = slices.DeleteFunc(pt.Specs, func(s grammar.ToolSpec) bool { return s.Name == toolSub })
	}
}

// NewPlanTools builds the plan's tools from the offered specs; readOnly says
// which of them only read.
func NewPlanTools(offered []grammar.ToolSpec, readOnly func(name string) bool) PlanTools {
	var pt PlanTools
	for _, s := range offered {
		if strings.HasPrefix(s.Name, "goal/") || strings.HasPrefix(s.Name, "auto/") {
			continue // a plan makes sub-goals with goal/sub, and does not leave work behind it
		}
		pt.Specs = append(pt.Specs, s)
		if readOnly != nil && readOnly(s.Name) {
			pt.Reads = append(pt.Reads, readCommands(s, maxReads-len(pt.Reads))...)
		}
	}
	one := 1.0
	day := float64(maxDay)
	seconds := grammar.ArgSpec{Name: "seconds", Doc: "how long to wait at most", Type: grammar.TypeInteger, Required: true, Min: &one, Max: &day}
	text := func(name, doc string) grammar.ArgSpec {
		return grammar.ArgSpec{Name: name, Doc: doc, Type: grammar.TypeString, Required: true, MaxLen: 200}
	}
	pt.Specs = append(pt.Specs,
		grammar.ToolSpec{Name: toolWait, Doc: "Wait this long.", Params: []grammar.ArgSpec{seconds}},
		grammar.ToolSpec{Name: toolAsk, Doc: "Ask the goal's owner a question and wait for the answer.", Params: []grammar.ArgSpec{text("question", "the question")}},
		grammar.ToolSpec{Name: toolSub, Doc: "Pursue a sub-goal and wait until it ends.", Params: []grammar.ArgSpec{text("objective", "what the sub-goal must reach")}},
	)
	if len(pt.Reads) > 0 {
		pt.Specs = append(pt.Specs, grammar.ToolSpec{Name: toolUntil,
			Doc: "Read again and again until the number read is as asked, for at most seconds.",
			Params: []grammar.ArgSpec{
				{Name: "read", Doc: "the read", Type: grammar.TypeString, Required: true, Enum: pt.Reads},
				{Name: "cond", Doc: "is_high, is_low, above or below", Type: grammar.TypeString, Required: true, Enum: []string{"is_high", "is_low", "above", "below"}},
				{Name: "value", Doc: "the number for above and below", Type: grammar.TypeNumber, Required: true},
				seconds,
			}})
	}
	return pt
}

// readCommands writes out the invocations of a read-only tool whose required
// parameters are all choices, at most max of them.
func readCommands(s grammar.ToolSpec, max int) []string {
	combos := [][]grammar.Param{nil}
	for _, p := range s.Params {
		if !p.Required {
			continue
		}
		if len(p.Enum) == 0 {
			return nil
		}
		var next [][]grammar.Param
		for _, c := range combos {
			for _, v := range p.Enum {
				next = append(next, append(slices.Clone(c), grammar.Param{Key: p.Name, Value: grammar.StringValue(v)}))
			}
		}
		combos = next
	}
	var out []string
	for _, c := range combos {
		if len(out) >= max {
			break
		}
		out = append(out, tools.CommandText(s.Name, c))
	}
	return out
}

// Constraint is what the model planning is held to.
func (pt PlanTools) Constraint() grammar.Spec {
	return grammar.Spec{Form: grammar.FormCommand, Mode: grammar.ModeCalls, Tools: pt.Specs, MaxCalls: MaxPlanSteps}
}

// ParsePlan reads a plan: the command language, at most MaxPlanSteps steps,
// each a call of one of pt's specs with valid literal arguments. Steps are
// numbered from first; a step comes after every step of the stage before
// it. Errors name the step and, for syntax, the line and column.
func ParsePlan(text string, pt PlanTools, first int) ([]Step, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil, errors.New("the plan is empty")
	}
	cmd, err := grammar.Parse(text, grammar.ParseOptions{})
	if err != nil {
		return nil, fmt.Errorf("the plan: %w", err)
	}
	n := 0
	for _, st := range cmd.Stages {
		n += len(st.Calls)
	}
	if n > MaxPlanSteps {
		return nil, fmt.Errorf("the plan has %d steps; at most %d", n, MaxPlanSteps)
	}
	var steps []Step
	var before []int
	id := first
	for _, st := range cmd.Stages {
		var these []int
		subs := 0
		for _, inv := range st.Calls {
			if inv.Tool() == toolSub && pt.subsBound {
				if subs++; subs > pt.subs {
					what := fmt.Sprintf("it would pursue %d sub-goals at once, and %d more may be: %s", subs, pt.subs, pt.subsWhy)
					if pt.subs == 0 {
						what = pt.subsWhy
					}
					return nil, fmt.Errorf("the plan's step %d (line %d, column %d): %s: %s", id-first+1, inv.Pos.Line, inv.Pos.Column, toolSub, what)
				}
			}
			s, err := planStep(inv, pt)
			if err != nil {
				return nil, fmt.Errorf("the plan's step %d (line %d, column %d): %w", id-first+1, inv.Pos.Line, inv.Pos.Column, err)
			}
			s.ID, s.After, s.State = id, slices.Clone(before), Planned
			steps = append(steps, s)
			these = append(these, id)
			id++
		}
		before = these
	}
	return steps, nil
}

// planStep checks one invocation and makes its step.
func planStep(inv grammar.Invoke, pt PlanTools) (Step, error) {
	i := slices.IndexFunc(pt.Specs, func(s grammar.ToolSpec) bool { return s.Name == inv.Tool() })
	if i < 0 {
		return Step{}, fmt.Errorf("%s is not a tool this goal may use", inv.Tool())
	}
	for _, p := range inv.Params {
		if p.Value.Kind == grammar.Ref || slices.ContainsFunc(p.Value.Items, func(v grammar.Value) bool { return v.Kind == grammar.Ref }) {
			return Step{}, fmt.Errorf("%s: %s: a plan holds values, not references", inv.Tool(), p.Key)
		}
	}
	a, err := pt.Specs[i].Validate(inv.Params)
	if err != nil {
		return Step{}, fmt.Errorf("%s: %w", inv.Tool(), err)
	}
	s := Step{Kind: KindCall, Command: tools.CommandText(inv.Tool(), inv.Params)}
	switch inv.Tool() {
	case toolWait:
		s.Kind, s.Seconds = KindWait, int(a.Int("seconds"))
	case toolUntil:
		v := a.Float("value")
		c := tools.ReadCheck{Read: a.String("read")}
		switch a.String("cond") {
		case "is_high":
			c.Is = "high"
		case "is_low":
			c.Is = "low"
		case "above":
			c.Above = &v
		case "below":
			c.Below = &v
		}
		s.Kind, s.Seconds, s.Check = KindWait, int(a.Int("seconds")), &c
	case toolAsk:
		s.Kind, s.Question = KindAsk, a.String("question")
	case toolSub:
		s.Kind, s.Sub = KindSub, a.String("objective")
	}
	return s, nil
}
