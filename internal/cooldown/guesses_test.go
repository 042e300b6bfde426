package cooldown

import (
	"errors"
	"testing"
	"time"
)

func TestGuessesPauseAfterMaxWrong(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	var g Guesses
	for i := range MaxWrong {
		if err := g.Check(now); err != nil {
			t.Fatalf("guess %d refused before the limit: %v", i+1, err)
		}
		g.Miss(now)
	}
	var paused *PausedError
	if err := g.Check(now); !errors.As(err, &paused) || !paused.Until.Equal(now.Add(FirstWait)) {
		t.Fatalf("after %d wrong codes: %v, want paused until %s", MaxWrong, err, now.Add(FirstWait))
	}
	if got := g.PausedUntil(now); !got.Equal(now.Add(FirstWait)) {
		t.Errorf("PausedUntil %s", got)
	}
	// The next wait doubles; a right code resets the count, not the strikes.
	later := now.Add(FirstWait)
	g.Hit()
	for range MaxWrong {
		g.Miss(later)
	}
	if err := g.Check(later); !errors.As(err, &paused) || !paused.Until.Equal(later.Add(2*FirstWait)) {
		t.Fatalf("second wait: %v, want until %s", err, later.Add(2*FirstWait))
	}
	// Long after the last wait the strikes are forgotten.
	quiet := paused.Until.Add(ForgetAfter + time.Second)
	if err := g.Check(quiet); err != nil || g.Guess.Strikes != 0 {
		t.Fatalf("after a quiet day: %v, %d strikes", err, g.Guess.Strikes)
	}
}
