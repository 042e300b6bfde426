package goals

// This file: doing one step. A call goes to the one call path
// (tools.Runner.Call) as the goal, for its owner: the authorizer decides,
// asks when the owner's rules say ask (the step waits for the approval), and
// the audit has the intent before the effect. The step is saved as running
// before the call is handed over, so a crash leaves it running and the
// restart fails it rather than repeating it.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/tools"
)

// start starts step s of g.
func (r *Runtime) start(ctx context.Context, g *Goal, s Step) error {
	now := r.opt.Now()
	switch s.Kind {
	case KindWait:
		return r.update(g.ID, func(g *Goal) error {
			st := g.step(s.ID)
			if err := g.move(s.ID, Waiting, now); err != nil {
				return err
			}
			st.Waiting, st.Ends = "time", now.Add(time.Duration(s.Seconds)*time.Second)
			if s.Check != nil {
				st.Waiting = "condition"
			}
			return nil
		})
	case KindAsk:
		err := r.update(g.ID, func(g *Goal) error {
			if err := g.move(s.ID, Waiting, now); err != nil {
				return err
			}
			g.step(s.ID).Waiting = "answer"
			return nil
		})
		if err == nil {
			example := tools.CommandText("goal/answer", []grammar.Param{
				{Key: "id", Value: grammar.StringValue(g.ID)}, {Key: "text", Value: grammar.StringValue("...")}})
			r.tell(ctx, *g, fmt.Sprintf("goal %s asks: %s\n(answer with: /goal answer %s TEXT, or %s)", g.ID, s.Question, g.ID, example))
		}
		return err
	case KindSub:
		child := fmt.Sprintf("%s.%d", g.ID, s.ID)
		err := r.updateTree(g.ID, func(g *Goal, tree *Spent, _ Budget) error {
			if err := g.move(s.ID, Waiting, now); err != nil {
				return err
			}
			st := g.step(s.ID)
			st.Waiting, st.Child = "subgoal", child
			// A sub-goal is a step started: the costliest, its plans
			// spend from the same tree.
			g.Spent.Steps++
			tree.Steps++
			return nil
		})
		if err != nil {
			return err
		}
		// The child's id is fixed by the step, so a restart between the
		// two writes makes it then (look), never a second one.
		return r.sub(g, s.ID, s.Sub, child)
	}
	return r.call(ctx, g, s)
}

// call runs a call step.
func (r *Runtime) call(ctx context.Context, g *Goal, s Step) error {
	now := r.opt.Now()
	var call tools.Call
	cmd, err := grammar.Parse(s.Command, grammar.ParseOptions{})
	if err == nil && (len(cmd.Stages) != 1 || len(cmd.Stages[0].Calls) != 1) {
		err = errors.New("a step is one invocation")
	}
	if err == nil {
		call, err = r.opt.Runner.PrepareInvoke(cmd.Stages[0].Calls[0])
	}
	if err != nil {
		return r.update(g.ID, func(g *Goal) error {
			g.step(s.ID).Result = err.Error()
			return g.move(s.ID, StepFailed, now)
		})
	}
	// Intent before effect: the step is durably running before the call
	// path writes the call's own intent.
	err = r.updateTree(g.ID, func(g *Goal, tree *Spent, _ Budget) error {
		if g.State.Finished() {
			return fmt.Errorf("goal %s is %s", g.ID, g.State)
		}
		if g.step(s.ID).Started.IsZero() { // asked again after a restart: counted once
			g.Spent.Steps++
			tree.Steps++
		}
		return g.move(s.ID, Running, now)
	})
	if err != nil {
		return err
	}
	caller := g.caller(s.ID)
	caller.Asking = &asking{r: r, goal: g.ID, step: s.ID, ctx: ctx}
	rep := r.opt.Runner.Call(ctx, caller, call)
	to, result := StepDone, rep.Result.Text
	var refusal *tools.Refusal
	switch {
	case errors.As(rep.Err, &refusal):
		to, result = Blocked, rep.Err.Error()
	case rep.Err != nil:
		to, result = StepFailed, rep.Err.Error()
	}
	// The daemon stopping while the call waited for a person: no intent was
	// written, so the step waits again and is asked again at the next start.
	stopping := refusal != nil && refusal.Why == tools.Cancelled && ctx.Err() != nil
	return r.update(g.ID, func(g *Goal) error {
		st := g.step(s.ID)
		if st.State.Terminal() { // cancelled while it ran
			st.Result = result
			return nil
		}
		if stopping && !g.State.Finished() {
			if st.State == Running {
				g.move(s.ID, Waiting, r.opt.Now())
			}
			st.Waiting = "approval"
			return nil
		}
		st.Result = result
		if st.State == Waiting { // the approval's wait ended without Decided
			g.move(s.ID, Running, r.opt.Now())
		}
		if to == StepDone {
			g.Progress, g.Flat = r.opt.Now(), 0 // an effect happened
		}
		return g.move(s.ID, to, r.opt.Now())
	})
}

