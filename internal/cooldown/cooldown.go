// Package cooldown is the growing wait that rate-limits guessing a pairing
// code, the same at every door that pairs (Telegram, the web dashboard): each
// wait started is twice the previous, up to Max, and a quiet ForgetAfter past
// the last one forgets the strikes. It is a value with JSON tags so that a
// door keeps it in the store and a restart resets nothing.
package cooldown

import "time"

const (
	// Max is the longest single wait.
	Max = 24 * time.Hour
	// ForgetAfter is how long after a wait ended the strikes are forgotten.
	ForgetAfter = 24 * time.Hour
)

// Cooldown is a growing wait: each one started is twice the previous.
type Cooldown struct {
	Strikes int       `json:"strikes"`
	Until   time.Time `json:"until"`
}

// Active reports whether a wait is running at now.
func (c *Cooldown) Active(now time.Time) bool { return now.Before(c.Until) }

// Start begins the next wait (base for the first, doubling after) and returns its length.
func (c *Cooldown) Start(now time.Time, base time.Duration) time.Duration {
	d := Max
	if c.Strikes < 16 {
		d = min(base<<c.Strikes, Max)
	}
	c.Strikes++
	c.Until = now.Add(d)
	return d
}

// Forgotten reports whether the waits are old enough to start counting afresh.
func (c *Cooldown) Forgotten(now time.Time) bool {
	return now.Sub(c.Until) > ForgetAfter
}
