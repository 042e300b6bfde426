package daemon

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/clawedge/clawedge/config"
	"github.com/clawedge/clawedge/goals"
	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/hal/sim"
)

// TestGoalFeedPins: the inputs with edge detection are provided to the
// goals' feed and each change of their level is fed to it; an input without
// edge detection and an output are not (a goal waiting on them is polled).
// The feed reads the pins: it adds no waiter for their edges beside the
// automations' and Telegram's.
func TestGoalFeedPins(t *testing.T) {
	cfg := config.Default()
	cfg.Board = config.Board{Pins: map[string]config.Pin{
		"door":  {GPIO: 27, Mode: "in", Pull: "down", Edge: "both"},
		"soil":  {GPIO: 22, Mode: "in", Pull: "down"},
		"led":   {GPIO: 17, Mode: "out"},
		"pedal": {GPIO: 23, Mode: "in", Pull: "up", Edge: "falling"},
	}}
	s := sim.New()
	b, err := OpenBoard(cfg, func() hal.Driver { return s })
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	a := newCore(cfg, Options{})
	a.board = b
	if err := a.providePins(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	watch := func(pin string) (<-chan goals.Change, bool) { return a.feed.Watch(ctx, goals.PinRead(pin)) }
	for _, pin := range []string{"soil", "led"} {
		if _, ok := watch(pin); ok {
			t.Errorf("%s is fed to the goals: only inputs with edge detection are", pin)
		}
	}
	door, ok := watch("door")
	pedal, ok2 := watch("pedal")
	if !ok || !ok2 {
		t.Fatalf("door fed %v, pedal fed %v: the inputs with edge detection are fed", ok, ok2)
	}
	var wg sync.WaitGroup
	wg.Go(func() { a.feedPins(ctx, a.watchedPins()) })
	defer wg.Wait()
	defer cancel()

	next := func(what string, ch <-chan goals.Change) goals.Change {
		t.Helper()
		select {
		case c := <-ch:
			return c
		case <-time.After(30 * time.Second):
			t.Fatalf("no change of %s fed in 30 s", what)
		}
		return goals.Change{}
	}
	// What the pins read at the start is no change.
	select {
	case c := <-door:
		t.Fatalf("a change of the door fed before it changed: %+v", c)
	case <-time.After(3 * pinPoll):
	}
	s.Drive(27, hal.High)
	if c := next("the door", door); c.Value != 1 || c.At.IsZero() {
		t.Errorf("the door opening fed %+v; want 1", c)
	}
	s.Drive(27, hal.Low)
	if c := next("the door", door); c.Value != 0 {
		t.Errorf("the door closing fed %+v; want 0", c)
	}
	s.Drive(23, hal.Low) // the pull-up pedal pressed
	if c := next("the pedal", pedal); c.Value != 0 {
		t.Errorf("the pedal pressed fed %+v; want 0", c)
	}
	if n := s.Waiters(27) + s.Waiters(23); n != 0 {
		t.Errorf("%d waiters for the pins' edges: the feed reads them", n)
	}
}
