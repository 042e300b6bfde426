package sensors

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"periph.io/x/conn/v3/onewire"

	"github.com/clawedge/clawedge/config"
	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/sensors/simchip"
)

// Spec is one configured sensor.
type Spec struct {
	Name   string
	Driver string // bme280, bmp280, ds18b20, aht20, ina219
	// Bus names a board bus: an I²C bus, or a 1-Wire bus for a ds18b20.
	Bus string
	// Address is the I²C address (unused on 1-Wire).
	Address uint16
	// ID is a 1-Wire device's Linux name: 28-00000a1b2c3d.
	ID string
	// Every is the sampling interval; 0: a minute.
	Every time.Duration
	// ShuntOhms is an ina219's shunt; 0: 0.1 Ω.
	ShuntOhms float64
	// Sim are the simulated chip's starting values (sim board only).
	Sim map[Quantity]float64
	// Follows makes one simulated quantity follow an output pin (sim board
	// only): the board closes the loop, a heater warms the greenhouse.
	Follows *Follow
}

// Follow is a simulated quantity that follows an output pin of the board:
// while the pin is high it moves toward Toward at Rate a minute, while it
// is low back toward where it started (its Sim value, or what sim/set set
// last) at Drift a minute, never past either. It is computed at each read
// from the time since the one before and the pin's level (see
// Sensor.advance): no goroutine keeps it.
type Follow struct {
	Pin      string
	Quantity Quantity
	// Rate and Drift are changes a minute, more than 0 (Drift 0: Rate).
	Rate, Drift float64
	Toward      float64
}

// DefaultEvery is a sensor's sampling interval when its Spec has none.
const DefaultEvery = time.Minute

// FromConfig is the sensors of a config's board section, sorted by name.
func FromConfig(b config.Board) []Spec {
	specs := make([]Spec, 0, len(b.Sensors))
	for name, s := range b.Sensors {
		sp := Spec{Name: name, Driver: s.Driver, Bus: s.Bus, Address: uint16(s.Address), ID: s.ID,
			Every: time.Duration(s.Every), ShuntOhms: s.ShuntOhms}
		for q, v := range s.Sim {
			if sp.Sim == nil {
				sp.Sim = map[Quantity]float64{}
			}
			sp.Sim[Quantity(q)] = v
		}
		if f := s.Follows; f != nil {
			sp.Follows = &Follow{Pin: f.Pin, Quantity: Quantity(f.Quantity), Rate: f.Rate, Drift: f.Drift, Toward: f.Toward}
		}
		specs = append(specs, sp)
	}
	sort.Slice(specs, func(i, j int) bool { return specs[i].Name < specs[j].Name })
	return specs
}

// Options tune Open; the zero value is what a board needs.
type Options struct {
	// Sleep waits d or until ctx ends (a DS18B20's conversion time);
	// nil: a timer. Tests make it instant.
	Sleep func(ctx context.Context, d time.Duration) error
	// Now is the time of a reading, and what a simulated quantity that
	// follows a pin (Spec.Follows) moves by; nil: time.Now. Tests give a
	// fake clock's, so that a night passes in seconds.
	Now func() time.Time
}

// Sensor is an opened sensor. Read is safe for concurrent use: reads of
// one sensor take turns.
type Sensor struct {
	spec  Spec
	where string // `bme280 at 0x76 on bus "sensors"`
	drv   driver
	chip  simchip.Chip // on the sim board
	now   func() time.Time

	mu       sync.Mutex // one read at a time; guards follow
	follow   *following // a simulated quantity following a pin
	lastMu   sync.Mutex
	last     []Reading
	lastErr  error
	lastTime time.Time
}

// Name is the sensor's configured name.
func (s *Sensor) Name() string { return s.spec.Name }

// Spec is the sensor as configured, with defaults filled in.
func (s *Sensor) Spec() Spec { return s.spec }

// Every is the sampling interval.
func (s *Sensor) Every() time.Duration { return s.spec.Every }

// Quantities are what the sensor measures, in Quantities' order.
func (s *Sensor) Quantities() []Quantity { return s.drv.quantities() }

// Has reports whether the sensor measures q.
func (s *Sensor) Has(q Quantity) bool { return slices.Contains(s.drv.quantities(), q) }

// String is `greenhouse (bme280 at 0x76 on bus "sensors")`.
func (s *Sensor) String() string { return fmt.Sprintf("%s (%s)", s.spec.Name, s.where) }

// Simulated reports whether the sensor is a simulated chip (the sim board).
func (s *Sensor) Simulated() bool { return s.chip != nil }

