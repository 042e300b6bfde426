package main

import (
	"context"
	"strings"
	"sync/atomic"

	"github.com/clawedge/clawedge/channels"
)

// runStopHint is what run's console says when a person tries to leave it:
// the console is not the daemon, and ending one does not stop the other.
const runStopHint = "The daemon keeps running: Ctrl-C (or kill, or systemctl stop clawedge) stops it."

// mannered wraps a console's handler with what a person at it expects:
// exit and quit leave (chat) or say how to stop the daemon (run), and a
// failed model turn is remembered, for chat's exit status.
type mannered struct {
	h          channels.Handler
	leave      func() // nil: this console cannot be left (run's)
	failedTurn atomic.Bool
}

func (m *mannered) Respond(ctx context.Context, msg channels.Message) channels.Response {
	return m.RespondStream(ctx, msg, nil)
}

func (m *mannered) RespondStream(ctx context.Context, msg channels.Message, emit func(string)) channels.Response {
	if w := strings.ToLower(strings.TrimSpace(msg.Text)); w == "exit" || w == "quit" {
		if m.leave == nil {
			return channels.Response{Text: runStopHint}
		}
		m.leave()
		return channels.Response{}
	}
	var r channels.Response
	if sh, ok := m.h.(channels.StreamHandler); ok && emit != nil {
		r = sh.RespondStream(ctx, msg, emit)
	} else {
		r = m.h.Respond(ctx, msg)
	}
	if r.Turn && r.Failed {
		m.failedTurn.Store(true)
	}
	return r
}
