package tools

import "github.com/clawedge/clawedge/internal/metrics"

// counted counts a call's report in clawedge_tool_calls_total by tool and
// outcome for the Prometheus endpoint: every call that reached validation of
// its resolved arguments, from a command line or prepared (Runner.Call). Tool
// names are registry names (a-z, /, _), so they need no escaping as label values.
func counted(cr CallReport) CallReport {
	outcome := "ok"
	if cr.Err != nil {
		outcome = "error"
	}
	metrics.GetOrCreateCounter(`clawedge_tool_calls_total{tool="` + cr.Tool + `",outcome="` + outcome + `"}`).Inc()
	return cr
}
