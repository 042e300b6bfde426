package tools

import (
	"context"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/internal/metrics"
)

// countedCall is runCall, counted in clawedge_tool_calls_total by tool and
// outcome for the Prometheus endpoint. Tool names are registry names (a-z, /,
// _), so they need no escaping as label values.
func (r *Runner) countedCall(ctx context.Context, caller Caller, t Tool, call grammar.Invoke, prev []Result) CallReport {
	cr := r.runCall(ctx, caller, t, call, prev)
	outcome := "ok"
	if cr.Err != nil {
		outcome = "error"
	}
	metrics.GetOrCreateCounter(`clawedge_tool_calls_total{tool="` + cr.Tool + `",outcome="` + outcome + `"}`).Inc()
	return cr
}
