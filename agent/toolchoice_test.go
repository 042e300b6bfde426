package agent

import (
	"encoding/json"
	"testing"

	"github.com/clawedge/clawedge/agent/agenttest"
	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/llm"
)

// Limits.ToolChoice (agent.tool_choice): required holds the turn's first
// step to a call, through the constraint's mode for a model that decodes
// with one and the request's ToolChoice for the others, and leaves the
// steps after it free to answer; none holds every step to an answer.
func TestToolChoiceReachesEachStep(t *testing.T) {
	call := agenttest.Step{Calls: []llm.ToolCall{{Name: "gpio/write", Arguments: json.RawMessage(`{"pin":"led","value":1}`)}}}
	type step struct {
		choice llm.ToolChoice
		mode   grammar.Mode
	}
	for _, c := range []struct {
		set     llm.ToolChoice
		grammar bool
		want    []step
	}{
		{llm.ToolChoiceRequired, true, []step{{llm.ToolChoiceRequired, grammar.ModeCalls}, {llm.ToolChoiceAuto, grammar.ModeAny}}},
		{llm.ToolChoiceRequired, false, []step{{llm.ToolChoiceRequired, ""}, {llm.ToolChoiceAuto, ""}}},
		{llm.ToolChoiceAuto, true, []step{{llm.ToolChoiceAuto, grammar.ModeAny}, {llm.ToolChoiceAuto, grammar.ModeAny}}},
		{llm.ToolChoiceNone, true, []step{{llm.ToolChoiceNone, grammar.ModeText}}},
		{llm.ToolChoiceNone, false, []step{{llm.ToolChoiceNone, ""}}}, // the call it returned anyway is not run
	} {
		e := newEnv(t, Options{Limits: Limits{ToolChoice: c.set}}, call, agenttest.Step{Text: "Done."})
		e.p.Capabilities = llm.Caps{Context: 4096, Local: c.grammar, Tools: true, Grammar: c.grammar}
		out := e.turn("switch the led on")
		if ran := len(e.audited()); (c.set == llm.ToolChoiceNone) != (ran == 0) || (e.level("led") == hal.High) != (ran > 0) {
			t.Errorf("%q (grammar %v): %d calls run, led %v; the turn said %+v", c.set, c.grammar, ran, e.level("led"), out)
		}
		var got []step
		for _, r := range e.p.Requests() {
			s := step{choice: r.ToolChoice}
			if r.Constraint != nil {
				s.mode = r.Constraint.Mode
			}
			got = append(got, s)
		}
		if len(got) != len(c.want) {
			t.Errorf("%q (grammar %v): %d steps %+v, want %+v", c.set, c.grammar, len(got), got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%q (grammar %v): step %d is %+v, want %+v", c.set, c.grammar, i+1, got[i], c.want[i])
			}
		}
	}
}