// look checks waiting step s of g; done says it moved.
func (r *Runtime) look(ctx context.Context, g *Goal, s Step) (bool, error) {
	now := r.opt.Now()
	switch s.Waiting {
	case "time", "condition":
		result, to := "", StepState("")
		if s.Check != nil {
			holds, v, err := r.read(ctx, g, s.ID, *s.Check)
			var refused *refusedRead
			switch {
			case errors.Is(err, errReadsSpent):
				return false, nil // the next round stops the goal
			case errors.As(err, &refused):
				// Refused now, refused at every poll: the plan is told.
				return true, r.update(g.ID, func(g *Goal) error {
					g.step(s.ID).Result = "the read was refused: " + err.Error()
					return g.move(s.ID, StepFailed, now)
				})
			case err != nil:
				result = "read failed: " + err.Error()
			case holds:
				result, to = fmt.Sprintf("%s: read %s", s.Check, grammar.FormatNumber(v)), StepDone
			default:
				result = fmt.Sprintf("read %s, not %s yet", grammar.FormatNumber(v), s.Check.Condition)
			}
		}
		if to == "" && !now.Before(s.Ends) {
			if s.Check == nil {
				result, to = fmt.Sprintf("waited %ds", s.Seconds), StepDone
			} else {
				result, to = fmt.Sprintf("not %s within %ds; last: %s", s.Check.Condition, s.Seconds, result), StepFailed
			}
		}
		if to == "" {
			return false, nil
		}
		return true, r.update(g.ID, func(g *Goal) error {
			g.step(s.ID).Result = result
			return g.move(s.ID, to, now)
		})
	case "subgoal":
		c, err := r.Get(s.Child)
		if err != nil {
			// A crash between the step's move and the sub-goal's record:
			// make it now, under the id the step holds.
			return false, r.sub(g, s.ID, s.Sub, s.Child)
		}
		if !c.State.Finished() {
			return false, nil
		}
		to := StepFailed
		if c.State == Done {
			to = StepDone
		}
		return true, r.update(g.ID, func(g *Goal) error {
			g.step(s.ID).Result = fmt.Sprintf("sub-goal %s %s: %s", c.ID, c.State, oneLine(c.Reason, 160))
			return g.move(s.ID, to, now)
		})
	}
	return false, nil // an answer, or an approval: someone else moves it
}

// sub makes step's sub-goal child of g; one its bounds refuse fails the
// step, saying why (the plan is written again, told so).
func (r *Runtime) sub(g *Goal, step int, objective, child string) error {
	_, err := r.add(NewGoal{Objective: objective, Owner: g.Owner}, child, g.ID)
	var bound *BoundError
	if !errors.As(err, &bound) {
		return err
	}
	return r.update(g.ID, func(g *Goal) error {
		st := g.step(step)
		if st == nil || st.State.Terminal() {
			return nil
		}
		st.Result = "no sub-goal: " + bound.Why
		return g.move(step, StepFailed, r.opt.Now())
	})
}

// errReadsSpent is a check's read not made: the tree's read budget is spent.
var errReadsSpent = errors.New("the read budget is spent")

