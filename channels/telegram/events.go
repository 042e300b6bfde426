package telegram

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Event is one pin-edge notification: when Wait returns, Users are told.
type Event struct {
	Name string // the pin, for the default text and the log
	// Wait blocks until the edge and returns the logical level after it (true: high).
	// cmd/clawedge adapts hal.Pin.WaitForEdge to it, so this package needs no hal.
	Wait  func(ctx context.Context) (high bool, err error)
	Users []int64
	Text  string // "button pressed"; "" means "<name> rising" / "<name> falling"
}

// Sender sends a plain-text message to a chat; the Channel is one (Notify).
type Sender interface {
	Notify(ctx context.Context, chat int64, text string) error
}

// Notifier watches pins and sends their events.
type Notifier struct {
	Sender Sender
	Events []Event
	Log    *slog.Logger
	// MinInterval is the least time between two messages of one event: a bouncing
	// contact or a flapping sensor must not flood a phone. Edges in between are
	// dropped. Default 2 s.
	MinInterval time.Duration
	Now         func() time.Time
}

// Run watches every event until ctx ends.
func (n *Notifier) Run(ctx context.Context) {
	if n.Log == nil {
		n.Log = slog.Default()
	}
	if n.Now == nil {
		n.Now = time.Now
	}
	if n.MinInterval <= 0 {
		n.MinInterval = 2 * time.Second
	}
	var wg sync.WaitGroup
	for _, e := range n.Events {
		wg.Go(func() { n.watch(ctx, e) })
	}
	wg.Wait()
}

func (n *Notifier) watch(ctx context.Context, e Event) {
	var sends sync.WaitGroup
	defer sends.Wait()
	var last time.Time
	for ctx.Err() == nil {
		high, err := e.Wait(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			n.Log.Warn("telegram notify: waiting for an edge", "pin", e.Name, "err", err)
			select { // do not spin on a pin that keeps failing
			case <-time.After(time.Second):
			case <-ctx.Done():
			}
			continue
		}
		now := n.Now()
		if !last.IsZero() && now.Sub(last) < n.MinInterval {
			n.Log.Debug("telegram notify: edge within min interval, not sent", "pin", e.Name)
			continue
		}
		last = now
		text := e.Text
		if text == "" {
			text = e.Name + " falling"
			if high {
				text = e.Name + " rising"
			}
		}
		text += " at " + now.Format("15:04")
		for _, u := range e.Users {
			// Sent in the background: the next edge must be waited for now.
			sends.Go(func() {
				sctx, cancel := context.WithTimeout(ctx, time.Minute)
				defer cancel()
				if err := n.Sender.Notify(sctx, u, text); err != nil && ctx.Err() == nil {
					n.Log.Warn("telegram notify: not delivered", "pin", e.Name, "user", u, "err", err)
				}
			})
		}
	}
}
