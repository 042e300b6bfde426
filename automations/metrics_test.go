package automations

import (
	"testing"

	"github.com/clawedge/clawedge/internal/metrics"
)

func TestCountRun(t *testing.T) {
	get := func(outcome string) uint64 {
		return metrics.GetOrCreateCounter(`clawedge_automation_runs_total{automation="count-run-test",outcome="` + outcome + `"}`).Get()
	}
	countRun("count-run-test", "ok")
	countRun("count-run-test", "skipped: not between 22:00 and 06:00")
	countRun("count-run-test", "error: do: gpio/write: the board is closed")
	countRun("count-run-test", "error: ask skipped: budget")
	if get("ok") != 1 || get("skipped") != 1 || get("error") != 2 {
		t.Errorf("ok %d, skipped %d, error %d", get("ok"), get("skipped"), get("error"))
	}
}
