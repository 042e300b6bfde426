package goals

// This file: judging how near a goal is, and noticing when it stops getting
// nearer. The rule, when the goal has one, is a read on the call path and
// decides alone; otherwise a model judges (Options.Judge, a remote one when
// configured). A better score is progress, and so is a call step done; no
// progress for StallAfter judgements or StallTime is a stall: the first
// re-plans, the second hands planning to the escalation model when there is
// one, the last goes to the owner.

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/clawedge/clawedge/grammar"
)

// reached is the model's score at which a goal without a rule is done.
const reached = 0.8

// evaluate judges g (afterStep: because a step started or ended); finished
// says it ended (reached).
func (r *Runtime) evaluate(ctx context.Context, g *Goal, afterStep bool) (finished bool, err error) {
	var e Evaluation
	tokens := 0
	switch {
	case g.Check != nil:
		holds, v, err := r.read(ctx, g, 0, *g.Check)
		var refused *refusedRead
		switch {
		case errors.Is(err, errReadsSpent):
			return false, nil // the next round stops the goal
		case errors.As(err, &refused):
			// Refused now, refused at every evaluation: nobody is asked
			// again and again, the goal ends saying why.
			_, err := r.finish(ctx, g.ID, Failed, fmt.Sprintf("its check %s cannot be read: %s", g.Check, err))
			return true, err
		case err != nil && ctx.Err() != nil:
			return false, ctx.Err() // stopping: no judgement
		case err != nil:
			// Judged as not reached, so that the next try waits for
			// evaluate_every rather than the next poll.
			e = Evaluation{Score: 0, By: "rule", Reason: fmt.Sprintf("%s: the read failed: %s", g.Check.Read, oneLine(err.Error(), 160))}
		case holds:
			e = Evaluation{Score: 1, By: "rule", Reason: fmt.Sprintf("%s read %s: %s", g.Check.Read, grammar.FormatNumber(v), g.Check.Condition)}
		default:
			e = Evaluation{Score: 0, By: "rule", Reason: fmt.Sprintf("%s read %s: not %s", g.Check.Read, grammar.FormatNumber(v), g.Check.Condition)}
		}
	case !anyEnded(g):
		return false, nil // nothing done yet: nothing to judge
	case waiting(g) && !afterStep:
		return false, nil // a plan waiting as planned: no model call spent to hear "not yet"
	case r.opt.Judge != nil:
		text, n, err := ask(ctx, r.opt.Judge, judgeSystem, judgePrompt(g), scoreSpec, 200)
		tokens = n
		if err == nil {
			e.Score, e.Reason, err = parseScore(text)
		}
		if err != nil {
			r.updateTree(g.ID, func(g *Goal, tree *Spent, _ Budget) error {
				g.Spent.Tokens += tokens
				tree.Tokens += tokens
				return nil
			})
			return false, fmt.Errorf("judging: %w", err)
		}
		e.By = "model " + r.opt.Judge.Name()
	default:
		return false, nil
	}
	e.At = r.opt.Now()
	done := g.Check != nil && e.Score >= 1 || g.Check == nil && e.Score >= reached
	err = r.updateTree(g.ID, func(g *Goal, tree *Spent, _ Budget) error {
		g.Spent.Tokens += tokens
		tree.Tokens += tokens
		g.Evaluations = append(g.Evaluations, e)
		if n := len(g.Evaluations); n > maxEvaluations {
			g.Evaluations = g.Evaluations[n-maxEvaluations:]
		}
		switch {
		case e.Score > g.Best:
			g.Best, g.Progress, g.Flat = e.Score, e.At, 0
		case waiting(g):
			// A plan waiting as planned (a time, a condition, a person) is
			// not stuck: its wait has its own end.
			g.Progress = e.At
		case afterStep:
			// Only a step done without a better score is a step without
			// progress; judgements between steps (at intervals) leave it to
			// StallTime.
			g.Flat++
		}
		return nil
	})
	if err != nil || !done {
		return false, err
	}
	_, err = r.finish(ctx, g.ID, Done, "reached: "+e.Reason)
	return true, err
}

func waiting(g *Goal) bool {
	for _, s := range g.Steps {
		if s.State == Waiting {
			return true
		}
	}
	return false
}

func anyEnded(g *Goal) bool {
	for _, s := range g.Steps {
		if s.State.Terminal() && s.State != StepCancelled {
			return true
		}
	}
	return false
}

func judgePrompt(g *Goal) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Goal: %s\nWhat was done:\n", g.Objective)
	for _, s := range g.Steps {
		fmt.Fprintf(&b, "- %s: %s", s.Command, s.State)
		if s.Result != "" {
			fmt.Fprintf(&b, " (%s)", oneLine(s.Result, 160))
		}
		b.WriteByte('\n')
	}
	b.WriteString("How near is the goal?")
	return b.String()
}

// stall handles a goal without progress; stalled says it acted.
func (r *Runtime) stall(ctx context.Context, g *Goal) (bool, error) {
	now := r.opt.Now()
	flat := g.Flat >= r.opt.StallAfter
	idle := !g.Progress.IsZero() && now.Sub(g.Progress) >= r.opt.StallTime
	if !flat && !idle {
		return false, nil
	}
	why := fmt.Sprintf("no progress in %d evaluations", g.Flat)
	if !flat {
		why = fmt.Sprintf("no progress since %s", g.Progress.UTC().Format("15:04:05"))
	}
	escalate := g.Stalls == 1 && r.opt.Escalation != nil && !g.Escalated
	if g.Stalls >= 1 && !escalate {
		_, err := r.finish(ctx, g.ID, Stalled, why+" after a new plan; it needs you")
		return true, err
	}
	err := r.update(g.ID, func(g *Goal) error {
		g.Stalls++
		g.Flat, g.Progress = 0, now
		g.Escalated = g.Escalated || escalate
		return nil
	})
	if err != nil {
		return true, err
	}
	if escalate {
		r.tell(ctx, *g, fmt.Sprintf("goal %s stalled again (%s): the plan goes to %s", g.ID, why, r.opt.Escalation.Name()))
	}
	if g2, err := r.Get(g.ID); err == nil {
		*g = g2
	}
	return true, r.replan(ctx, g, "it stalled: "+why)
}
