package main

import (
	"context"
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
	"github.com/clawedge/clawedge/store"
	"github.com/clawedge/clawedge/tools"
)

// callsFirst asks the local model for calls only on a turn's first step and for
// text only after: with random weights the model would otherwise rarely choose
// either, and this test is about what the constraint guarantees, not about wits.
type callsFirst struct {
	llm.Provider
	n int
}

func (c *callsFirst) Chat(ctx context.Context, req llm.Request) (llm.Stream, error) {
	c.n++
	if req.Constraint != nil {
		spec := *req.Constraint
		spec.Mode = grammar.ModeCalls
		if c.n > 1 {
			spec.Mode = grammar.ModeText
		}
		req.Constraint = &spec
	}
	return c.Provider.Chat(ctx, req)
}

// The local runner on the tiny random model, constrained by the grammar of the
// allowed calls: whatever the weights say, the call it emits parses, validates,
// is audited and runs on the simulated board, and the turn answers.
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
	ag, err := agent.New(agent.Options{Provider: &callsFirst{Provider: client}, Runner: &tools.Runner{Registry: reg, Audit: st}, Store: st,
		Policy: &agent.Policy{Default: agent.Deny, Tools: map[string]agent.Action{"gpio/write": agent.Allow}},
		Limits: agent.Limits{ReplyTokens: 256}})
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
