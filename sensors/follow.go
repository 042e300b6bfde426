package sensors

// This file: a simulated quantity that follows an output pin (Spec.Follows,
// the config's sim.follows), so that the simulated board closes the loop: a
// greenhouse's heater warms it, and it cools when the heater is off. The
// value is computed at each read from the time since the read before and
// the pin's level, so no goroutine keeps it: between two reads the pin is
// taken at the level it has at the second. That is exact when the pin is
// switched as a read is made (a goal reads, then acts), and otherwise off by
// at most the time between reads (a sensor is sampled at its `every`).

import (
	"fmt"
	"math"
	"time"

	"github.com/clawedge/clawedge/hal"
)

// following is a Follow's state: the pin, where the quantity drifts back
// to, its value and when it was computed.
type following struct {
	Follow
	pin   *hal.Pin
	rest  float64
	value float64
	at    time.Time
}

// followPin ties the sensor's simulated quantity to an output pin of b.
func (s *Sensor) followPin(b *hal.Board, f Follow) error {
	p, err := b.Pin(f.Pin)
	if err != nil {
		return fmt.Errorf("sim: follows: %w", err)
	}
	if p.Mode() != hal.ModeOut {
		return fmt.Errorf("sim: follows pin %q, an input: a simulated quantity follows an output", f.Pin)
	}
	if !s.Has(f.Quantity) || f.Quantity == Power {
		return fmt.Errorf("sim: follows: %w", s.noQuantity(f.Quantity))
	}
	if !(f.Rate > 0) || f.Drift < 0 || math.IsInf(f.Rate, 0) || math.IsInf(f.Drift, 0) {
		return fmt.Errorf("sim: follows: a rate of %g and a drift of %g a minute: want more than 0", f.Rate, f.Drift)
	}
	if f.Drift == 0 {
		f.Drift = f.Rate
	}
	start, ok := s.chip.Get(string(f.Quantity))
	if !ok {
		return fmt.Errorf("sim: follows: the simulated chip has no %s", f.Quantity)
	}
	lo, hi := s.bounds(f.Quantity)
	if f.Toward < lo || f.Toward > hi {
		return fmt.Errorf("sim: follows: toward %g is outside the chip's range of %s (%g..%g)", f.Toward, f.Quantity, lo, hi)
	}
	s.follow = &following{Follow: f, pin: p, rest: start, value: start, at: s.now()}
	return nil
}

// advance moves a following quantity to now and sets it on the chip, for
// the read that follows. s.mu is held.
func (s *Sensor) advance() error {
	f := s.follow
	if f == nil {
		return nil
	}
	now := s.now()
	level, err := f.pin.Read()
	if err != nil {
		return fmt.Errorf("the simulated %s follows pin %q, which cannot be read: %w", f.Quantity, f.Pin, err)
	}
	if minutes := now.Sub(f.at).Minutes(); minutes > 0 {
		target, rate := f.rest, f.Drift
		if level == hal.High {
			target, rate = f.Toward, f.Rate
		}
		f.value = approach(f.value, target, rate*minutes)
		f.at = now
	}
	if err := s.chip.Set(string(f.Quantity), f.value); err != nil {
		return fmt.Errorf("the simulated %s: %w", f.Quantity, err)
	}
	return nil
}

// approach is v moved toward target by step at most, never past it.
func approach(v, target, step float64) float64 {
	if v < target {
		return math.Min(v+step, target)
	}
	return math.Max(v-step, target)
}
