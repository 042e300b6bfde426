package goals

// This file: pursuing one goal. Each round: stop at the deadline or the end
// of a budget; plan when there is no plan left; start the next ready step or
// look at the waiting ones; judge after a step and at intervals; notice a
// stall. Every move is saved before what it announces happens.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/tools"
)

// pursue runs goal id until it finishes or ctx ends.
func (r *Runtime) pursue(ctx context.Context, id string) {
	evalDue := atStart // judge at once: a check that already holds needs no plan
	for ctx.Err() == nil {
		g, err := r.Get(id)
		if err != nil || g.State.Finished() {
			return
		}
		acted, err := r.round(ctx, &g, &evalDue)
		if err != nil && ctx.Err() == nil {
			r.opt.Log.Warn("goal: a round failed; trying again", "goal", id, "err", err)
		}
		if acted && err == nil {
			continue
		}
		r.mu.Lock()
		wake := r.wake[id]
		r.mu.Unlock()
		t := time.NewTimer(r.opt.Poll)
		select {
		case <-ctx.Done():
		case <-wake:
		case <-t.C:
		}
		t.Stop()
	}
}

// due says whether a goal is to be judged now, and why.
type due int

const (
	notDue    due = iota
	atStart       // the pursuit (re)started
	afterStep     // a step started or ended: only these judgements can find it stalled
)

// round does the next thing goal g needs; acted says something happened
// (the next round follows at once).
func (r *Runtime) round(ctx context.Context, g *Goal, evalDue *due) (acted bool, err error) {
	now := r.opt.Now()
	if why := r.outOfBudget(g, now); why != "" {
		_, err := r.finish(ctx, g.ID, Stopped, why)
		return true, err
	}
	if *evalDue != notDue || now.Sub(lastEval(g)) >= r.opt.EvaluateEvery {
		afterStep := *evalDue == afterStep
		*evalDue = notDue
		if fin, err := r.evaluate(ctx, g, afterStep); fin || err != nil {
			return fin, err
		}
		if g2, err := r.Get(g.ID); err == nil {
			*g = g2
		}
		if stalled, err := r.stall(ctx, g); stalled || err != nil {
			return stalled, err
		}
	}
	// A step that failed or was refused: the plan no longer holds.
	for _, s := range g.Steps {
		if s.ID >= g.PlanFrom && (s.State == StepFailed || s.State == Blocked) {
			if live(g) {
				if why := r.noStepsLeft(g); why != "" {
					// A new plan could start nothing: its waits go too.
					_, err := r.finish(ctx, g.ID, Stopped, why)
					return true, err
				}
				return true, r.replan(ctx, g, fmt.Sprintf("step %d (%s) %s: %s", s.ID, s.Command, s.State, oneLine(s.Result, 160)))
			}
		}
	}
	if !live(g) {
		why := ""
		switch {
		case strings.HasPrefix(g.Reason, "planning: "):
			// Said to the planner: a seeded model given the same prompt
			// would write the same plan again.
			why = "the last attempt to plan failed: " + strings.TrimPrefix(g.Reason, "planning: ")
		case len(g.Steps) > 0:
			why = "the last plan is over and the goal is not reached"
			if failed := lastFailed(g); failed != nil {
				why = fmt.Sprintf("step %d (%s) %s: %s", failed.ID, failed.Command, failed.State, oneLine(failed.Result, 160))
			}
		}
		if why := r.noStepsLeft(g); why != "" {
			_, err := r.finish(ctx, g.ID, Stopped, why)
			return true, err
		}
		return true, r.plan(ctx, g, why)
	}
	// Steps whose steps before are all done may start.
	for _, s := range g.Steps {
		if s.State == Planned && r.depsDone(g, s) {
			if err := r.update(g.ID, func(g *Goal) error { return g.move(s.ID, Ready, now) }); err != nil {
				return false, err
			}
			acted = true
		}
	}
	if acted {
		return true, nil
	}
	for _, s := range g.Steps {
		switch {
		case s.State == Ready:
			if why := r.stepsSpent(g, s); why != "" {
				_, err := r.finish(ctx, g.ID, Stopped, why)
				return true, err
			}
			*evalDue = afterStep
			return true, r.start(ctx, g, s)
		case s.State == Waiting:
			done, err := r.look(ctx, g, s)
			if done {
				*evalDue = afterStep
			}
			if done || err != nil {
				return done, err
			}
		}
	}
	return false, nil
}

