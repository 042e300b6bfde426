package localmodel

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/llm"
	"github.com/clawedge/clawedge/localmodel/chat"
	"github.com/clawedge/clawedge/localmodel/gguf"
	"github.com/clawedge/clawedge/localmodel/synth"
)

// qwen3Tiny writes the qwen3-tiny random-weight model (Qwen3's added tokens
// and chat template on the real vocabulary) for one test.
func qwen3Tiny(t *testing.T) string {
	t.Helper()
	needRunner(t)
	shape, err := synth.LookupShape("qwen3-tiny")
	if err != nil {
		t.Fatal(err)
	}
	m, err := synth.New(synth.Options{Shape: shape, Type: gguf.Q8_0, Seed: 1, Vocab: vocabPath})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "qwen3-tiny.gguf")
	if err := m.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// thinkTool has only bounded parameters, so that a random model's calls are short.
var thinkTool = grammar.ToolSpec{Name: "gpio/write", Params: []grammar.ArgSpec{
	{Name: "pin", Type: "string", Required: true, Enum: []string{"led", "relay"}},
	{Name: "value", Type: "integer", Required: true, Min: ptr(0.0), Max: ptr(1.0)},
}}

func ptr[T any](v T) *T { return &v }

// accepts walks the whole text through an automaton.
func accepts(a grammar.Automaton, text string) bool {
	s := a.Start()
	for i := 0; i < len(text) && s != grammar.Dead; i++ {
		s = a.Next(s, text[i])
	}
	return s != grammar.Dead && a.Accepting(s)
}

// TestThinkingModelThinksThenCalls: the qwen3-tiny model, its Qwen3 template
// read from the file, run by the real runner and constrained to calls. A
// generation that opens <think> writes free text there (text the calls-only
// constraint refuses), the runner closes the section at the think budget, and
// the answer after it is one valid call; a generation that does not think is
// a valid call as well. The stream's text, what a person reads, never carries
// the reasoning: here, where the answer is a call, it is empty. Random weights choose <think> or <tool_call> as the
// first token about as often, so a few seeds see both.
func TestThinkingModelThinksThenCalls(t *testing.T) {
	const budget = 8
	c := newTestClient(t, Options{Model: qwen3Tiny(t), ThinkBudget: budget})
	if c.Template().Family != chat.Qwen3 {
		t.Fatalf("qwen3-tiny's chat template read as %q, want qwen3", c.Template().Family)
	}
	spec := grammar.Spec{Form: grammar.FormQwen, Mode: grammar.ModeCalls, Tools: []grammar.ToolSpec{thinkTool}, MaxCalls: 1}
	callsOnly, err := grammar.Compile(spec)
	if err != nil {
		t.Fatal(err)
	}
	thought, direct := 0, 0
	for seed := uint64(1); seed <= 24 && (thought < 2 || direct < 1); seed++ {
		shown, fin, err := llm.Collect(must(c.Chat(context.Background(), llm.Request{
			Messages:  []llm.Message{{Role: llm.RoleUser, Content: "Switch the LED on."}},
			MaxTokens: 128, Constraint: &spec, Sampling: &llm.Sampling{Temperature: 1, Seed: seed},
		})))
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		text := shown
		if fin.Raw != "" {
			text = fin.Raw
		}
		answer := text
		if strings.HasPrefix(text, grammar.ThinkOpen) {
			thought++
			end := strings.Index(text, grammar.ThinkClose)
			if end < 0 {
				t.Fatalf("seed %d: the think section was not closed at the budget of %d tokens: %q", seed, budget, text)
			}
			if accepts(callsOnly, text) {
				t.Errorf("seed %d: the calls-only constraint accepts the whole output, so the think section proved nothing: %q", seed, text)
			}
			answer = strings.TrimLeft(text[end+len(grammar.ThinkClose):], " \t\r\n")
			if shown != "" {
				t.Fatalf("seed %d: the reasoning was passed on as the answer: %q", seed, shown)
			}
		} else {
			direct++
		}
		if fin.Reason != llm.ReasonStop || !accepts(callsOnly, answer) {
			t.Fatalf("seed %d: the answer (%s) is not a complete valid call: %q", seed, fin.Reason, text)
		}
		if len(fin.ToolCalls) != 1 || fin.ToolCalls[0].Name != "gpio/write" {
			t.Fatalf("seed %d: calls %+v (%v) from %q", seed, fin.ToolCalls, fin.CallsErr, text)
		}
		var args struct {
			Pin   string `json:"pin"`
			Value *int   `json:"value"`
		}
		if err := json.Unmarshal(fin.ToolCalls[0].Arguments, &args); err != nil || (args.Pin != "led" && args.Pin != "relay") ||
			args.Value == nil || *args.Value < 0 || *args.Value > 1 {
			t.Fatalf("seed %d: arguments %s: %v", seed, fin.ToolCalls[0].Arguments, err)
		}
	}
	if thought < 2 || direct < 1 {
		t.Fatalf("%d generations thought and %d did not: want at least 2 and 1", thought, direct)
	}
}
