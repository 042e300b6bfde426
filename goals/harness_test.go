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
