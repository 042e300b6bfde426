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

// evaluate judges g, for cause c; finished says it ended (reached, or its
// check cannot be read).
func (r *Runtime) evaluate(ctx context.Context, g *Goal, c cause, st *pursuit) (finished bool, err error) {
	var e Evaluation
	var rd *Reading
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
			rd = &Reading{Err: oneLine(err.Error(), 300)}
		case holds:
			e = Evaluation{Score: 1, By: "rule", Reason: fmt.Sprintf("%s read %s: %s", g.Check.Read, grammar.FormatNumber(v), g.Check.Condition)}
			rd = &Reading{Value: v, Holds: true}
		default:
			e = Evaluation{Score: 0, By: "rule", Reason: fmt.Sprintf("%s read %s: not %s", g.Check.Read, grammar.FormatNumber(v), g.Check.Condition)}
			rd = &Reading{Value: v}
		}
	case !c.counts():
		return false, nil // a model judges after steps and at intervals only
	case !anyEnded(g):
		return false, nil // nothing done yet: nothing to judge
	case waiting(g) && c != byStep:
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
	now := r.opt.Now()
	e.At = now
	if rd != nil {
		rd.At = now
	}
	done := g.Hold == nil && (g.Check != nil && e.Score >= 1 || g.Check == nil && e.Score >= reached)
	err = r.updateTree(g.ID, func(g *Goal, tree *Spent, _ Budget) error {
		g.Spent.Tokens += tokens
		tree.Tokens += tokens
		if st != nil && g.Check != nil {
			g.Watched = "poll"
			if st.watched {
				g.Watched = "events"
			}
		}
		changed, progress := false, e.Score > g.Best
		if rd != nil {
			prev := g.Reading
			changed = prev == nil || prev.Err != rd.Err || prev.Value != rd.Value
			progress = r.progressed(g, *rd, changed)
			g.Reading = rd
			if g.Hold != nil {
				r.held(g, *rd)
			}
		}
		if c.counts() || changed || c == byDeadline {
			g.Evaluations = append(g.Evaluations, e)
			if n := len(g.Evaluations); n > maxEvaluations {
				g.Evaluations = g.Evaluations[n-maxEvaluations:]
			}
		}
		if c.counts() {
			g.Judged = now
		}
		g.Next = lastJudged(g).Add(r.opt.EvaluateEvery)
		if !g.Deadline.IsZero() && g.Deadline.Before(g.Next) {
			g.Next = g.Deadline
		}
		g.Best = max(g.Best, e.Score)
		switch {
		case progress:
			g.Progress, g.Flat = now, 0
		case waiting(g), g.Hold != nil && rd != nil && rd.Holds:
			// A plan waiting as planned (a time, a condition, a person) is
			// not stuck: its wait has its own end. Nor is a holding goal
			// inside its band: there is nothing to get nearer to.
			g.Progress = now
		case c == byStep, c == byInterval && g.State == Awaiting:
			// A step done without progress is a step without progress, and
			// so is an interval spent waiting for the world without it;
			// judgements between steps, and changes, leave it to StallTime.
			g.Flat++
		}
		if g.State == Awaiting {
			g.Reason = r.waitingWhy(g)
		}
		return nil
	})
	if err != nil || !done {
		return false, err
	}
	_, err = r.finish(ctx, g.ID, Done, "reached: "+e.Reason)
	return true, err
}

// progressed says whether reading rd of g's check is progress: for a number,
// nearer its threshold than it has been since the plan (or the excursion)
// began; for a level, a change.
func (r *Runtime) progressed(g *Goal, rd Reading, changed bool) bool {
	if rd.Err != "" {
		return false
	}
	d, numeric := distance(g.Check.Condition, rd.Value)
	if !numeric {
		return changed && g.Reading != nil && g.Reading.Err == ""
	}
	if g.Near == nil || d < *g.Near {
		better := g.Near != nil
		g.Near = &d
		return better
	}
	return false
}