// Read measures every quantity of the sensor now. An error names the
// sensor and what failed; a value outside the chip's range is one.
func (s *Sensor) Read(ctx context.Context) ([]Reading, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.advance(); err != nil {
		err = fmt.Errorf("sensor %s: %w", s, err)
		s.remember(nil, err, s.now())
		return nil, err
	}
	vals, err := s.drv.read(ctx)
	now := s.now()
	if err == nil {
		err = s.check(vals)
	}
	if err != nil {
		s.drv.reset()
		err = fmt.Errorf("sensor %s: %w", s, tidy{err})
		s.remember(nil, err, now)
		return nil, err
	}
	rs := make([]Reading, 0, len(vals))
	for _, q := range s.drv.quantities() {
		rs = append(rs, Reading{Sensor: s.spec.Name, Quantity: q, Value: vals[q], Time: now})
	}
	s.remember(rs, nil, now)
	return rs, nil
}

// ReadQuantity reads the sensor and returns q's reading.
func (s *Sensor) ReadQuantity(ctx context.Context, q Quantity) (Reading, error) {
	if !s.Has(q) {
		return Reading{}, s.noQuantity(q)
	}
	rs, err := s.Read(ctx)
	if err != nil {
		return Reading{}, err
	}
	for _, r := range rs {
		if r.Quantity == q {
			return r, nil
		}
	}
	return Reading{}, s.noQuantity(q)
}

func (s *Sensor) noQuantity(q Quantity) error {
	names := make([]string, 0, 3)
	for _, have := range s.drv.quantities() {
		names = append(names, string(have))
	}
	return fmt.Errorf("sensor %s measures %s, not %q", s.spec.Name, strings.Join(names, ", "), q)
}

// Last is what a sensor's last read gave.
type Last struct {
	Readings []Reading
	Err      error
	Time     time.Time // zero: never read
}

// Last is the last read's readings, or its error, and when it was.
func (s *Sensor) Last() Last {
	s.lastMu.Lock()
	defer s.lastMu.Unlock()
	return Last{slices.Clone(s.last), s.lastErr, s.lastTime}
}

func (s *Sensor) remember(rs []Reading, err error, at time.Time) {
	s.lastMu.Lock()
	defer s.lastMu.Unlock()
	s.last, s.lastErr, s.lastTime = rs, err, at
}

// tidy is an error whose text loses what periph's drivers repeat: bmxx80
// prefixes its chip's name at two levels ("bme280: bme280: "), and an empty
// one before it knows the chip (": ").
type tidy struct{ err error }

func (t tidy) Error() string {
	parts := strings.Split(t.err.Error(), ": ")
	out := parts[:0]
	for i, p := range parts {
		if p == "" && i < len(parts)-1 || len(out) > 0 && out[len(out)-1] == p {
			continue
		}
		out = append(out, p)
	}
	return strings.Join(out, ": ")
}
func (t tidy) Unwrap() error { return t.err }

// ErrOutOfRange is wrapped by the error of a reading outside what the
// chip can measure: a fault, never a value.
var ErrOutOfRange = errors.New("outside the chip's range")

func (s *Sensor) check(vals map[Quantity]float64) error {
	for _, q := range s.drv.quantities() {
		v, ok := vals[q]
		if !ok {
			return fmt.Errorf("the driver gave no %s", q)
		}
		lo, hi := s.bounds(q)
		if math.IsNaN(v) || v < lo || v > hi {
			return fmt.Errorf("%s %g %s is %w (%g..%g)", q, v, q.Unit(), ErrOutOfRange, lo, hi)
		}
	}
	return nil
}

// bounds is the range of q this sensor can measure: the config's table,
// and for an INA219 its shunt's.
func (s *Sensor) bounds(q Quantity) (float64, float64) {
	if in, ok := s.drv.(*ina); ok {
		switch q {
		case Current:
			return -in.maxCurrent(), in.maxCurrent()
		case Power:
			return 0, 26 * in.maxCurrent()
		}
	}
	lo, hi, _ := config.SensorRange(s.spec.Driver, string(q))
	return lo, hi
}

// Set is the opened sensors of a board.
type Set struct {
	list   []*Sensor
	byName map[string]*Sensor
	sim    bool
	board  *hal.Board
}

