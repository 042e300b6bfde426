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

// pursuit is what one goal's pursuit keeps between its rounds, outside the
// store: a restart begins it again with a judgement.
type pursuit struct {
	due     cause         // a judgement due at once (the pursuit began, a step moved)
	changes <-chan Change // the check's changes, when a Source watches its read
	watched bool
	last    *float64  // the value of the last change taken in
	changed bool      // a change not judged yet
	judged  time.Time // when a change was last judged
	wake    time.Time // the round wants to be woken by then (zero: no wish)
}

// wakeBy asks for the next round by t at the latest.
func (st *pursuit) wakeBy(t time.Time) {
	if st.wake.IsZero() || t.Before(st.wake) {
		st.wake = t
	}
}

// pursue runs goal id until it finishes or ctx ends.
func (r *Runtime) pursue(ctx context.Context, id string) {
	st := &pursuit{due: byStart} // judge at once: a check that already holds needs no plan
	if g, err := r.Get(id); err == nil && g.Check != nil && r.opt.Watch != nil {
		st.changes, st.watched = r.opt.Watch.Watch(ctx, g.Check.Read)
	}
	for ctx.Err() == nil {
		g, err := r.Get(id)
		if err != nil || g.State.Finished() {
			return
		}
		st.wake = time.Time{}
		acted, err := r.round(ctx, &g, st)
		if err != nil && ctx.Err() == nil {
			r.opt.Log.Warn("goal: a round failed; trying again", "goal", id, "err", err)
		}
		if acted && err == nil {
			continue
		}
		if g2, err := r.Get(id); err == nil {
			g = g2
		}
		if !st.watched && r.polled(&g, st) && r.opt.Watch != nil {
			// A source may watch it now (a sensor that came up after the
			// goal was set): its changes, rather than polls, from here on.
			st.changes, st.watched = r.opt.Watch.Watch(ctx, g.Check.Read)
		}
		r.mu.Lock()
		wake := r.wake[id]
		r.mu.Unlock()
		c, stop := r.opt.Clock.NewTimer(r.sleep(&g, st, err != nil))
		select {
		case <-ctx.Done():
		case <-wake:
		case <-c:
		case ch, ok := <-st.changes:
			if !ok {
				st.changes = nil // the source stopped watching: polled from now on
				st.watched = false
				break
			}
			// Judged when the value moved: a source that repeats itself
			// (a sensor sampled every second) costs no read.
			if st.last == nil || *st.last != ch.Value {
				st.changed = true
			}
			v := ch.Value
			st.last = &v
		}
		stop()
	}
}

// sleep is how long the pursuit of g may sleep before its next round (an
// event, a nudge or a change wake it sooner): until the next judgement or
// poll for a goal waiting for the world, a poll for one whose plan runs
// (waits, conditions, approvals, sub-goals are looked at every poll), never
// past its deadline.
func (r *Runtime) sleep(g *Goal, st *pursuit, failed bool) time.Duration {
	now := r.opt.Now()
	next := now.Add(r.opt.Poll)
	if g.State == Awaiting && !failed {
		next = lastJudged(g).Add(r.opt.EvaluateEvery)
		if r.polled(g, st) {
			next = earliest(next, readAt(g).Add(r.opt.Poll))
		}
		if g.Want != "" {
			next = earliest(next, g.Planned.Add(r.opt.Poll))
		}
	}
	if !g.Deadline.IsZero() {
		next = earliest(next, g.Deadline)
	}
	if !st.wake.IsZero() {
		next = earliest(next, st.wake)
	}
	if !next.After(now) {
		// Due already and the round did nothing: no spinning, a poll.
		next = now.Add(r.opt.Poll)
	}
	return next.Sub(now)
}

func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// polled reports whether g's check is read every Poll: it waits for the
// world (or holds a band, plan or no plan) and no source watches its read.
func (r *Runtime) polled(g *Goal, st *pursuit) bool {
	return g.Check != nil && !st.watched && (g.State == Awaiting || g.Hold != nil)
}

// readAt is when g's check was last read (never: long ago).
func readAt(g *Goal) time.Time {
	if g.Reading == nil {
		return time.Time{}
	}
	return g.Reading.At
}

// cause is why a goal is judged.
type cause int

const (
	byNone     cause = iota
	byStart          // the pursuit (re)started
	byStep           // a step started or ended
	byInterval       // evaluate_every passed since the last judgement that counts
	byChange         // what the check reads changed (a watched read)
	byPoll           // a poll of a read no source watches: judged when its value moved
	byDeadline       // the deadline: one last read
)

// counts reports whether a judgement of cause c is one of those stalls are
// counted in and the next is timed from (after a step, at intervals).
func (c cause) counts() bool { return c == byStart || c == byStep || c == byInterval }

// changeGap bounds how often changes are judged: a contact that bounces, or
// a sensor sampled fast, is judged at most once a second (or a poll, when
// polls are shorter), the newest value then.
func (r *Runtime) changeGap() time.Duration { return min(time.Second, r.opt.Poll) }

