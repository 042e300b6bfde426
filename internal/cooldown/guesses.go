package cooldown

import "time"

// Guessing a code: after MaxWrong wrong codes a wait starts (FirstWait, then
// doubling), and during it every code is refused, the right one too, or the
// guessing would simply go on. The dashboard's browsers and the boards pair
// this way.
const (
	MaxWrong  = 5
	FirstWait = time.Minute
)

// Guesses counts the wrong codes at a door that pairs. Its JSON fields are
// the door's own state's when embedded, so a restart resets nothing.
type Guesses struct {
	Wrong int      `json:"wrong"` // wrong codes since the last wait
	Guess Cooldown `json:"guess"`
}

// PausedError refuses a code while a wait runs.
type PausedError struct{ Until time.Time }

func (e *PausedError) Error() string {
	return "too many wrong pairing codes: pairing is paused until " + e.Until.UTC().Format(time.RFC3339)
}

// Check is what a code must pass before it is compared: nil, or a
// *PausedError while a wait runs. Strikes whose last wait ended long
// enough ago are forgotten.
func (g *Guesses) Check(now time.Time) error {
	if g.Guess.Active(now) {
		return &PausedError{Until: g.Guess.Until}
	}
	if g.Guess.Strikes > 0 && g.Guess.Forgotten(now) {
		g.Guess = Cooldown{}
	}
	return nil
}

// Miss counts a wrong code, and starts a wait at the MaxWrong'th.
func (g *Guesses) Miss(now time.Time) {
	g.Wrong++
	if g.Wrong >= MaxWrong {
		g.Wrong = 0
		g.Guess.Start(now, FirstWait)
	}
}

// Hit is a right code: the count starts again.
func (g *Guesses) Hit() { g.Wrong = 0 }

// PausedUntil is the end of the running wait (zero: none).
func (g *Guesses) PausedUntil(now time.Time) time.Time {
	if g.Guess.Active(now) {
		return g.Guess.Until
	}
	return time.Time{}
}
