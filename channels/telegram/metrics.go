package telegram

import "github.com/clawedge/clawedge/internal/metrics"

var (
	updatesReceived = metrics.GetOrCreateCounter("clawedge_telegram_updates_total")
	sendsOK         = metrics.GetOrCreateCounter(`clawedge_telegram_sends_total{outcome="ok"}`)
	sendsFailed     = metrics.GetOrCreateCounter(`clawedge_telegram_sends_total{outcome="error"}`)
)

// countSend counts one sendMessage call (each retry is one).
func countSend(err error) {
	if err != nil {
		sendsFailed.Inc()
		return
	}
	sendsOK.Inc()
}