// dueNow is the judgement g is due for now, if any.
func (r *Runtime) dueNow(g *Goal, st *pursuit, now time.Time) cause {
	if c := st.due; c != byNone {
		st.due = byNone
		return c
	}
	if now.Sub(lastJudged(g)) >= r.opt.EvaluateEvery {
		return byInterval
	}
	if st.changed && g.Check != nil {
		if at := st.judged.Add(r.changeGap()); now.Before(at) {
			st.wakeBy(at)
			return byNone
		}
		st.changed, st.judged = false, now
		return byChange
	}
	if r.polled(g, st) && now.Sub(readAt(g)) >= r.opt.Poll {
		return byPoll
	}
	return byNone
}

// round does the next thing goal g needs; acted says something happened
// (the next round follows at once).
func (r *Runtime) round(ctx context.Context, g *Goal, st *pursuit) (acted bool, err error) {
	now := r.opt.Now()
	if !g.Deadline.IsZero() && !now.Before(g.Deadline) {
		return true, r.atDeadline(ctx, g)
	}
	if why := r.outOfBudget(g, now); why != "" {
		_, err := r.finish(ctx, g.ID, Stopped, why)
		return true, err
	}
	if c := r.dueNow(g, st, now); c != byNone {
		if fin, err := r.evaluate(ctx, g, c, st); fin || err != nil {
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
	if live(g) {
		for _, s := range g.Steps {
			if s.ID >= g.PlanFrom && (s.State == StepFailed || s.State == Blocked) {
				return true, r.replan(ctx, g, fmt.Sprintf("step %d (%s) %s: %s", s.ID, s.Command, s.State, oneLine(s.Result, 160)))
			}
		}
	}
	if !live(g) {
		return r.planless(ctx, g, st)
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
			st.due = byStep
			return true, r.start(ctx, g, s)
		case s.State == Waiting:
			done, err := r.look(ctx, g, s)
			if done {
				st.due = byStep
			}
			if done || err != nil {
				return done, err
			}
		}
	}
	return false, nil
}

// planless decides what g does when no plan of it runs: write one (there is
// none yet, the last failed, it stalled), run again the plan that brought a
// holding goal back, or wait for the world (the plan is over and the check
// does not hold yet, or a holding goal is inside its band).
func (r *Runtime) planless(ctx context.Context, g *Goal, st *pursuit) (bool, error) {
	want := g.Want
	switch {
	case want != "":
	case strings.HasPrefix(g.Reason, "planning: "):
		// Said to the planner: a seeded model given the same prompt
		// would write the same plan again.
		want = "the last attempt to plan failed: " + strings.TrimPrefix(g.Reason, "planning: ")
	case lastFailed(g) != nil:
		f := lastFailed(g)
		want = fmt.Sprintf("step %d (%s) %s: %s", f.ID, f.Command, f.State, oneLine(f.Result, 160))
	case g.Hold != nil && g.Reading != nil && g.Reading.Err == "" && !g.Reading.Holds && !g.Hold.Acted && !g.NeedsOwner:
		// Out of its band, and nothing done about it yet: the plan that
		// brought it back from this side before, else a new one.
		if ran, err := r.rerun(ctx, g); ran || err != nil {
			return true, err
		}
		want = fmt.Sprintf("%s is outside the band: %s", subject(g.Check.Read), r.readingText(g))
	case len(g.Steps) > 0 || g.Hold != nil:
		// The plan is over and the check does not hold yet (a holding
		// goal: holds, or was acted for): the world has its say.
		return r.await(ctx, g)
	}
	if g.NeedsOwner {
		return r.await(ctx, g) // its owner was told: no more plans
	}
	if why := r.noStepsLeft(g); why != "" {
		// A new plan could start nothing.
		_, err := r.finish(ctx, g.ID, Stopped, why)
		return true, err
	}
	if at := g.Planned.Add(r.opt.Poll); !g.Planned.IsZero() && r.opt.Now().Before(at) {
		st.wakeBy(at) // a re-plan waits at least a poll
		return false, nil
	}
	return true, r.plan(ctx, g, want)
}

// await puts g in state waiting, if it is not.
func (r *Runtime) await(ctx context.Context, g *Goal) (bool, error) {
	if g.State == Awaiting {
		return false, nil
	}
	now := r.opt.Now()
	err := r.update(g.ID, func(g *Goal) error {
		if g.State.Finished() {
			return nil
		}
		g.State, g.WaitingSince, g.Reason = Awaiting, now, r.waitingWhy(g)
		return nil
	})
	return true, err
}

// waitingWhy is why g waits, in words.
func (r *Runtime) waitingWhy(g *Goal) string {
	switch {
	case g.Check == nil:
		return "the plan is over; the goal is judged again every " + human(r.opt.EvaluateEvery)
	case g.Hold != nil && g.Reading != nil && g.Reading.Holds:
		return fmt.Sprintf("holding: %s %s, %s", subject(g.Check.Read), r.readingText(g), g.Check.Condition)
	case g.NeedsOwner:
		return fmt.Sprintf("stalled, its owner told: %s %s, not yet %s", subject(g.Check.Read), r.readingText(g), g.Check.Condition)
	case len(g.Steps) == 0:
		return fmt.Sprintf("%s %s, not yet %s", subject(g.Check.Read), r.readingText(g), g.Check.Condition)
	}
	return fmt.Sprintf("the plan is over; %s %s, not yet %s", subject(g.Check.Read), r.readingText(g), g.Check.Condition)
}

// readingText is g's last reading in words: "reads low (12:01:03)".
func (r *Runtime) readingText(g *Goal) string {
	rd := g.Reading
	switch {
	case rd == nil:
		return "not read yet"
	case rd.Err != "":
		return fmt.Sprintf("the read failed (%s): %s", r.clock(rd.At), oneLine(rd.Err, 120))
	}
	return fmt.Sprintf("reads %s (%s)", says(g.Check.Condition, rd.Value), r.clock(rd.At))
}

// clock is t as a time of day where the board is.
func (r *Runtime) clock(t time.Time) string { return t.In(r.opt.Location).Format("15:04:05") }

// rerun runs again the plan that last brought holding goal g back from the
// side it is out on; ran false: there is none, or it no longer parses (a
// tool it used is gone or no longer offered), and the model plans.
func (r *Runtime) rerun(ctx context.Context, g *Goal) (bool, error) {
	text := g.Hold.Remedies[g.Hold.Side]
	if text == "" {
		return false, nil
	}
	next := nextStep(g)
	steps, err := ParsePlan(text, r.planTools(g), next)
	if err != nil {
		r.opt.Log.Info("goal: the plan that brought it back cannot run again; planning", "goal", g.ID, "err", err)
		return false, nil
	}
	if why := r.noStepsLeft(g); why != "" {
		_, err := r.finish(ctx, g.ID, Stopped, why)
		return true, err
	}
	return true, r.update(g.ID, func(g *Goal) error {
		if g.State.Finished() {
			return nil
		}
		g.Steps = append(g.Steps, steps...)
		g.PlanFrom, g.PlanText = next, text
		g.State, g.Reason, g.Want = Active, "", ""
		g.Hold.Acted = true
		g.Hold.Reused++
		g.Near = nearOf(g)
		return nil
	})
}

// nextStep is the id the next plan's first step gets.
func nextStep(g *Goal) int {
	if n := len(g.Steps); n > 0 {
		return g.Steps[n-1].ID + 1
	}
	return 1
}

// nearOf is the distance of g's last reading to its check's threshold, the
// mark a new plan's progress is measured from (nil: none).
func nearOf(g *Goal) *float64 {
	if g.Check == nil || g.Reading == nil || g.Reading.Err != "" {
		return nil
	}
	if d, ok := distance(g.Check.Condition, g.Reading.Value); ok {
		return &d
	}
	return nil
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

// lastJudged is when g was last judged after a step or at an interval
// (when it was set, before any).
func lastJudged(g *Goal) time.Time {
	if !g.Judged.IsZero() {
		return g.Judged
	}
	if n := len(g.Evaluations); n > 0 {
		return g.Evaluations[n-1].At // a record kept before Judged
	}
	return g.Created
}

// outOfBudget says why g must stop now, or "": a bound of its tree's
// budget spent (by it, its root or any sub-goal: one ledger).
func (r *Runtime) outOfBudget(g *Goal, now time.Time) string {
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

// replan gives up what is left of g's plan: a new one is wanted, for why,
// and the next round writes it (a poll after the last one at the soonest).
func (r *Runtime) replan(ctx context.Context, g *Goal, why string) error {
	now := r.opt.Now()
	err := r.update(g.ID, func(g *Goal) error {
		for i := range g.Steps {
			s := &g.Steps[i]
			if s.State == Planned || s.State == Ready || s.State == Waiting && s.Waiting != "approval" {
				g.move(s.ID, StepCancelled, now)
			}
		}
		g.Want = why
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
	return nil
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
	next := nextStep(g)
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
		g.Planned = r.opt.Now()
		if g.State.Finished() {
			return nil // cancelled while the model wrote: the plan is not taken
		}
		if err != nil {
			g.Reason = "planning: " + oneLine(err.Error(), 300)
			return nil
		}
		g.State, g.Reason, g.Want = Active, "", ""
		g.Steps = append(g.Steps, steps...)
		g.PlanFrom, g.PlanText = next, strings.TrimSpace(text)
		// Progress is measured from where the check stands now.
		g.Near = nearOf(g)
		if g.Hold != nil && !g.Hold.OutSince.IsZero() {
			g.Hold.Acted = true
		}
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
