package localmodel

import (
	"testing"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/llm"
	"github.com/clawedge/clawedge/localmodel/chat"
)

// A Qwen3 template that may think gets a constraint with the think section
// free; told NoThink, or a Qwen2 template, the constraint is unchanged.
func TestThinkingConstraint(t *testing.T) {
	spec := &grammar.Spec{Form: grammar.FormQwen, Mode: grammar.ModeCalls}
	for _, c := range []struct {
		family  chat.Family
		noThink bool
		want    bool
	}{{chat.Qwen3, false, true}, {chat.Qwen3, true, false}, {chat.Qwen2, false, false}} {
		got := thinking(chat.Template{Family: c.family}, llm.Request{Constraint: spec, NoThink: c.noThink})
		if got.Think != c.want {
			t.Errorf("%s noThink=%v: Think %v", c.family, c.noThink, got.Think)
		}
	}
	if spec.Think {
		t.Error("the request's spec was changed")
	}
}

// A request without a constraint gets one when the model may think, so that the
// runner's think budget bounds the reasoning and the reply is read past it: text
// and the template's calls, as without one.
func TestThinkingWithoutConstraint(t *testing.T) {
	got := thinking(chat.Template{Family: chat.Qwen3}, llm.Request{})
	if got == nil || !got.Think || got.Mode != grammar.ModeAny || got.Form != llm.TextForm || len(got.Tools) != 0 {
		t.Fatalf("Qwen3 without a constraint: %+v", got)
	}
	if _, err := grammar.Compile(*got); err != nil {
		t.Fatal(err)
	}
	if got := thinking(chat.Template{Family: chat.Qwen3}, llm.Request{NoThink: true}); got != nil {
		t.Errorf("told NoThink: %+v", got)
	}
	if got := thinking(chat.Template{Family: chat.Qwen2}, llm.Request{}); got != nil {
		t.Errorf("Qwen2: %+v", got)
	}
}
