package daemon

import (
	"context"
	"strings"
	"sync/atomic"

	"github.com/clawedge/clawedge/channels"
)

// RunStopHint is what run's console says when a person tries to leave it:
// the console is not the daemon, and ending one does not stop the other.
const RunStopHint = "The daemon keeps running: Ctrl-C (or kill, or systemctl stop clawedge) stops it."

// Mannered wraps a console's handler with what a person at it expects:
// exit and quit leave (chat) or say how to stop the daemon (run), and a
// failed model turn is remembered, for chat's exit status.
type Mannered struct {
	H          channels.Handler
	Leave      func() // nil: this console cannot be left (run's)
	FailedTurn atomic.Bool
}

func (m *Mannered) Respond(ctx context.Context, msg channels.Message) channels.Response {
	return m.RespondStream(ctx, msg, nil)
}

func (m *Mannered) RespondStream(ctx context.Context, msg channels.Message, emit func(string)) channels.Response {
	if w := strings.ToLower(strings.TrimSpace(msg.Text)); w == "exit" || w == "quit" {
		if m.Leave == nil {
			return channels.Response{Text: RunStopHint}
		}
		m.Leave()
		return channels.Response{}
	}
	var r channels.Response
	if sh, ok := m.H.(channels.StreamHandler); ok && emit != nil {
		r = sh.RespondStream(ctx, msg, emit)
	} else {
		r = m.H.Respond(ctx, msg)
	}
	if r.Turn && r.Failed {
		m.FailedTurn.Store(true)
	}
	return r
}
