// Package simchip is sensor chips simulated at the register level, for the
// sim board: a BME280 or BMP280 with a calibration block, a DS18B20 with its
// scratchpad and CRC, an AHT20 and an INA219. Each answers the transactions
// its datasheet describes, so the real driver (periph's) reads it exactly as
// it reads the chip, and what it reads back is the value set here, within
// the chip's resolution. Values change at run time with Set; faults (a
// skipped measurement, a corrupted CRC, a chip that stops answering) are
// injected with Fail.
//
// The chips are hal targets (hal.I2CTarget, hal.OneWireTarget) placed on a
// hal.Simulator's buses; this package knows nothing of sensors' configs.
package simchip

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
)

// The quantities a chip may simulate, by the names sensors gives them.
const (
	Temperature = "temperature" // °C
	Humidity    = "humidity"    // %RH
	Pressure    = "pressure"    // hPa
	Voltage     = "voltage"     // V (an INA219's bus voltage)
	Current     = "current"     // A (through an INA219's shunt)
)

// Fault is a misbehaviour a chip can be made to show on its next reads.
type Fault string

const (
	// Silent: the chip does not answer (a NACK on I²C, no presence on 1-Wire).
	Silent Fault = "silent"
	// BadCRC: the next read's CRC is wrong (DS18B20, AHT20).
	BadCRC Fault = "bad-crc"
	// Skipped: the next measurement is "skipped" (a BME280's 0x80000).
	Skipped Fault = "skipped"
	// NoConversion: a DS18B20 keeps its power-on 85 °C (no strong pull-up).
	NoConversion Fault = "no-conversion"
)

// Chip is what every simulated chip offers beside its bus interface.
type Chip interface {
	// Quantities are the names Set takes, sorted.
	Quantities() []string
	// Set changes a quantity; a value outside the chip's range is refused.
	Set(quantity string, v float64) error
	// Get returns the value set.
	Get(quantity string) (float64, bool)
	// Fail makes the next count reads show f (a read: a transaction
	// that reads bytes; the writes before it fail alike); count 0
	// clears it, and a negative count keeps it until cleared.
	Fail(f Fault, count int) error
}

// ErrNACK is what an I²C chip answers when it is made Silent.
var ErrNACK = errors.New("no acknowledge")

// values is the quantity state every chip shares: the set values, each
// within its range, and the faults pending.
type values struct {
	mu     sync.Mutex
	v      map[string]float64
	ranges map[string][2]float64
	faults map[Fault]int
	can    []Fault
}

func newValues(ranges map[string][2]float64, can ...Fault) values {
	return values{v: map[string]float64{}, ranges: ranges, faults: map[Fault]int{}, can: append(can, Silent)}
}

func (s *values) Quantities() []string {
	qs := make([]string, 0, len(s.ranges))
	for q := range s.ranges {
		qs = append(qs, q)
	}
	sort.Strings(qs)
	return qs
}

func (s *values) Set(q string, v float64) error {
	r, ok := s.ranges[q]
	if !ok {
		return fmt.Errorf("no quantity %q (this chip has %s)", q, strings.Join(s.Quantities(), ", "))
	}
	if math.IsNaN(v) || v < r[0] || v > r[1] {
		return fmt.Errorf("%s %.6g is outside the chip's range %.6g..%.6g", q, v, r[0], r[1])
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.v[q] = v
	return nil
}

func (s *values) Get(q string) (float64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.v[q]
	return v, ok
}

func (s *values) Fail(f Fault, count int) error {
	found := false
	for _, c := range s.can {
		found = found || c == f
	}
	if !found {
		return fmt.Errorf("fault %q: this chip can show %v", f, s.can)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[f] = count
	return nil
}

// get is Get with the lock held.
func (s *values) get(q string) float64 { return s.v[q] }

// take reports whether f is pending, using up one read of it; the lock is held.
func (s *values) take(f Fault) bool {
	n := s.faults[f]
	switch {
	case n == 0:
		return false
	case n > 0:
		s.faults[f] = n - 1
	}
	return true
}

// hit reports whether f is pending for a transaction reading n bytes. Only
// a transaction that reads uses a fault up: the writes before it (a
// register pointer, a command) fail too, so "the next read" fails however
// many transactions a driver makes of it.
func (s *values) hit(f Fault, n int) bool {
	if n > 0 {
		return s.take(f)
	}
	return s.faults[f] != 0
}

// searchUp returns the k in [0, n) for which f(k), increasing in k, is
// closest to target: the inverse of a datasheet's compensation, found the
// way the chip's own ADC would have landed on it.
func searchUp(n int64, target float64, f func(k int64) float64) int64 {
	k := sort.Search(int(n), func(i int) bool { return f(int64(i)) >= target })
	if k == int(n) {
		return n - 1
	}
	if k > 0 && target-f(int64(k-1)) < f(int64(k))-target {
		return int64(k - 1)
	}
	return int64(k)
}
