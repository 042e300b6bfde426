package mqtt

import (
	"sync/atomic"

	"github.com/clawedge/clawedge/internal/metrics"
)

// connectedNow is 1 while a channel is connected to its broker.
var connectedNow atomic.Int64

var (
	_        = metrics.GetOrCreateGauge("clawedge_mqtt_connected", func() float64 { return float64(connectedNow.Load()) })
	connects = metrics.GetOrCreateCounter("clawedge_mqtt_connects_total")
	commands = func(outcome string) *metrics.Counter {
		return metrics.GetOrCreateCounter(`clawedge_mqtt_commands_total{outcome="` + outcome + `"}`)
	}
)
