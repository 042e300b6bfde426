package remote

import (
	"sync"
	"time"
)

// Breaker is a circuit breaker for one provider. Closed, every call goes
// through; after Threshold failed calls in a row it opens, and calls fail at
// once, without touching the network, for Cooldown; then it is half-open: one
// call at a time goes through as a probe, and its outcome closes the breaker
// or opens it for another Cooldown. A router then moves to another provider
// at once instead of waiting on timeouts of one that is down.
type Breaker struct {
	Threshold int           // failures in a row that open it; 0: 5, negative: never opens
	Cooldown  time.Duration // how long it stays open; 0: 30s
	Now       func() time.Time

	mu       sync.Mutex
	failures int
	open     bool
	until    time.Time // while open: when a probe may go
	probing  bool
}

// Outcome of a call, for the breaker.
type Outcome int

const (
	Neutral Outcome = iota // says nothing about the server (the caller gave up)
	Success
	Failure
)

func (b *Breaker) now() time.Time {
	if b.Now != nil {
		return b.Now()
	}
	return time.Now()
}

// Allow asks to make a call. When the breaker refuses, it returns false and
// how long until it lets a probe through; otherwise done must be called once
// with the call's outcome.
func (b *Breaker) Allow() (done func(Outcome), wait time.Duration, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	probe := false
	if b.open {
		now := b.now()
		if now.Before(b.until) {
			return nil, b.until.Sub(now), false
		}
		if b.probing {
			return nil, 0, false
		}
		b.probing, probe = true, true
	}
	var once sync.Once
	return func(o Outcome) { once.Do(func() { b.record(o, probe) }) }, 0, true
}

func (b *Breaker) record(o Outcome, probe bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if probe {
		b.probing = false
	}
	switch o {
	case Success:
		b.failures, b.open = 0, false
	case Failure:
		b.failures++
		th := b.Threshold
		if th == 0 {
			th = 5
		}
		if th > 0 && (b.failures >= th || b.open) {
			cd := b.Cooldown
			if cd <= 0 {
				cd = 30 * time.Second
			}
			b.open, b.until = true, b.now().Add(cd)
		}
	}
}

// Open reports whether the breaker is open (or half-open).
func (b *Breaker) Open() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.open
}