// Open opens specs on b. Nothing is read: a sensor that does not answer
// now may later, and each Read says what is wrong. On the sim board
// (b.Simulator) each sensor's chip is simulated and placed on its bus with
// the spec's Sim values. Every problem is reported at once, each naming its
// sensor.
func Open(b *hal.Board, specs []Spec, opts Options) (*Set, error) {
	sleep := opts.Sleep
	if sleep == nil {
		sleep = sleepCtx
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	set := &Set{byName: map[string]*Sensor{}, board: b}
	sim, isSim := b.Simulator()
	set.sim = isSim
	var errs []error
	for _, sp := range specs {
		s, err := open(b, sp, sleep)
		if err == nil && set.byName[sp.Name] != nil {
			err = errors.New("configured twice")
		}
		if err == nil {
			s.now = now
		}
		if err == nil && isSim {
			err = s.simulate(b, sim)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("sensor %q: %w", sp.Name, err))
			continue
		}
		set.list = append(set.list, s)
		set.byName[sp.Name] = s
	}
	sort.Slice(set.list, func(i, j int) bool { return set.list[i].spec.Name < set.list[j].spec.Name })
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return set, nil
}

func open(b *hal.Board, sp Spec, sleep func(context.Context, time.Duration) error) (*Sensor, error) {
	if sp.Name == "" {
		return nil, errors.New("the name is empty")
	}
	if sp.Every <= 0 {
		sp.Every = DefaultEvery
	}
	s := &Sensor{spec: sp}
	onI2C := func(addrs ...uint16) (*hal.BusHandle, error) {
		h, err := b.Bus(sp.Bus)
		if err != nil {
			return nil, fmt.Errorf("a %s is on an I²C bus: %w", sp.Driver, err)
		}
		if !slices.Contains(addrs, sp.Address) {
			return nil, fmt.Errorf("a %s answers at %s, not %#02x", sp.Driver, hexAddrs(addrs), sp.Address)
		}
		s.where = fmt.Sprintf("%s at %#02x on bus %q", sp.Driver, sp.Address, sp.Bus)
		return h, nil
	}
	switch sp.Driver {
	case "bme280", "bmp280":
		h, err := onI2C(0x76, 0x77)
		if err != nil {
			return nil, err
		}
		s.drv = newBMx280(h, sp.Address, sp.Driver == "bme280")
	case "aht20":
		if sp.Address == 0 {
			sp.Address = 0x38
			s.spec.Address = 0x38
		}
		h, err := onI2C(0x38)
		if err != nil {
			return nil, err
		}
		s.drv = &aht{h: h, bus: i2cBus{name: h.String()}}
	case "ina219":
		if sp.ShuntOhms == 0 {
			s.spec.ShuntOhms = 0.1
		}
		if r := s.spec.ShuntOhms; !(r > 0 && r <= 100) {
			return nil, fmt.Errorf("shunt of %g Ω: want more than 0 and at most 100", r)
		}
		h, err := onI2C(0x40, 0x41, 0x42, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49, 0x4a, 0x4b, 0x4c, 0x4d, 0x4e, 0x4f)
		if err != nil {
			return nil, err
		}
		s.drv = &ina{h: h, addr: sp.Address, shunt: s.spec.ShuntOhms, bus: i2cBus{name: h.String()}}
	case "ds18b20":
		h, err := b.OneWire(sp.Bus)
		if err != nil {
			return nil, fmt.Errorf("a ds18b20 is on a 1-Wire bus: %w", err)
		}
		family, serial, err := ParseOneWireID(sp.ID)
		if err != nil {
			return nil, err
		}
		if family != 0x28 {
			return nil, fmt.Errorf("1-Wire id %s: family %#02x is not a DS18B20's (28)", sp.ID, family)
		}
		s.where = fmt.Sprintf("ds18b20 %s on bus %q", sp.ID, sp.Bus)
		s.drv = &ds{h: h, addr: onewire.Address(OneWireROM(family, serial)), serial: serial, bus: wireBus{name: h.String()}, sleep: sleep}
	default:
		return nil, fmt.Errorf("driver %q: want bme280, bmp280, ds18b20, aht20 or ina219", sp.Driver)
	}
	return s, nil
}

// simulate places the sensor's simulated chip on the sim board's bus.
func (s *Sensor) simulate(b *hal.Board, sim hal.Simulator) error {
	chip, err := s.drv.chip(s.spec)
	if err != nil {
		return err
	}
	for _, q := range sortedQuantities(s.spec.Sim) {
		if err := chip.Set(string(q), s.spec.Sim[q]); err != nil {
			return fmt.Errorf("sim: %w", err)
		}
	}
	switch d := s.drv.(type) {
	case *ds:
		t, ok := chip.(hal.OneWireTarget)
		if !ok {
			return fmt.Errorf("sim: the simulated %s is no 1-Wire device", s.spec.Driver)
		}
		err = sim.PlaceOneWire(d.h.Device(), t)
	default:
		h, _ := b.Bus(s.spec.Bus)
		t, ok := chip.(hal.I2CTarget)
		if !ok {
			return fmt.Errorf("sim: the simulated %s is no I²C device", s.spec.Driver)
		}
		err = sim.PlaceI2C(h.Device(), s.spec.Address, t)
	}
	if err != nil {
		return fmt.Errorf("sim: %w", err)
	}
	s.chip = chip
	if f := s.spec.Follows; f != nil {
		return s.followPin(b, *f)
	}
	return nil
}

