package cooldown

import (
	"testing"
	"time"
)

func TestCooldownDoublesToMaxAndIsForgotten(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var c Cooldown
	if c.Active(now) {
		t.Fatal("a fresh cooldown is active")
	}
	for i, want := range []time.Duration{time.Minute, 2 * time.Minute, 4 * time.Minute} {
		if d := c.Start(now, time.Minute); d != want {
			t.Fatalf("wait %d = %v, want %v", i, d, want)
		}
	}
	if !c.Active(now.Add(3*time.Minute)) || c.Active(now.Add(4*time.Minute)) {
		t.Errorf("active until %v, want 4m after start", c.Until)
	}
	for range 40 {
		c.Start(now, time.Minute)
	}
	if d := c.Start(now, time.Minute); d != Max {
		t.Errorf("wait after many strikes = %v, want %v", d, Max)
	}
	if c.Forgotten(now.Add(Max)) || !c.Forgotten(now.Add(Max+ForgetAfter+time.Second)) {
		t.Error("forgotten at the wrong time")
	}
}
