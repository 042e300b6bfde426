package goals

// This file: the runtime's life: options, loading and recovering the goals
// kept in the store, adding, listing, cancelling and answering them. Each
// active goal is pursued by its own goroutine (pursue.go).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/clawedge/clawedge/llm"
	"github.com/clawedge/clawedge/tools"
)

// Options are what the runtime works with; Store and Runner are required.
type Options struct {
	Store  KV
	Runner *tools.Runner
	// Model writes plans and, without Judge, judges goals that have no
	// check. Nil: a goal whose check already holds is done; any other
	// fails, saying no model can write its plan.
	Model llm.Provider
	// Judge evaluates goals without a check (a remote model, when one is
	// configured); nil: Model.
	Judge llm.Provider
	// Escalation plans once more after a goal stalled twice (a remote
	// model); nil: a stalled goal goes straight to its owner.
	Escalation llm.Provider
	// Offered says whether a tool may be offered to a goal's caller
	// (policy.Policy.Offered: what the policy would not deny its owner's
	// model); nil: every registered tool.
	Offered func(caller tools.Caller, tool string) bool
	// Notify tells a goal's owner something (finished, failed, stalled,
	// needs them); nil: only the log.
	Notify func(ctx context.Context, owner tools.Principal, text string)
	Log    *slog.Logger
	Now    func() time.Time // nil: time.Now (or Clock's)
	// Clock is the time goals are pursued by, and its timers (nil: the real
	// one); a test's runs a night in seconds.
	Clock Clock
	// Watch says when what a check reads changes (Feed: the daemon's pin
	// edges and sensor samples); nil, or a read it does not watch: the
	// check is polled every Poll while its goal waits for it.
	Watch Source
	// Location is where a deadline given as a time of day ("07:00") is
	// read (nil: time.Local).
	Location *time.Location

	// Poll is how often waits and conditions are looked at (default 10s);
	// EvaluateEvery how often a goal is judged besides after each step
	// (default 5m). A goal stalls after StallAfter evaluations without
	// progress (default 3) or StallTime without any (default 1h).
	Poll          time.Duration
	EvaluateEvery time.Duration
	StallAfter    int
	StallTime     time.Duration
	// MaxPlans bounds how many plans one goal may have written (default 8).
	MaxPlans int
	// Budget is the budget of goals that set none, bound by bound: a goal
	// that sets only its steps keeps this one's tokens, time and approvals.
	// A sub-goal has none of its own: it spends its root's.
	Budget Budget
	// MaxDepth bounds how far below its root a sub-goal may be (default
	// 3); MaxAlivePerOwner how many goals, sub-goals included, one owner
	// may have being pursued (default 20), and MaxAlive how many all
	// owners together may (default 100). A goal past them is refused; a
	// plan whose sub-goals would pass them is planned again, told why.
	MaxDepth         int
	MaxAlivePerOwner int
	MaxAlive         int
}

// The defaults of the bounds on goal trees (goals.max_depth,
// goals.max_alive_per_owner, goals.max_alive).
const (
	DefaultMaxDepth         = 3
	DefaultMaxAlivePerOwner = 20
	DefaultMaxAlive         = 100
)

