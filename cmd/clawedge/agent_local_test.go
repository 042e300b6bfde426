package main

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawedge/clawedge/agent"
	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/hal/sim"
	"github.com/clawedge/clawedge/llm"
	"github.com/clawedge/clawedge/localmodel"
	"github.com/clawedge/clawedge/peripherals"
	"github.com/clawedge/clawedge/policy"
	"github.com/clawedge/clawedge/store"
	"github.com/clawedge/clawedge/tools"
)

// The local runner on the tiny random model, constrained by the grammar of the
// allowed calls: whatever the weights say, the call it emits parses, validates,
// is audited and runs on the simulated board, and the turn answers.
// agent.tool_choice required holds the first step to calls and the step limit
// the next to text: with random weights the model would otherwise rarely
// choose either, and this test is about what the constraint guarantees, not
// about wits.
func TestAgentLocalConstrained(t *testing.T) {
	model := needLocalModel(t)
	client, err := localmodel.New(localmodel.Options{Model: model, Runner: filepath.Join(filepath.Dir(binPath), "clawedge-llm"),
		Threads: 1, Context: 2048})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	b, err := hal.Open(sim.New(), hal.Config{Pins: []hal.PinConfig{{Name: "led", GPIO: 17, Mode: hal.ModeOut}, {Name: "relay", GPIO: 22, Mode: hal.ModeOut}}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	reg := tools.NewRegistry()
	peripherals.Register(reg, b)
	st, err := store.Open(t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// Only gpio/write is allowed, so the grammar allows exactly its calls.
	ag, err := agent.New(agent.Options{Provider: client, Runner: &tools.Runner{Registry: reg, Audit: st}, Store: st,
		Policy: &policy.Policy{Default: policy.Deny, Tools: map[string]policy.Action{"gpio/write": policy.Allow}},
		Limits: agent.Limits{ReplyTokens: 256, ToolChoice: llm.ToolChoiceRequired, MaxIterations: 1}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := ag.Turn(context.Background(), agent.In{Channel: "console/stdin", User: "pi", Text: "switch something"})
	if err != nil {
		t.Fatal(err)
	}
	// Every call the model emitted was a well-formed, valid gpio/write (ModeCalls allows
	// several), each audited and run; at most MaxRepeats of a kind.
	es, _ := st.Tail(100)
	if len(es) == 0 {
		t.Fatalf("no call ran; answer %+v", out)
	}
	for _, e := range es {
		if !strings.HasPrefix(e.Command, "@gpio/write{pin=") || !e.Done || !e.OK {
			t.Errorf("audit entry %v", e)
		}
	}
	for _, c := range out.Calls {
		if c.Status != "ok" && !(c.Status == "refused" && strings.Contains(c.Result, "already ran")) {
			t.Errorf("call %+v", c)
		}
	}
	if out.Text == "" || (out.Stop != "answered" && out.Stop != "repeat") {
		t.Errorf("%+v", out)
	}
	t.Logf("the random model made %d calls, the first %s; the turn ended: %s", len(es), es[0].Command, out.Stop)
}

// forcedModes asks the local model for the mode modes[step] at each step of a
// turn (the last one for every later step).
type forcedModes struct {
	llm.Provider
	modes []grammar.Mode
	n     int
}

func (f *forcedModes) Chat(ctx context.Context, req llm.Request) (llm.Stream, error) {
	if req.Constraint != nil && req.Constraint.Mode == grammar.ModeAny { // the agent's own text-only steps stay so
		spec := *req.Constraint
		spec.Mode = f.modes[min(f.n, len(f.modes)-1)]
		spec.MaxCalls = 1 // one call per step: each scenario counts steps
		req.Constraint = &spec
	}
	f.n++
	return f.Provider.Chat(ctx, req)
}

// pumpTool is a tool without parameters whose runs can be made to fail.
type pumpTool struct {
	fail bool
	runs int
}

func (p *pumpTool) Spec() grammar.ToolSpec {
	return grammar.ToolSpec{Name: "pump/start", Doc: "Start the garden pump."}
}

func (p *pumpTool) Run(ctx context.Context, args grammar.Args) (tools.Result, error) {
	p.runs++
	if p.fail {
		return tools.Result{}, errors.New("pump: no water pressure")
	}
	return tools.Result{Text: "pump started"}, nil
}

// The scenarios of the remote tests, with the tiny random model constrained:
// a tool error then an answer, a repeated call stopped, an iteration budget.
func TestAgentLocalConstrainedScenarios(t *testing.T) {
	model := needLocalModel(t)
	client, err := localmodel.New(localmodel.Options{Model: model, Runner: filepath.Join(filepath.Dir(binPath), "clawedge-llm"),
		Threads: 1, Context: 2048})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	calls, text := grammar.ModeCalls, grammar.ModeText
	for _, tc := range []struct {
		name     string
		fail     bool
		modes    []grammar.Mode
		limits   agent.Limits
		stop     string
		status   string
		minCalls int
	}{
		{"tool error then answer", true, []grammar.Mode{calls, text}, agent.Limits{ReplyTokens: 256}, "answered", "failed", 1},
		{"same call stopped", false, []grammar.Mode{calls}, agent.Limits{ReplyTokens: 256, MaxRepeats: 2, MaxIterations: 10}, "repeat", "ok", 2},
		// At the limit the agent asks for text only: the model cannot call again.
		{"iteration budget", false, []grammar.Mode{calls}, agent.Limits{ReplyTokens: 256, MaxRepeats: 100, MaxIterations: 3}, "answered", "ok", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pump := &pumpTool{fail: tc.fail}
			reg := tools.NewRegistry()
			if err := reg.Register(pump); err != nil {
				t.Fatal(err)
			}
			st, err := store.Open(t.TempDir(), store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			ag, err := agent.New(agent.Options{Provider: &forcedModes{Provider: client, modes: tc.modes},
				Runner: &tools.Runner{Registry: reg, Audit: st}, Store: st,
				Policy: &policy.Policy{Default: policy.Allow}, Limits: tc.limits})
			if err != nil {
				t.Fatal(err)
			}
			out, err := ag.Turn(context.Background(), agent.In{Channel: "console/stdin", User: "pi", Text: "water the garden"})
			if err != nil {
				t.Fatal(err)
			}
			if out.Stop != tc.stop || strings.TrimSpace(out.Text) == "" {
				t.Fatalf("turn ended %q with %q, want %q and an answer", out.Stop, out.Text, tc.stop)
			}
			if len(out.Calls) < tc.minCalls || pump.runs < 1 || (tc.limits.MaxIterations == 3 && len(out.Calls) != 3) {
				t.Fatalf("%d calls, %d runs: %+v\nanswer: %q", len(out.Calls), pump.runs, out.Calls, out.Text)
			}
			for _, c := range out.Calls {
				if c.Call != "@pump/start{}" {
					t.Errorf("call %+v", c)
				}
			}
			if out.Calls[0].Status != tc.status {
				t.Errorf("first call %+v, want status %s", out.Calls[0], tc.status)
			}
			if tc.limits.MaxIterations == 3 && !strings.Contains(out.Text, "limit of 3 tool steps") {
				t.Errorf("the answer does not say why no more tools ran: %q", out.Text)
			}
			es, _ := st.Tail(100)
			if len(es) != pump.runs {
				t.Errorf("%d audit entries for %d runs", len(es), pump.runs)
			}
			t.Logf("%s: %d calls, %d runs; answer: %.120q", out.Stop, len(out.Calls), pump.runs, out.Text)
		})
	}
}
