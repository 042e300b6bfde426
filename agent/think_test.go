package agent

import (
	"context"
	"strings"

	"testing"

	"github.com/clawedge/clawedge/agent/agenttest"
	"github.com/clawedge/clawedge/llm"
)

// Options.Think (agent.think) reaches every step of a turn: off (the default),
// each request asks a thinking model to answer at once (NoThink); on, none does.
func TestThinkReachesEachStep(t *testing.T) {
	for _, think := range []bool{false, true} {
		e := newEnv(t, Options{Think: think},
			agenttest.Step{Calls: []llm.ToolCall{agenttest.Call("gpio/write", `{"pin":"led","value":1}`)}},
			agenttest.Step{Text: "Done."})
		e.p.Capabilities = llm.Caps{Context: 4096, Local: true, Tools: true, Grammar: true}
		if out := e.turn("switch the led on"); out.Text != "Done." {
			t.Fatalf("think %v: the turn said %+v", think, out)
		}
		reqs := e.p.Requests()
		if len(reqs) != 2 {
			t.Fatalf("think %v: %d steps, want 2", think, len(reqs))
		}
		for i, r := range reqs {
			if r.NoThink == think {
				t.Errorf("think %v: step %d has NoThink %v", think, i+1, r.NoThink)
			}
		}
	}
}

// thinkingModel marks the constraint Think, as the local client does for a Qwen3
// model that is not told NoThink, so that the scripted replies are read as a
// thinking model's.
type thinkingModel struct{ *agenttest.Provider }

func (m thinkingModel) Chat(ctx context.Context, req llm.Request) (llm.Stream, error) {
	if !req.NoThink && req.Constraint != nil {
		spec := *req.Constraint
		spec.Think = true
		req.Constraint = &spec
	}
	return m.Provider.Chat(ctx, req)
}

// With agent.think on, a thinking model's reasoning (a call written in it
// included) is not streamed, not in the answer, and not read back to the model:
// neither in the repair of an unreadable call nor in the next turn's history.
func TestThinkingNeverShownNorReadBack(t *testing.T) {
	e := newEnv(t, Options{Think: true},
		agenttest.Step{Text: "<think>\nThe LED: " + qwenCall("gpio/write", `{"pin": "led", "value": 1}`) + "\n</think>\n\n<tool_call>\n{\"name\": ", Chunk: 3},
		agenttest.Step{Text: "<think>\nI cannot call after all.\n</think>\n\nIt is on.", Chunk: 3},
		agenttest.Step{Text: "<think>\nThanks.\n</think>\n\nYou are welcome.", Chunk: 3})
	e.p.Capabilities = llm.Caps{Context: 4096, Local: true, Tools: true, Grammar: true}
	e.ag.opt.Provider = thinkingModel{e.p}
	var emitted strings.Builder
	out, err := e.ag.Turn(context.Background(), In{Channel: console, User: user, Text: "switch the led on",
		Emit: func(s string) { emitted.WriteString(s) }})
	if err != nil {
		t.Fatal(err)
	}
	if out.Text != "It is on." || strings.Contains(emitted.String(), "think>") || len(e.audited()) != 0 {
		t.Fatalf("answer %q, streamed %q, %d calls run", out.Text, emitted.String(), len(e.audited()))
	}
	if out := e.turn("thanks"); out.Text != "You are welcome." {
		t.Fatalf("second answer %q", out.Text)
	}
	reqs := e.p.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model steps, want 3", len(reqs))
	}
	for i, r := range reqs[1:] {
		for _, m := range r.Messages {
			if strings.Contains(m.Content, "think>") || strings.Contains(m.Content, "The LED:") {
				t.Errorf("step %d reads back reasoning: %s %q", i+2, m.Role, m.Content)
			}
		}
	}
}
