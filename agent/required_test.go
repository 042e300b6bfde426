package agent

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/clawedge/clawedge/agent/agenttest"
	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/llm"
)

// agent.tool_choice required against a server that ignores it (issue 26: a
// real llama-server without a constraint answered text, which was shown as
// the answer): the text is never shown or kept as an answer; the model is
// told once that a call is required, and a second text reply fails the turn
// with an error that says the server ignored the requirement.
func TestRequiredIgnoredFailsTheTurn(t *testing.T) {
	for _, grammarCaps := range []bool{false, true} {
		e := newEnv(t, Options{Limits: Limits{ToolChoice: llm.ToolChoiceRequired}},
			agenttest.Step{Text: "Sure, the LED is on."}, agenttest.Step{Text: "It is on, really."})
		e.p.Capabilities = llm.Caps{Context: 4096, Tools: true, Grammar: grammarCaps}
		var emitted strings.Builder
		out, err := e.ag.Turn(context.Background(), In{Channel: console, User: user, Text: "turn on the led",
			Emit: func(s string) { emitted.WriteString(s) }})
		if err != nil {
			t.Fatal(err)
		}
		if out.State != Error || out.Stop != "model" || !strings.Contains(out.Text, "ignored tool_choice required") {
			t.Errorf("grammar %v: turn %+v", grammarCaps, out)
		}
		for _, shown := range []string{out.Text, emitted.String()} {
			if strings.Contains(shown, "LED is on") || strings.Contains(shown, "really") {
				t.Errorf("grammar %v: the text was shown as an answer: %q", grammarCaps, shown)
			}
		}
		reqs := e.p.Requests()
		if len(reqs) != 2 {
			t.Fatalf("grammar %v: %d requests, want 2 (one retry)", grammarCaps, len(reqs))
		}
		for i, r := range reqs {
			if r.ToolChoice != llm.ToolChoiceRequired {
				t.Errorf("grammar %v: request %d tool_choice %q", grammarCaps, i+1, r.ToolChoice)
			}
		}
		last := reqs[1].Messages[len(reqs[1].Messages)-1]
		if last.Role != llm.RoleUser || !strings.Contains(last.Content, "requires a tool call") {
			t.Errorf("grammar %v: the retry does not say why: %+v", grammarCaps, last)
		}
		if len(e.audited()) != 0 {
			t.Errorf("grammar %v: something ran", grammarCaps)
		}
	}
}

// Told once, a model that then calls has its call run, and the turn goes on
// (the steps after a call are free to answer).
func TestRequiredRetriedThenCalls(t *testing.T) {
	call := agenttest.Step{Calls: []llm.ToolCall{{Name: "gpio/write", Arguments: json.RawMessage(`{"pin":"led","value":1}`)}}}
	e := newEnv(t, Options{Limits: Limits{ToolChoice: llm.ToolChoiceRequired}},
		agenttest.Step{Text: "I would rather chat."}, call, agenttest.Step{Text: "Done."})
	out := e.turn("turn on the led")
	if out.State != Idle || e.level("led") != hal.High || strings.Contains(out.Text, "rather chat") || !strings.Contains(out.Text, "Done.") {
		t.Errorf("turn %+v, led %v", out, e.level("led"))
	}
	var choices []llm.ToolChoice
	for _, r := range e.p.Requests() {
		choices = append(choices, r.ToolChoice)
	}
	if len(choices) != 3 || choices[0] != llm.ToolChoiceRequired || choices[1] != llm.ToolChoiceRequired || choices[2] != llm.ToolChoiceAuto {
		t.Errorf("tool choices %q", choices)
	}
}
