package goals_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawedge/clawedge/goals"
	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/hal/sim"
	"github.com/clawedge/clawedge/internal/rigtest"
	"github.com/clawedge/clawedge/llm"
	"github.com/clawedge/clawedge/llm/openai"
	"github.com/clawedge/clawedge/llm/openai/openaitest"
	"github.com/clawedge/clawedge/llm/remote"
	"github.com/clawedge/clawedge/policy"
	"github.com/clawedge/clawedge/store"
	"github.com/clawedge/clawedge/tools"
)

// env is a goal runtime on real parts: the rig (a bbolt store, the simulated
// board with the GPIO tools, the one call path with the policy's
// authorizer) and a scripted OpenAI-compatible model server.
type env struct {
	t      *testing.T
	dir    string
	st     *store.Store
	rig    *rigtest.Rig
	sim    *sim.Sim
	reg    *tools.Registry
	auth   *policy.Authorizer
	runner *tools.Runner
	srv    *openaitest.Server
	model  llm.Provider
	rt     *goals.Runtime
	cancel context.CancelFunc
	done   chan struct{}

	mu   sync.Mutex
	told []string
}

var owner = tools.Principal{Channel: "telegram", User: "telegram:42", Actor: tools.Person}

func newEnv(t *testing.T, pol *policy.Policy, opt goals.Options) *env {
	t.Helper()
	rig := rigtest.New(t, rigtest.Options{Policy: pol, ApprovalTimeout: 5 * time.Second, Pins: []hal.PinConfig{
		{Name: "led", GPIO: 17, Mode: hal.ModeOut},
		{Name: "relay", GPIO: 22, Mode: hal.ModeOut},
		{Name: "soil", GPIO: 27, Mode: hal.ModeIn},
		{Name: "door", GPIO: 23, Mode: hal.ModeIn},
	}})
	e := &env{t: t, rig: rig, dir: rig.Dir, st: rig.Store, sim: rig.Sim, reg: rig.Registry, auth: rig.Auth, runner: rig.Runner}
	var err error
	e.srv = openaitest.New(t)
	e.model, err = openai.New(openai.Options{Options: remote.Options{Name: "lan", BaseURL: e.srv.URL, Model: "m"}})
	if err != nil {
		t.Fatal(err)
	}
	opt.Store, opt.Runner = e.st, e.runner
	if opt.Model == nil {
		opt.Model = e.model
	}
	opt.Notify = func(_ context.Context, to tools.Principal, text string) {
		e.mu.Lock()
		e.told = append(e.told, to.User+": "+text)
		e.mu.Unlock()
	}
	if opt.Poll == 0 {
		opt.Poll = 10 * time.Millisecond
	}
	e.start(opt)
	return e
}

func (e *env) start(opt goals.Options) {
	e.t.Helper()
	rt, err := goals.New(opt)
	if err != nil {
		e.t.Fatal(err)
	}
	e.rt = rt
	ctx, cancel := context.WithCancel(context.Background())
	e.cancel, e.done = cancel, make(chan struct{})
	go func() { rt.Run(ctx); close(e.done) }()
	e.t.Cleanup(e.stop)
}

func (e *env) stop() {
	if e.cancel != nil {
		e.cancel()
		<-e.done
		e.cancel = nil
	}
}

// until waits for goal id to reach state, and returns it.
func (e *env) until(id string, state goals.State) goals.Goal {
	e.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		g, err := e.rt.Get(id)
		if err != nil {
			e.t.Fatal(err)
		}
		if g.State == state {
			return g
		}
		if g.State.Finished() || time.Now().After(deadline) {
			e.t.Fatalf("goal %s is %s (%s), want %s\n%s", id, g.State, g.Reason, state, goals.Show(g))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (e *env) level(pin string) hal.Level { return e.rig.Level(e.t, pin) }

// toldWith waits until the owner was told something containing want (a
// goal's report follows its saved state).
func (e *env) toldWith(want string) string {
	e.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(e.toldText(), want) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	return e.toldText()
}

func (e *env) toldText() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return strings.Join(e.told, "\n")
}

// audited returns the audit trail's entries.
func (e *env) audited() []store.AuditEntry {
	e.t.Helper()
	es, err := e.st.Tail(1000)
	if err != nil {
		e.t.Fatal(err)
	}
	return es
}

// plan is a scripted plan reply.
func plan(text string) openaitest.Reply { return openaitest.Text(text) }

// score is a scripted judgement.
func score(n int, why string) openaitest.Reply {
	return openaitest.Text("@goal/score{score=" + strconv.Itoa(n) + ";reason=\"" + why + "\"}")
}

// fakeClock is the runtime's clock in the tests of goals that wait for the
// world: it moves only when the test moves it, and its timers fire then.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

type fakeTimer struct {
	at      time.Time
	c       chan time.Time
	stopped bool
}

func newFakeClock(at time.Time) *fakeClock { return &fakeClock{now: at} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) NewTimer(d time.Duration) (<-chan time.Time, func() bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	tm := &fakeTimer{at: c.now.Add(d), c: make(chan time.Time, 1)}
	if d <= 0 {
		tm.c <- c.now
	} else {
		c.timers = append(c.timers, tm)
	}
	return tm.c, func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		tm.stopped = true
		return true
	}
}

// pending is the number of timers set and not fired nor stopped (each a
// pursuit asleep), and the earliest of them.
func (c *fakeClock) pending() (int, time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, first := 0, time.Time{}
	for _, tm := range c.timers {
		if tm.stopped {
			continue
		}
		if n == 0 || tm.at.Before(first) {
			first = tm.at
		}
		n++
	}
	return n, first
}

// set moves the clock to t, firing the timers due by then.
func (c *fakeClock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
	kept := c.timers[:0]
	for _, tm := range c.timers {
		switch {
		case tm.stopped:
		case !tm.at.After(t):
			tm.c <- t
		default:
			kept = append(kept, tm)
		}
	}
	c.timers = kept
}

// run moves the clock to `to`, from one timer to the next, each time once
// every goal being pursued is asleep (has a timer set): the goals see every
// moment they asked to be woken at, however loaded the machine, and a night
// passes in as many rounds as the goals need. It returns early when stop
// says so (nil: never).
func (e *env) run(c *fakeClock, to time.Time, stop func() bool) {
	e.t.Helper()
	for {
		if stop != nil && stop() {
			return
		}
		alive := 0
		for _, g := range e.rt.List() {
			if !g.State.Finished() {
				alive++
			}
		}
		n, first := c.pending()
		if alive == 0 || n >= alive && n > 0 {
			if alive == 0 || first.After(to) {
				c.set(to)
				return
			}
			c.set(first)
			continue
		}
		time.Sleep(200 * time.Microsecond) // a pursuit is in a round: let it finish
	}
}

// until waits (in real time) until cond holds of goal id.
func (e *env) waitFor(id string, what string, cond func(goals.Goal) bool) goals.Goal {
	e.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		g, err := e.rt.Get(id)
		if err != nil {
			e.t.Fatal(err)
		}
		if cond(g) {
			return g
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("goal %s never %s:\n%s", id, what, goals.Show(g))
		}
		time.Sleep(time.Millisecond)
	}
}
