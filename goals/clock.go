package goals

// This file: the time a goal is pursued by. Every wait of the runtime (the
// next judgement, a poll, a plan's wait, a deadline) is a timer of one
// Clock, so that a test runs a night of a greenhouse in seconds with a fake
// one, and the daemon runs on the real one.

import "time"

// Clock is the runtime's time source and its timers.
type Clock interface {
	Now() time.Time
	// NewTimer returns a channel that receives once d has passed, and a
	// function that stops the timer.
	NewTimer(d time.Duration) (<-chan time.Time, func() bool)
}

// realClock is the wall clock, its Now possibly replaced (Options.Now).
type realClock struct{ now func() time.Time }

func (c realClock) Now() time.Time { return c.now() }

func (realClock) NewTimer(d time.Duration) (<-chan time.Time, func() bool) {
	t := time.NewTimer(d)
	return t.C, t.Stop
}