func sortedQuantities(m map[Quantity]float64) []Quantity {
	qs := make([]Quantity, 0, len(m))
	for q := range m {
		qs = append(qs, q)
	}
	slices.Sort(qs)
	return qs
}

func hexAddrs(addrs []uint16) string {
	if len(addrs) > 2 {
		return fmt.Sprintf("%#02x..%#02x", addrs[0], addrs[len(addrs)-1])
	}
	s := make([]string, len(addrs))
	for i, a := range addrs {
		s[i] = fmt.Sprintf("%#02x", a)
	}
	return strings.Join(s, " or ")
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Sensors are every sensor, sorted by name.
func (set *Set) Sensors() []*Sensor { return slices.Clone(set.list) }

// Sensor returns a sensor by name; any other name is an error listing them.
func (set *Set) Sensor(name string) (*Sensor, error) {
	if s, ok := set.byName[name]; ok {
		return s, nil
	}
	if len(set.list) == 0 {
		return nil, fmt.Errorf("unknown sensor %q (no sensors configured)", name)
	}
	names := make([]string, len(set.list))
	for i, s := range set.list {
		names[i] = s.spec.Name
	}
	return nil, fmt.Errorf("unknown sensor %q (configured: %s)", name, strings.Join(names, ", "))
}

// Simulated reports whether the sensors are simulated chips (the sim board).
func (set *Set) Simulated() bool { return set.sim }

// Simulate sets quantity q of a simulated sensor to v, as the world would:
// the next read measures it. A value outside the chip's range is refused.
func (set *Set) Simulate(name string, q Quantity, v float64) error {
	s, err := set.Sensor(name)
	if err != nil {
		return err
	}
	if s.chip == nil {
		return fmt.Errorf("sensor %s is not simulated (only the sim board's are)", s)
	}
	if !s.Has(q) {
		return s.noQuantity(q)
	}
	if q == Power {
		return fmt.Errorf("sensor %s: power is voltage times current: set those", s.spec.Name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.chip.Set(string(q), v); err != nil {
		return fmt.Errorf("sensor %s: %w", s.spec.Name, err)
	}
	if f := s.follow; f != nil && f.Quantity == q {
		// The world is now v, and at rest there: what the quantity
		// drifts back to while the pin is low.
		f.value, f.rest, f.at = v, v, s.now()
	}
	return nil
}

// Chip is a simulated sensor's chip, to inject faults in tests and benches.
func (set *Set) Chip(name string) (simchip.Chip, error) {
	s, err := set.Sensor(name)
	if err != nil {
		return nil, err
	}
	if s.chip == nil {
		return nil, fmt.Errorf("sensor %s is not simulated", s)
	}
	return s.chip, nil
}

// ParseOneWireID reads a 1-Wire device's Linux name, "28-00000a1b2c3d":
// the family code and the 48-bit serial, in hex.
func ParseOneWireID(id string) (family byte, serial uint64, err error) {
	bad := func() (byte, uint64, error) {
		return 0, 0, fmt.Errorf("1-Wire id %q: want the family and 12 hex digits of serial, such as 28-00000a1b2c3d", id)
	}
	fam, ser, ok := strings.Cut(id, "-")
	if !ok || len(fam) != 2 || len(ser) != 12 {
		return bad()
	}
	f, err1 := strconv.ParseUint(fam, 16, 8)
	n, err2 := strconv.ParseUint(ser, 16, 48)
	if err1 != nil || err2 != nil || strings.ContainsAny(id, "+_") {
		return bad()
	}
	return byte(f), n, nil
}

// OneWireROM is the 64-bit ROM code of a 1-Wire device: the family in the
// low byte, the serial, and the CRC of both in the high byte.
func OneWireROM(family byte, serial uint64) uint64 {
	var b [7]byte
	b[0] = family
	for i := 1; i < 7; i++ {
		b[i] = byte(serial >> (8 * (i - 1)))
	}
	rom := uint64(onewire.CalcCRC(b[:])) << 56
	for i := 6; i >= 0; i-- {
		rom |= uint64(b[i]) << (8 * i)
	}
	return rom
}
