package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clawedge/clawedge/agent"
	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/hal/sim"
	"github.com/clawedge/clawedge/llm"
	"github.com/clawedge/clawedge/llm/openai"
	"github.com/clawedge/clawedge/llm/openai/openaitest"
	"github.com/clawedge/clawedge/llm/remote"
	"github.com/clawedge/clawedge/llm/router"
	"github.com/clawedge/clawedge/localmodel"
	"github.com/clawedge/clawedge/peripherals"
	"github.com/clawedge/clawedge/policy"
	"github.com/clawedge/clawedge/store"
	"github.com/clawedge/clawedge/tools"
)

// fallbackEnv is an agent over a local-first router: the real local runner
// client first, a fake OpenAI-compatible server second.
type fallbackEnv struct {
	st    *store.Store
	board *hal.Board
	lan   *openaitest.Server
	ag    *agent.Agent
	rt    *router.Router
}

func newFallbackEnv(t *testing.T, local llm.Provider) *fallbackEnv {
	t.Helper()
	e := &fallbackEnv{lan: openaitest.New(t)}
	var err error
	if e.board, err = hal.Open(sim.New(), hal.Config{Pins: []hal.PinConfig{{Name: "led", GPIO: 17, Mode: hal.ModeOut}}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.board.Close() })
	reg := tools.NewRegistry()
	peripherals.Register(reg, e.board)
	if e.st, err = store.Open(t.TempDir(), store.Options{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.st.Close() })
	remote, err := openai.New(openai.Options{Options: remote.Options{Name: "lan", BaseURL: e.lan.URL, Model: "qwen2.5:7b", Context: 32768}})
	if err != nil {
		t.Fatal(err)
	}
	if e.rt, err = router.New([]router.Entry{{Provider: local}, {Provider: remote}}, router.Options{}); err != nil {
		t.Fatal(err)
	}
	if e.ag, err = agent.New(agent.Options{Provider: e.rt, Runner: &tools.Runner{Registry: reg, Audit: e.st}, Store: e.st,
		Policy: &policy.Policy{Default: policy.Allow}}); err != nil {
		t.Fatal(err)
	}
	return e
}

// turnFallsBack runs a turn that the remote model answers with a gpio/write
// call and a sentence, and checks the LED, the answer and the recorded routes.
func (e *fallbackEnv) turnFallsBack(t *testing.T, text, why string) {
	t.Helper()
	e.lan.Push(openaitest.ToolCall("gpio/write", `{"pin": "led", "value": 1}`), openaitest.Text("The LED is on."))
	out, err := e.ag.Turn(context.Background(), agent.In{Channel: "console/stdin", User: "pi", Text: text})
	if err != nil {
		t.Fatal(err)
	}
	if out.Text != "The LED is on." || out.Stop != "answered" || len(out.Calls) != 1 || out.Calls[0].Status != "ok" {
		t.Fatalf("turn: %+v", out)
	}
	if p, _ := e.board.Pin("led"); p != nil {
		if l, _ := p.Read(); l != hal.High {
			t.Errorf("led is %v after the turn", l)
		}
	}
	steps, err := e.st.StepsTail(10)
	if err != nil || len(steps) != 2 {
		t.Fatalf("%d steps recorded (%v), want 2", len(steps), err)
	}
	for _, s := range steps {
		var rec struct{ Provider, Route string }
		if err := json.Unmarshal(s.Data, &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Provider != "lan" || !strings.Contains(rec.Route, "remote lan after local") {
			t.Errorf("step route: provider %q route %q", rec.Provider, rec.Route)
		}
		if why != "" && !strings.Contains(rec.Route, why) {
			t.Errorf("route %q does not say %q", rec.Route, why)
		}
	}
	var local router.Stats
	for _, s := range e.rt.Stats() {
		if s.Name == "local" {
			local = s
		}
	}
	if local.Failures+local.Skips == 0 {
		t.Errorf("local stats %+v: the failure is not counted", local)
	}
}

// The local model file does not fit in the memory the board has: the runner
// client refuses before loading it, and the router goes to the remote model.
func TestFallbackWhenLocalModelTooLarge(t *testing.T) {
	model := needLocalModel(t)
	meminfo := filepath.Join(t.TempDir(), "meminfo")
	os.WriteFile(meminfo, []byte("MemTotal: 1024000 kB\nMemFree: 2000 kB\nMemAvailable: 3000 kB\n"), 0o644)
	client, err := localmodel.New(localmodel.Options{Model: model, Runner: filepath.Join(filepath.Dir(binPath), "clawedge-llm"),
		Threads: 1, Context: 2048, MemInfo: meminfo})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	e := newFallbackEnv(t, client)
	e.turnFallsBack(t, "turn on the led", "capacity")
	if client.Starts() != 0 {
		t.Errorf("the runner was started %d times for a model that does not fit", client.Starts())
	}
}

// killedRunner kills the runner process right after a generation starts,
// while it is still reading the prompt: the local stream fails before any text.
type killedRunner struct {
	*localmodel.Client
	t *testing.T
}

func (k killedRunner) Chat(ctx context.Context, req llm.Request) (llm.Stream, error) {
	s, err := k.Client.Chat(ctx, req)
	if err != nil {
		return nil, err
	}
	pid := k.Client.PID()
	if pid <= 0 {
		k.t.Errorf("no runner PID after a generation started")
		return s, nil
	}
	syscall.Kill(pid, syscall.SIGKILL)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join("/proc", itoa(pid))); err != nil {
			break
		}
	}
	return s, nil
}

func itoa(n int) string { return strconv.Itoa(n) }

// The runner is killed in the middle of a request (as the kernel's OOM killer
// would): the router answers with the remote model, and the next request
// starts a new runner.
func TestFallbackWhenRunnerKilled(t *testing.T) {
	model := needLocalModel(t)
	client, err := localmodel.New(localmodel.Options{Model: model, Runner: filepath.Join(filepath.Dir(binPath), "clawedge-llm"),
		Threads: 1, Context: 4096})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	e := newFallbackEnv(t, killedRunner{client, t})
	// A long message keeps the runner busy reading the prompt when it is killed.
	long := "turn on the led. " + strings.Repeat("The garden needs light in the evening. ", 120)
	e.turnFallsBack(t, long, "")
	// The local model works again afterwards: a new runner starts.
	s, err := client.Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}, MaxTokens: 4})
	if err != nil {
		t.Fatal(err)
	}
	if _, fin, err := llm.Collect(s); err != nil || fin == nil {
		t.Fatalf("after the kill: %v", err)
	}
	if client.Starts() < 2 {
		t.Errorf("runner started %d times, want a restart after the kill", client.Starts())
	}
}
