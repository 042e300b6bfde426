package agent

import (
	"testing"

	"github.com/clawedge/clawedge/agent/agenttest"
	"github.com/clawedge/clawedge/llm"
)

// Limits.CallsPerOutput (agent.calls_per_output) bounds the calls of one output
// in the constraint the local model decodes with; unset, the grammar's default.
func TestCallsPerOutputReachesTheConstraint(t *testing.T) {
	for _, c := range []struct{ set, want int }{{0, 0}, {7, 7}} {
		e := newEnv(t, Options{Limits: Limits{CallsPerOutput: c.set}}, agenttest.Step{Text: "Done."})
		e.p.Capabilities = llm.Caps{Context: 4096, Local: true, Tools: true, Grammar: true}
		e.turn("hello")
		reqs := e.p.Requests()
		if len(reqs) == 0 || reqs[0].Constraint == nil {
			t.Fatalf("no constrained request: %+v", reqs)
		}
		if got := reqs[0].Constraint.MaxCalls; got != c.want {
			t.Errorf("CallsPerOutput %d: constraint MaxCalls %d, want %d", c.set, got, c.want)
		}
	}
}