// read makes one read of a check for g (its own check, step 0, or a
// goal/until step's) on the call path: only a read (readable), charged to
// the tree's reads before it is made, and never waiting for a person. A read
// refused (not a read, denied, or one its owner's policy asks about) is a
// *refusedRead: it would be refused again at every evaluation.
func (r *Runtime) read(ctx context.Context, g *Goal, step int, c tools.ReadCheck) (bool, float64, error) {
	if err := r.readable(c.Read); err != nil {
		return false, 0, &refusedRead{err}
	}
	err := r.updateTree(g.ID, func(g *Goal, tree *Spent, b Budget) error {
		if b.Reads > 0 && tree.Reads >= b.Reads {
			return errReadsSpent
		}
		g.Spent.Reads++
		tree.Reads++
		return nil
	})
	if err != nil {
		return false, 0, err
	}
	caller := g.caller(step)
	ca := &checkAsking{}
	caller.Asking = ca
	holds, v, err := r.opt.Runner.Check(ctx, caller, c)
	var refusal *tools.Refusal
	switch {
	case ca.asked != "":
		return false, 0, &refusedRead{fmt.Errorf("its owner's policy asks before %s, and a goal's check is read without asking (it is read at every evaluation): allow that read for them, or choose a check that needs no approval", ca.asked)}
	case errors.As(err, &refusal) && ctx.Err() == nil:
		return false, 0, &refusedRead{err}
	}
	return holds, v, err
}

// refusedRead is a check's read refused.
type refusedRead struct{ err error }

func (e *refusedRead) Error() string { return e.err.Error() }
func (e *refusedRead) Unwrap() error { return e.err }

// checkAsking refuses to wait: a check is made at every evaluation or poll,
// and a person asked each time (again after every timeout) is no check.
type checkAsking struct{ asked string }

func (a *checkAsking) Waiting(req tools.ApprovalRequest) error {
	a.asked = toolOf(req.Command)
	return errors.New("a goal's check is read without asking")
}
func (*checkAsking) Show(tools.ApprovalRequest)                              {}
func (*checkAsking) Ask(context.Context, tools.ApprovalRequest) (bool, bool) { return false, false }
func (*checkAsking) Decided(tools.ApprovalRequest, bool) error               { return nil }

// asking is a goal step's part in an approval (tools.Asking): the step waits
// for it durably, counts it against the approvals budget, and the owner is
// told how to decide it.
type asking struct {
	r    *Runtime
	goal string
	step int
	ctx  context.Context
}

// Waiting counts the approval against the tree's budget, once a step: a
// step asked again (after a restart) is not counted again. Past the budget,
// the call is not asked, and the over-count, saved, stops the goal.
func (a *asking) Waiting(req tools.ApprovalRequest) error {
	var over error
	err := a.r.updateTree(a.goal, func(g *Goal, tree *Spent, b Budget) error {
		st := g.step(a.step)
		if st == nil {
			return fmt.Errorf("goal %s: no step %d", g.ID, a.step)
		}
		if !st.Asked {
			if b.Approvals > 0 && tree.Approvals >= b.Approvals {
				tree.Approvals++ // over: the next round stops the goal
				over = fmt.Errorf("goal %s's tree has used its %d approvals", g.ID, b.Approvals)
				return nil
			}
			g.Spent.Approvals++
			tree.Approvals++
			st.Asked = true
		}
		if err := g.move(a.step, Waiting, a.r.opt.Now()); err != nil {
			return err
		}
		st.Waiting, st.Approval = "approval", req.ID
		return nil
	})
	if err != nil {
		return err
	}
	return over
}

func (a *asking) Show(req tools.ApprovalRequest) {
	g, err := a.r.Get(a.goal)
	if err != nil {
		return
	}
	a.r.tell(a.ctx, g, fmt.Sprintf("goal %s (%s) step %d waits for approval of %s: approve %s or deny %s",
		g.ID, oneLine(g.Objective, 60), a.step, req.Command, req.ID, req.ID))
}

func (a *asking) Ask(context.Context, tools.ApprovalRequest) (bool, bool) { return false, false }

func (a *asking) Decided(req tools.ApprovalRequest, approved bool) error {
	return a.r.update(a.goal, func(g *Goal) error {
		st := g.step(a.step)
		if st == nil || st.State != Waiting {
			return fmt.Errorf("goal %s step %d no longer waits (it is %s)", g.ID, a.step, st.State)
		}
		st.Approval = ""
		return g.move(a.step, Running, a.r.opt.Now())
	})
}
