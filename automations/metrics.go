package automations

import (
	"strings"

	"github.com/clawedge/clawedge/internal/metrics"
)

// countRun counts a finished run in clawedge_automation_runs_total by
// automation and outcome (ok, error or skipped: the word before the colon of
// execute's outcome). Automation names are validated (a-z, 0-9, _ and -), so
// they need no escaping as label values.
func countRun(name, outcome string) {
	kind, _, _ := strings.Cut(outcome, ":")
	metrics.GetOrCreateCounter(`clawedge_automation_runs_total{automation="` + name + `",outcome="` + kind + `"}`).Inc()
}
