package daemon

// This file: what the daemon tells waiting goals of the pins (docs/goals.md,
// "For the daemon"). A goal waiting for "@gpio/read{pin="door"} is high" is
// judged when the door's level changes, not only every goals.poll: every
// input with edge detection is provided to the goals' feed, and each change
// of its level is fed to it.
//
// The changes are found by reading the inputs every pinPoll, not by a wait
// for their edges: on a real board (hal/periph) the waits on one line take
// turns, each edge goes to one waiter only and a waiter drops the edges
// queued before it, so a second waiter beside the automations', Telegram's
// and MQTT's would take edges from them. A read takes none.

import (
	"context"
	"time"

	"github.com/clawedge/clawedge/goals"
	"github.com/clawedge/clawedge/hal"
)

// pinPoll is how often the inputs goals may watch are read: a door that
// opens is judged well within a second (the runtime judges changes at most
// once a second), for a read of a few pins ten times a second.
const pinPoll = 100 * time.Millisecond

// watchedPins are the pins fed to the goals: the inputs with edge
// detection (board.pins: mode: in, edge: both, rising or falling).
func (a *Core) watchedPins() []*hal.Pin {
	if a.board == nil {
		return nil
	}
	var pins []*hal.Pin
	for _, p := range a.board.Pins() {
		if c := p.Config(); c.Mode == hal.ModeIn && c.Edge != hal.EdgeNone {
			pins = append(pins, p)
		}
	}
	return pins
}

// providePins says the feed has the changes of every watched pin, so that
// a goal waiting on one is judged at its changes rather than polled.
func (a *Core) providePins() error {
	for _, p := range a.watchedPins() {
		if err := a.feed.Provide(goals.PinRead(p.Name())); err != nil {
			return err
		}
	}
	return nil
}

// feedPins reads pins every pinPoll until ctx ends and feeds each change of
// a level. A read that fails (the board closing) feeds nothing: the level
// last fed stands until a read succeeds again.
func (a *Core) feedPins(ctx context.Context, pins []*hal.Pin) {
	last := make([]hal.Level, len(pins))
	known := make([]bool, len(pins))
	read := func(feed bool) {
		for i, p := range pins {
			l, err := p.Read()
			if err != nil {
				continue
			}
			if feed && (!known[i] || l != last[i]) {
				a.feed.Pin(p.Name(), l == hal.High, time.Now())
			}
			last[i], known[i] = l, true
		}
	}
	read(false) // the levels at the start: a goal reads its check itself
	t := time.NewTicker(pinPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			read(true)
		}
	}
}
