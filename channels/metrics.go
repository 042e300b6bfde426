package channels

import (
	"strings"

	"github.com/clawedge/clawedge/internal/metrics"
)

// labelEscaper escapes a Prometheus label value (backslash, quote, newline).
var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

// LabelValue escapes s for use as a Prometheus label value.
func LabelValue(s string) string { return labelEscaper.Replace(s) }

// countCommand counts a command line in clawedge_commands_total by channel
// (console/stdin, telegram, mqtt, control...) and outcome.
func countCommand(channel string, err error) {
	outcome := "ok"
	if err != nil {
		outcome = "error"
	}
	metrics.GetOrCreateCounter(`clawedge_commands_total{channel="` + LabelValue(channel) + `",outcome="` + outcome + `"}`).Inc()
}