func (o *Options) defaults() {
	switch {
	case o.Clock != nil:
		o.Now = o.Clock.Now
	case o.Now == nil:
		o.Now = time.Now
	}
	if o.Clock == nil {
		o.Clock = realClock{now: o.Now}
	}
	if o.Location == nil {
		o.Location = time.Local
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Poll <= 0 {
		o.Poll = 10 * time.Second
	}
	if o.EvaluateEvery <= 0 {
		o.EvaluateEvery = 5 * time.Minute
	}
	if o.StallAfter <= 0 {
		o.StallAfter = 3
	}
	if o.StallTime <= 0 {
		o.StallTime = time.Hour
	}
	if o.MaxPlans <= 0 {
		o.MaxPlans = 8
	}
	if o.Judge == nil {
		o.Judge = o.Model
	}
	if o.MaxDepth <= 0 {
		o.MaxDepth = DefaultMaxDepth
	}
	if o.MaxAlivePerOwner <= 0 {
		o.MaxAlivePerOwner = DefaultMaxAlivePerOwner
	}
	if o.MaxAlive <= 0 {
		o.MaxAlive = DefaultMaxAlive
	}
}

// Runtime pursues the goals.
type Runtime struct {
	opt Options

	mu      sync.Mutex
	goals   map[string]*Goal
	next    int
	wake    map[string]chan struct{}
	cancels map[string]context.CancelFunc
	ctx     context.Context // Run's; nil before Run
	wg      sync.WaitGroup
	// changed is closed at the next change of any goal, then replaced
	// (Changed): the dashboard follows the goals without polling them.
	changed chan struct{}
}

// Interrupted is the result of a step a crash or power cut cut short.
const Interrupted = "interrupted by a stop or a power cut while running: whether its effect happened is unknown, and it is not repeated"

// New loads the goals kept in the store and recovers them before anything
// runs: a step that was running is failed, never repeated (its intent, if
// one was written, is closed by the audit's own recovery); a step that
// waited for an approval is asked again, since no intent was written while
// it waited; other waits resume where they were.
func New(opt Options) (*Runtime, error) {
	if opt.Store == nil || opt.Runner == nil {
		return nil, errors.New("goals: a store and a runner are required")
	}
	opt.defaults()
	r := &Runtime{opt: opt, goals: map[string]*Goal{}, wake: map[string]chan struct{}{}, cancels: map[string]context.CancelFunc{},
		changed: make(chan struct{})}
	gs, bad, err := load(opt.Store)
	if err != nil {
		return nil, err
	}
	for _, e := range bad {
		opt.Log.Error("goals: a record cannot be read; it is left as it is", "err", e)
	}
	now := opt.Now()
	for _, g := range gs {
		r.goals[g.ID] = g
		top, _, _ := strings.Cut(g.ID, ".")
		if n, err := strconv.Atoi(top); err == nil && n >= r.next {
			r.next = n
		}
		changed := false
		if g.Parent == "" && g.Tree == nil {
			// A root kept before trees had one ledger: what it spent.
			tree := g.Spent
			g.Tree, changed = &tree, true
		}
		if g.State.Finished() {
			if changed {
				if err := save(opt.Store, g); err != nil {
					return nil, err
				}
			}
			continue
		}
		for i := range g.Steps {
			s := &g.Steps[i]
			switch {
			case s.State == Running:
				s.Result = Interrupted
				changed = g.move(s.ID, StepFailed, now) == nil || changed
			case s.State == Waiting && s.Waiting == "approval":
				s.Approval = ""
				changed = g.move(s.ID, Ready, now) == nil || changed
			}
		}
		if changed {
			g.Updated = now
			if err := save(opt.Store, g); err != nil {
				return nil, err
			}
		}
	}
	return r, nil
}

// Run pursues every active goal, and those added later, until ctx ends.
func (r *Runtime) Run(ctx context.Context) error {
	r.mu.Lock()
	r.ctx = ctx
	for id, g := range r.goals {
		if !g.State.Finished() {
			r.startLocked(id)
		}
	}
	r.mu.Unlock()
	<-ctx.Done()
	r.wg.Wait()
	return nil
}

// startLocked starts pursuing goal id (r.mu held).
func (r *Runtime) startLocked(id string) {
	if r.ctx == nil || r.cancels[id] != nil {
		return
	}
	ctx, cancel := context.WithCancel(r.ctx)
	r.cancels[id] = cancel
	r.wake[id] = make(chan struct{}, 1)
	r.wg.Go(func() {
		defer func() {
			r.mu.Lock()
			delete(r.cancels, id)
			r.mu.Unlock()
			cancel()
		}()
		r.pursue(ctx, id)
	})
}

// nudge wakes goal id's pursuit early.
func (r *Runtime) nudge(id string) {
	r.mu.Lock()
	ch := r.wake[id]
	r.mu.Unlock()
	if ch != nil {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// NewGoal is what setting a goal takes.
type NewGoal struct {
	Objective string
	Owner     tools.Principal
	Check     *tools.ReadCheck
	// Deadline is how long from now the goal may be pursued (0: none); At
	// is the same as a time (zero: none). At most one of them is given.
	Deadline time.Duration
	At       time.Time
	// Hold: Check must hold from now until the deadline, not once ("keep
	// the greenhouse between 18 and 24 until 07:00"); it needs a check and
	// a deadline, and ends with the record of how the band held.
	Hold   bool
	Budget Budget
}

// MaxObjective bounds an objective's length, in characters.
const MaxObjective = 500

// Add sets a goal and starts pursuing it (when Run is running).
func (r *Runtime) Add(n NewGoal) (Goal, error) {
	return r.add(n, "", "")
}

func (r *Runtime) add(n NewGoal, id, parent string) (Goal, error) {
	n.Objective = strings.TrimSpace(n.Objective)
	switch {
	case n.Objective == "":
		return Goal{}, errors.New("a goal needs an objective: what should be reached")
	case utf8.RuneCountInString(n.Objective) > MaxObjective:
		return Goal{}, fmt.Errorf("the objective is %d characters; at most %d", utf8.RuneCountInString(n.Objective), MaxObjective)
	case n.Deadline < 0:
		return Goal{}, fmt.Errorf("the deadline %s is in the past", n.Deadline)
	case n.Deadline > 0 && !n.At.IsZero():
		return Goal{}, errors.New("a goal has one deadline: a duration (deadline) or a time (until_time), not both")
	case !n.At.IsZero() && !n.At.After(r.opt.Now()):
		return Goal{}, fmt.Errorf("the deadline %s is in the past", n.At.In(r.opt.Location).Format(time.RFC3339))
	case n.Owner.User == "":
		return Goal{}, errors.New("a goal needs an owner")
	case n.Hold && n.Check == nil:
		return Goal{}, errors.New(`a holding goal needs the check that must hold, such as @gpio/read{pin="soil"} is high or ... between 18 and 24`)
	case n.Hold && n.Deadline == 0 && n.At.IsZero() && parent == "":
		return Goal{}, errors.New("a holding goal needs a deadline to hold until: a duration (deadline, such as 8h) or a time (until_time, such as 07:00)")
	}
	if n.Check != nil {
		if err := r.readable(n.Check.Read); err != nil {
			return Goal{}, fmt.Errorf("the check (until): %w", err)
		}
	}
	now := r.opt.Now()
	b := n.Budget.over(r.opt.Budget)
	r.mu.Lock()
	defer r.mu.Unlock()
	if g, ok := r.goals[id]; ok && id != "" {
		return copyGoal(g), nil // a sub-goal made before a restart
	}
	if err := r.boundsLocked(n.Owner, id); err != nil {
		return Goal{}, err
	}
	if id == "" {
		r.next++
		id = strconv.Itoa(r.next)
	}
	g := &Goal{ID: id, Objective: n.Objective, Owner: n.Owner, Check: n.Check, Budget: b, State: Active,
		Parent: parent, Created: now, Updated: now, Progress: now}
	if p, ok := r.goals[parent]; parent != "" && ok {
		// A sub-goal spends its root's budget, and ends by its parent's
		// deadline (the root's wall time included): it has none of its own.
		g.Budget, g.Deadline = p.Budget, p.Deadline
	} else {
		g.Tree = &Spent{}
		switch {
		case n.Deadline > 0:
			g.Deadline, g.DeadlineAsSet = now.Add(n.Deadline), human(n.Deadline)
		case !n.At.IsZero():
			g.Deadline, g.DeadlineAsSet = n.At, clockText(n.At.In(r.opt.Location), now.In(r.opt.Location))
		}
		if b.Wall > 0 && (g.Deadline.IsZero() || now.Add(b.Wall).Before(g.Deadline)) {
			g.Deadline, g.DeadlineAsSet = now.Add(b.Wall), human(b.Wall)+" of wall time"
		}
	}
	if n.Hold {
		g.Hold = &Hold{Since: now}
	}
	if err := save(r.opt.Store, g); err != nil {
		return Goal{}, err
	}
	r.goals[id] = g
	r.changedLocked()
	r.startLocked(id)
	return copyGoal(g), nil
}

// readable says why read, a check's read ("@gpio/read{pin=\"soil\"}"), may
// not be one: its tool is unknown, or has effects. A check is made again
// and again, so it may only read: it is a tool of group:readonly
// (tools.WithoutEffects, the policy's one definition).
func (r *Runtime) readable(read string) error {
	name := toolOf(read)
	t, err := r.opt.Runner.Registry.Lookup(name)
	if err != nil {
		return err
	}
	if !tools.WithoutEffects(t) {
		return fmt.Errorf("%s is not a read: it has effects (it is not in group:readonly), and a check is made again at every evaluation; use a read such as @gpio/read{pin=\"NAME\"}", name)
	}
	return nil
}

// BoundError is a goal refused because its tree or its owner would pass a
// bound of Options (MaxDepth, MaxAlivePerOwner, MaxAlive).
type BoundError struct{ Why string }

func (e *BoundError) Error() string { return e.Why }

// boundsLocked says why a goal for owner, with id (a sub-goal's; "" for a
// new root), may not be set now (r.mu held).
func (r *Runtime) boundsLocked(owner tools.Principal, id string) error {
	if d := depthOf(id); id != "" && d > r.opt.MaxDepth {
		return &BoundError{fmt.Sprintf("sub-goal %s would be %d below its root goal %s; sub-goals go at most %d deep (goals.max_depth)", id, d, rootOf(id), r.opt.MaxDepth)}
	}
	mine, all := r.aliveLocked(owner)
	if mine >= r.opt.MaxAlivePerOwner {
		return &BoundError{fmt.Sprintf("%s has %d goals being pursued, sub-goals included; at most %d (goals.max_alive_per_owner): cancel one or wait until one ends", tools.UserID(owner.User), mine, r.opt.MaxAlivePerOwner)}
	}
	if all >= r.opt.MaxAlive {
		return &BoundError{fmt.Sprintf("%d goals are being pursued, sub-goals included; at most %d on this board (goals.max_alive): cancel one or wait until one ends", all, r.opt.MaxAlive)}
	}
	return nil
}

// aliveLocked counts the goals being pursued: owner's, and everyone's (r.mu held).
func (r *Runtime) aliveLocked(owner tools.Principal) (mine, all int) {
	who := tools.UserID(owner.User)
	for _, g := range r.goals {
		if g.State.Finished() {
			continue
		}
		all++
		if tools.UserID(g.Owner.User) == who {
			mine++
		}
	}
	return mine, all
}

// toolOf is the tool of a rendered invocation: "@gpio/read{...}" -> "gpio/read".
func toolOf(cmd string) string {
	name, _, _ := strings.Cut(strings.TrimPrefix(cmd, "@"), "{")
	return name
}

// List returns every goal, oldest first.
func (r *Runtime) List() []Goal {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Goal, 0, len(r.goals))
	for _, g := range r.goals {
		out = append(out, copyGoal(g))
	}
	slices.SortFunc(out, func(a, b Goal) int {
		if c := a.Created.Compare(b.Created); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out
}

// Get returns goal id.
func (r *Runtime) Get(id string) (Goal, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	g, ok := r.goals[id]
	if !ok {
		return Goal{}, fmt.Errorf("no goal %q (goal list shows them)", id)
	}
	return copyGoal(g), nil
}

// Cancel stops goal id and its sub-goals: steps not yet running are
// cancelled, a running call is cut short by its context.
func (r *Runtime) Cancel(id, by string) (Goal, error) {
	return r.finish(context.Background(), id, Cancelled, "cancelled by "+by)
}

// Answer gives the answer to goal id's waiting question.
func (r *Runtime) Answer(id, text string) (Goal, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return Goal{}, errors.New("the answer is empty")
	}
	var out Goal
	err := r.update(id, func(g *Goal) error {
		for i := range g.Steps {
			s := &g.Steps[i]
			if s.Kind == KindAsk && s.State == Waiting {
				s.Answer, s.Result = text, "answered: "+oneLine(text, 200)
				if err := g.move(s.ID, StepDone, r.opt.Now()); err != nil {
					return err
				}
				out = copyGoal(g)
				return nil
			}
		}
		return fmt.Errorf("goal %s asks nothing now", id)
	})
	if err == nil {
		r.nudge(id)
	}
	return out, err
}

// update applies fn to goal id and saves it, under the lock: fn's changes
// are durable before update returns, or not made.
func (r *Runtime) update(id string, fn func(g *Goal) error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	g, ok := r.goals[id]
	if !ok {
		return fmt.Errorf("no goal %q (goal list shows them)", id)
	}
	next := copyGoal(g)
	if err := fn(&next); err != nil {
		return err
	}
	next.Updated = r.opt.Now()
	if err := save(r.opt.Store, &next); err != nil {
		return err
	}
	*g = next
	r.changedLocked()
	return nil
}

// updateTree is update with the tree's ledger: fn also gets the root's Tree
// and the tree's budget, to charge what goal id spends before it is spent.
// The root is saved first: a crash between the two writes leaves the tree
// charged for what its goal did not record, never the other way round.
func (r *Runtime) updateTree(id string, fn func(g *Goal, tree *Spent, b Budget) error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	g, ok := r.goals[id]
	if !ok {
		return fmt.Errorf("no goal %q (goal list shows them)", id)
	}
	next := copyGoal(g)
	now := r.opt.Now()
	root, ok := r.goals[rootOf(id)]
	if !ok || root == g {
		// A root, or a sub-goal whose root's record cannot be read: its
		// own ledger.
		if next.Tree == nil {
			next.Tree = &Spent{}
		}
		if err := fn(&next, next.Tree, next.Budget); err != nil {
			return err
		}
		next.Updated = now
		if err := save(r.opt.Store, &next); err != nil {
			return err
		}
		*g = next
		r.changedLocked()
		return nil
	}
	top := copyGoal(root)
	if top.Tree == nil {
		top.Tree = &Spent{}
	}
	if err := fn(&next, top.Tree, top.Budget); err != nil {
		return err
	}
	if err := save(r.opt.Store, &top); err != nil {
		return err
	}
	*root = top
	next.Updated = now
	if err := save(r.opt.Store, &next); err != nil {
		return err
	}
	*g = next
	r.changedLocked()
	return nil
}

// Changed is closed at the next change of any goal (a goal set, a step
// moved, a judgement, an end), once it is saved: a watcher takes Changed,
// reads List, and waits; a change between the two closes the channel it
// holds, so none is missed.
func (r *Runtime) Changed() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.changed
}

// changedLocked wakes Changed's watchers (r.mu held).
func (r *Runtime) changedLocked() {
	close(r.changed)
	r.changed = make(chan struct{})
}

// tree is the budget of goal id's tree and what the tree spent.
func (r *Runtime) tree(id string) (Budget, Spent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	g := r.goals[rootOf(id)]
	if g == nil {
		g = r.goals[id]
	}
	if g == nil {
		return Budget{}, Spent{}
	}
	if g.Tree == nil {
		return g.Budget, g.Spent
	}
	return g.Budget, *g.Tree
}

// finish ends goal id in state with reason, cancels what has not started,
// and tells its owner.
func (r *Runtime) finish(ctx context.Context, id string, state State, reason string) (Goal, error) {
	var out Goal
	err := r.update(id, func(g *Goal) error {
		if g.State.Finished() {
			return fmt.Errorf("goal %s is already %s", id, g.State)
		}
		now := r.opt.Now()
		for i := range g.Steps {
			s := &g.Steps[i]
			if s.State == Planned || s.State == Ready || s.State == Waiting && s.Waiting != "approval" {
				g.move(s.ID, StepCancelled, now)
			}
		}
		g.State, g.Reason = state, reason
		out = copyGoal(g)
		return nil
	})
	if err != nil {
		return Goal{}, err
	}
	r.mu.Lock()
	if c := r.cancels[id]; c != nil && state == Cancelled {
		c() // a call it is making is cut short
	}
	r.mu.Unlock()
	r.tell(ctx, out, Report(out))
	// Its sub-goals end with it: they served it.
	for _, c := range r.List() {
		if c.Parent == id && !c.State.Finished() {
			r.finish(ctx, c.ID, Cancelled, fmt.Sprintf("its parent goal %s is %s", id, state))
		}
	}
	return out, nil
}

// tell sends text to goal g's owner.
func (r *Runtime) tell(ctx context.Context, g Goal, text string) {
	// The log says that the owner was told, not what: the text quotes tool
	// results, which may hold what only the owner should read.
	r.opt.Log.Info("goal: owner told", "goal", g.ID, "owner", g.Owner.String(), "state", g.State)
	if r.opt.Notify != nil {
		r.opt.Notify(context.WithoutCancel(ctx), g.Owner, text)
	}
}

// copyGoal is a deep copy, so that what callers hold never changes under them.
func copyGoal(g *Goal) Goal {
	b, err := json.Marshal(g)
	if err != nil {
		panic(err) // a Goal always marshals
	}
	var c Goal
	if err := json.Unmarshal(b, &c); err != nil {
		panic(err)
	}
	return c
}

// ParseUntilTime reads a deadline given as a time: "07:00" is the next
// 07:00 after now in loc (tonight's goal ends tomorrow morning); a date and
// a time ("2026-06-01 07:00", or RFC 3339) is that moment, which must be
// after now. Errors say which forms are read.
func ParseUntilTime(s string, now time.Time, loc *time.Location) (time.Time, error) {
	s = strings.TrimSpace(s)
	if loc == nil {
		loc = time.Local
	}
	now = now.In(loc)
	if hm, err := time.ParseInLocation("15:04", s, loc); err == nil {
		at := time.Date(now.Year(), now.Month(), now.Day(), hm.Hour(), hm.Minute(), 0, 0, loc)
		if !at.After(now) {
			at = time.Date(now.Year(), now.Month(), now.Day()+1, hm.Hour(), hm.Minute(), 0, 0, loc)
		}
		return at, nil
	}
	var at time.Time
	var err error
	if at, err = time.Parse(time.RFC3339, s); err != nil {
		if at, err = time.ParseInLocation("2006-01-02 15:04", s, loc); err != nil {
			return time.Time{}, fmt.Errorf("%q is not a time of day such as 07:00, nor a date and time such as 2026-06-01 07:00", s)
		}
	}
	if !at.After(now) {
		return time.Time{}, fmt.Errorf("%s is in the past", at.In(loc).Format("2006-01-02 15:04"))
	}
	return at, nil
}

// clockText is a deadline at as a person reads it from now: its time of day
// within a day, else its date too.
func clockText(at, now time.Time) string {
	if at.Sub(now) < 24*time.Hour {
		return at.Format("15:04")
	}
	return at.Format("2006-01-02 15:04")
}