// held takes reading rd into holding goal g's record: back in its band, the
// plan run for the excursion brought it back (kept to run again on that
// side), and the stalls start over; out of it, progress is measured from
// there.
func (r *Runtime) held(g *Goal, rd Reading) {
	h := g.Hold
	was, acted := h.Side, h.Acted
	switch h.observe(rd, g.Check.Condition) {
	case holdBack:
		if acted && callsDone(g) > 0 && g.PlanText != "" {
			if h.Remedies == nil {
				h.Remedies = map[string]string{}
			}
			h.Remedies[was] = g.PlanText
		}
		g.Stalls, g.Flat, g.NeedsOwner, g.Escalated, g.Near = 0, 0, false, false, nil
		g.Progress = rd.At
	case holdOut, holdFlipped:
		g.Flat, g.Progress, g.Near = 0, rd.At, nearOf(&Goal{Check: g.Check, Reading: &rd})
	}
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

// stall handles a goal without progress; stalled says it acted. The first
// stall plans again; the second hands planning to the escalation model
// when there is one; the next goes to the owner: a goal with a deadline
// writes no more plans and waits for the world until then, one without
// ends stalled.
func (r *Runtime) stall(ctx context.Context, g *Goal) (bool, error) {
	if g.NeedsOwner || g.Hold != nil && (g.Reading == nil || g.Reading.Holds) {
		return false, nil // its owner was told; or holding: nothing to get nearer to
	}
	now := r.opt.Now()
	flat := g.Flat >= r.opt.StallAfter
	idle := !g.Progress.IsZero() && now.Sub(g.Progress) >= r.opt.StallTime
	if !flat && !idle {
		return false, nil
	}
	why := fmt.Sprintf("no progress in %d evaluations", g.Flat)
	if !flat {
		why = fmt.Sprintf("no progress since %s", r.clock(g.Progress))
	}
	if g.Check != nil {
		why += fmt.Sprintf("; %s %s", subject(g.Check.Read), r.readingText(g))
	}
	escalate := g.Stalls == 1 && r.opt.Escalation != nil && !g.Escalated
	if g.Stalls >= 1 && !escalate {
		if g.Deadline.IsZero() {
			_, err := r.finish(ctx, g.ID, Stalled, why+" after a new plan; it needs you")
			return true, err
		}
		err := r.update(g.ID, func(g *Goal) error {
			g.Stalls++
			g.Flat, g.Progress, g.NeedsOwner = 0, now, true
			if g.State == Awaiting {
				g.Reason = r.waitingWhy(g)
			}
			return nil
		})
		if err != nil {
			return true, err
		}
		r.tell(ctx, *g, fmt.Sprintf("goal %s (%s) stalled again (%s) after a new plan; it needs you: it writes no more plans and waits until its deadline %s (cancel it: goal cancel %s)",
			g.ID, oneLine(g.Objective, 60), why, g.Deadline.In(r.opt.Location).Format("2006-01-02 15:04"), g.ID))
		return true, nil
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

// atDeadline ends g at its deadline. A goal with a check reads it once more
// (one reached at its deadline is done) and ends saying what it read and
// when; a holding goal ends with the record of its band; one a model judges
// is stopped, saying how it was last judged.
func (r *Runtime) atDeadline(ctx context.Context, g *Goal) error {
	if g.Check != nil {
		if fin, err := r.evaluate(ctx, g, byDeadline, nil); fin || ctx.Err() != nil {
			return err
		}
		if g2, err := r.Get(g.ID); err == nil {
			*g = g2
		}
	}
	at := fmt.Sprintf("at the deadline (%s)", deadlineText(g))
	tail := "; " + actions(g)
	if g.NeedsOwner {
		tail += "; it stalled and its owner was told"
	}
	var state State
	var why string
	switch {
	case g.Hold != nil:
		err := r.update(g.ID, func(g *Goal) error {
			g.Hold.close(g.Deadline)
			return nil
		})
		if err != nil {
			return err
		}
		if g2, err := r.Get(g.ID); err == nil {
			*g = g2
		}
		if g.Reading != nil && g.Reading.Holds {
			state, why = Done, fmt.Sprintf("held %s until its deadline (%s): %s", g.Check.Condition, deadlineText(g), g.Hold.figures())
		} else {
			state, why = Failed, fmt.Sprintf("outside %s %s: %s %s; %s", g.Check.Condition, at, subject(g.Check.Read), r.readingText(g), g.Hold.figures())
		}
	case g.Check != nil && g.Reading != nil && g.Reading.Err == "":
		state, why = Failed, fmt.Sprintf("%s still reads %s %s, read at %s", subject(g.Check.Read), says(g.Check.Condition, g.Reading.Value), at, r.clock(g.Reading.At))
	case g.Check != nil:
		state, why = Failed, fmt.Sprintf("its check %s was not reached %s: %s", g.Check, at, r.readingText(g))
	default:
		state, why = Stopped, "its deadline passed ("+deadlineText(g)+") before it was reached"
		if n := len(g.Evaluations); n > 0 {
			e := g.Evaluations[n-1]
			why += fmt.Sprintf(": judged %.0f%% at %s (%s)", e.Score*100, r.clock(e.At), oneLine(e.Reason, 120))
		}
	}
	_, err := r.finish(ctx, g.ID, state, why+tail)
	return err
}

// deadlineText is g's deadline as it was set ("5m", "07:00").
func deadlineText(g *Goal) string {
	if g.DeadlineAsSet != "" {
		return g.DeadlineAsSet
	}
	return human(g.Deadline.Sub(g.Created))
}