// live reports whether g's plan still has steps to do.
func live(g *Goal) bool {
	for _, s := range g.Steps {
		if !s.State.Terminal() {
			return true
		}
	}
	return false
}

func lastFailed(g *Goal) *Step {
	for i := len(g.Steps) - 1; i >= 0; i-- {
		if s := &g.Steps[i]; s.ID >= g.PlanFrom && (s.State == StepFailed || s.State == Blocked) {
			return s
		}
		if g.Steps[i].State == StepDone {
			return nil
		}
	}
	return nil
}

func (r *Runtime) depsDone(g *Goal, s Step) bool {
	for _, d := range s.After {
		if p := g.step(d); p != nil && p.State != StepDone {
			return false
		}
	}
	return true
}

// lastEval is when g was last judged (when it was set, before any).
func lastEval(g *Goal) time.Time {
	if n := len(g.Evaluations); n > 0 {
		return g.Evaluations[n-1].At
	}
	return g.Created
}

// outOfBudget says why g must stop now, or "": its deadline, or a bound of
// its tree's budget spent (by it, its root or any sub-goal: one ledger).
func (r *Runtime) outOfBudget(g *Goal, now time.Time) string {
	if !g.Deadline.IsZero() && !now.Before(g.Deadline) {
		return "its deadline passed"
	}
	b, s := r.tree(g.ID)
	whose := "its"
	if g.Parent != "" {
		whose = "its tree's (goal " + rootOf(g.ID) + "'s)"
	}
	switch {
	case b.Tokens > 0 && s.Tokens >= b.Tokens:
		return fmt.Sprintf("%s token budget is spent (%d of %d)", whose, s.Tokens, b.Tokens)
	case b.Steps > 0 && s.Steps >= b.Steps && nextIsStart(g):
		return fmt.Sprintf("%s step budget is spent (%d of %d)", whose, s.Steps, b.Steps)
	case b.Approvals > 0 && s.Approvals > b.Approvals:
		return fmt.Sprintf("%s approval budget is spent (%d of %d)", whose, s.Approvals-1, b.Approvals)
	case b.Reads > 0 && s.Reads >= b.Reads:
		return fmt.Sprintf("%s read budget is spent (%d checks' reads of %d)", whose, s.Reads, b.Reads)
	}
	return ""
}

// stepsSpent says why g may not start step s: the tree's step budget is
// spent ("" when it may). Waits and questions cost no step.
func (r *Runtime) stepsSpent(g *Goal, s Step) string {
	if s.Kind != KindCall && s.Kind != KindSub || !s.Started.IsZero() {
		return ""
	}
	return r.noStepsLeft(g)
}

// noStepsLeft says why g's tree may start no more steps, or "".
func (r *Runtime) noStepsLeft(g *Goal) string {
	b, spent := r.tree(g.ID)
	if b.Steps == 0 || spent.Steps < b.Steps {
		return ""
	}
	whose := "its"
	if g.Parent != "" {
		whose = "its tree's (goal " + rootOf(g.ID) + "'s)"
	}
	return fmt.Sprintf("%s step budget is spent (%d of %d)", whose, spent.Steps, b.Steps)
}

// nextIsStart reports whether g's next move would start a step (or write a
// plan to start one): waits already running may still end.
func nextIsStart(g *Goal) bool {
	for _, s := range g.Steps {
		if s.State == Waiting || s.State == Running {
			return false
		}
	}
	return true
}

