package automations

import (
	"testing"
	"time"
)

// A run every second for an hour writes a handful of lines, not 3,600; a
// change of outcome is written at once, with how many lines were left out.
func TestLogRateHoldsBackRepeats(t *testing.T) {
	var l logRate
	t0 := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	lines := 0
	for i := 0; i < 3600; i++ {
		if ok, _ := l.allow("poll", "run", "ok", t0.Add(time.Duration(i)*time.Second)); ok {
			lines++
		}
	}
	if lines != 6 {
		t.Errorf("%d lines for an hour of runs every second, want 6 (one per %s)", lines, logEvery)
	}
	ok, skipped := l.allow("poll", "run", "error: no such pin", t0.Add(time.Hour))
	if !ok || skipped == 0 {
		t.Errorf("a new error: written %v, %d left out before it", ok, skipped)
	}
	if ok, _ := l.allow("poll", "run", "ok", t0.Add(time.Hour+time.Second)); !ok {
		t.Error("back to ok was not written")
	}
	if ok, _ := l.allow("other", "run", "ok", t0.Add(time.Hour+time.Second)); !ok {
		t.Error("another automation's first line was held back")
	}
}
