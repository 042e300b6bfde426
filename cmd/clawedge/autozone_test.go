package main

import (
	"testing"
	"time"

	"github.com/clawedge/clawedge/daemon"
)

// The CLI prints a daemon's times in the daemon's zone, from the name it sent.
func TestAutoReplyLocation(t *testing.T) {
	for name, want := range map[string]string{
		"":              "UTC",
		"UTC":           "UTC",
		"Local":         time.Local.String(),
		"Europe/Berlin": "Europe/Berlin",
		"Mars/Olympus":  "UTC",
	} {
		if got := (daemon.AutoReply{Timezone: name}).Location().String(); got != want {
			t.Errorf("%q: %s, want %s", name, got, want)
		}
	}
}