// replan cancels what is left of g's plan and writes a new one.
func (r *Runtime) replan(ctx context.Context, g *Goal, why string) error {
	now := r.opt.Now()
	err := r.update(g.ID, func(g *Goal) error {
		for i := range g.Steps {
			s := &g.Steps[i]
			if s.State == Planned || s.State == Ready || s.State == Waiting && s.Waiting != "approval" {
				g.move(s.ID, StepCancelled, now)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if g2, err := r.Get(g.ID); err == nil {
		*g = g2
	}
	// The sub-goals of the steps given up served them: they end too.
	for _, s := range g.Steps {
		if s.Kind == KindSub && s.State == StepCancelled && s.Child != "" {
			if c, err := r.Get(s.Child); err == nil && !c.State.Finished() {
				r.finish(ctx, c.ID, Cancelled, fmt.Sprintf("its parent goal %s plans again: %s", g.ID, why))
			}
		}
	}
	return r.plan(ctx, g, why)
}

// plan asks the model for a plan and adds its steps to g.
func (r *Runtime) plan(ctx context.Context, g *Goal, why string) error {
	if g.Spent.Plans >= r.opt.MaxPlans {
		why := fmt.Sprintf("no plan reached it after %d plans", g.Spent.Plans)
		if last, ok := strings.CutPrefix(g.Reason, "planning: "); ok {
			why += "; the last: " + last
		}
		_, err := r.finish(ctx, g.ID, Failed, why)
		return err
	}
	model := r.opt.Model
	if g.Escalated && r.opt.Escalation != nil {
		model = r.opt.Escalation
	}
	if model == nil {
		_, err := r.finish(ctx, g.ID, Failed, "there is no model to write a plan (configure models.local or models.remote)")
		return err
	}
	pt := r.planTools(g)
	text, tokens, err := ask(ctx, model, planSystem, planPrompt(g, pt, why), pt.Constraint(), 600)
	next := 1
	if n := len(g.Steps); n > 0 {
		next = g.Steps[n-1].ID + 1
	}
	var unreadable *unreadableReply
	if err != nil && !errors.As(err, &unreadable) {
		// The model could not be reached: not a plan it wrote, so not
		// one of MaxPlans; the next round tries again.
		r.update(g.ID, func(g *Goal) error {
			if !g.State.Finished() { // cancelled meanwhile: its reason stays
				g.Reason = "planning: " + oneLine(err.Error(), 300)
			}
			return nil
		})
		return fmt.Errorf("planning: %w", err)
	}
	var steps []Step
	if err == nil {
		steps, err = ParsePlan(text, pt, next)
	}
	uerr := r.updateTree(g.ID, func(g *Goal, tree *Spent, _ Budget) error {
		g.Spent.Plans++
		g.Spent.Tokens += tokens
		tree.Plans++
		tree.Tokens += tokens
		if g.State.Finished() {
			return nil // cancelled while the model wrote: the plan is not taken
		}
		if err != nil {
			g.Reason = "planning: " + oneLine(err.Error(), 300)
			return nil
		}
		g.Reason = ""
		g.Steps = append(g.Steps, steps...)
		g.PlanFrom = next
		return nil
	})
	if uerr != nil {
		return uerr
	}
	if err != nil {
		return fmt.Errorf("planning: %w", err)
	}
	return nil
}

// planTools are the tools g's owner's model may be offered, as a plan's,
// with the bounds on its sub-goals: none below MaxDepth, and no more at
// once than its owner's and the board's goals alive leave room for.
func (r *Runtime) planTools(g *Goal) PlanTools {
	reg := r.opt.Runner.Registry
	specs := reg.Specs()
	if r.opt.Offered != nil {
		caller := g.caller(0)
		specs = slices.DeleteFunc(specs, func(s grammar.ToolSpec) bool { return !r.opt.Offered(caller, s.Name) })
	}
	pt := NewPlanTools(specs, func(name string) bool {
		t, err := reg.Lookup(name)
		return err == nil && tools.WithoutEffects(t)
	})
	if d := depthOf(g.ID); d >= r.opt.MaxDepth {
		pt.limitSubs(0, fmt.Sprintf("goal %s is %d below its root, and sub-goals go at most %d deep (goals.max_depth): no sub-goals", g.ID, d, r.opt.MaxDepth))
		return pt
	}
	r.mu.Lock()
	mine, all := r.aliveLocked(g.Owner)
	r.mu.Unlock()
	room, why := r.opt.MaxAlivePerOwner-mine, fmt.Sprintf("%s has %d goals being pursued, at most %d (goals.max_alive_per_owner)", tools.UserID(g.Owner.User), mine, r.opt.MaxAlivePerOwner)
	if left := r.opt.MaxAlive - all; left < room {
		room, why = left, fmt.Sprintf("%d goals are being pursued on this board, at most %d (goals.max_alive)", all, r.opt.MaxAlive)
	}
	pt.limitSubs(max(room, 0), why)
	return pt
}
