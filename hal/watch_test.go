package hal_test

import (
	"context"
	"testing"
	"time"

	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/hal/sim"
)

// TestWaitForWrite: a waiter sees the next change of an output, whoever makes
// it (here the max_on timer), returns at once when the level already differs
// from what it saw, and is woken by Close.
func TestWaitForWrite(t *testing.T) {
	cfg := testConfig()
	cfg.Pins[0].MaxOn = 20 * time.Millisecond
	b := open(t, sim.New(), cfg)
	led, _ := b.Pin("led")
	ctx := context.Background()
	if l, err := led.WaitForWrite(ctx, hal.High); err != nil || l != hal.Low {
		t.Fatalf("already different: %v, %v", l, err)
	}
	got := make(chan hal.Level, 2)
	go func() {
		l, _ := led.WaitForWrite(ctx, hal.Low)
		got <- l
		l, _ = led.WaitForWrite(ctx, l) // the max_on timer turns it off
		got <- l
	}()
	if err := led.Write(hal.High); err != nil {
		t.Fatal(err)
	}
	if l := <-got; l != hal.High {
		t.Errorf("first change: %v", l)
	}
	if l := <-got; l != hal.Low {
		t.Errorf("after max_on: %v", l)
	}
	button, _ := b.Pin("button")
	if _, err := button.WaitForWrite(ctx, hal.Low); err == nil {
		t.Error("an input can be waited on for writes")
	}
	errc := make(chan error, 1)
	go func() { _, err := led.WaitForWrite(ctx, hal.Low); errc <- err }()
	b.Close()
	if err := <-errc; err == nil {
		t.Error("Close did not end the wait with an error")
	}
}
