package hal

import (
	"context"
	"fmt"
	"io"
	"sync"
)

// This file: the 1-Wire buses and SPI devices of a board, beside the I²C
// buses of bus.go. A driver provides them only if it implements
// OneWireDriver or SPIDriver, so the Driver interface (and every driver
// written against it) stays as it was.

// OneWire is an open 1-Wire bus: a kernel w1 master on a real board, a
// simulated bus on the sim.
type OneWire interface {
	// Tx resets the bus, writes w (a ROM command first: match ROM and
	// the 8 bytes of an address, or skip ROM) and then reads len(r)
	// bytes. With power the master holds a strong pull-up after the
	// write, for a parasite-powered device converting; a master that
	// cannot (Linux's netlink) ignores it.
	Tx(w, r []byte, power bool) error
	// Search returns the 64-bit ROM codes of the devices present (with
	// alarmOnly, only those in alarm), the family code in the low byte.
	Search(alarmOnly bool) ([]uint64, error)
	Close() error
}

// SPIConn is an open SPI device: Tx clocks w out and r in at the same time
// (full duplex), so r, when given, is as long as w.
type SPIConn interface {
	Tx(w, r []byte) error
	Close() error
}

// OneWireDriver is a Driver with 1-Wire buses: bus is a master number ("1")
// or a kernel name ("w1_bus_master1").
type OneWireDriver interface {
	OpenOneWire(bus string) (OneWire, error)
}

// SPIDriver is a Driver with SPI devices: dev is "BUS.CS" ("0.0" is
// /dev/spidev0.0), hz the clock, mode the SPI mode 0..3.
type SPIDriver interface {
	OpenSPI(dev string, hz int64, mode int) (SPIConn, error)
}

// OneWireConfig configures one named 1-Wire bus.
type OneWireConfig struct {
	Name string
	Bus  string
}

// SPIConfig configures one named SPI device.
type SPIConfig struct {
	Name string
	Dev  string // "0.0"
	Hz   int64
	Mode int
}

// link is what a 1-Wire bus and an SPI device share with BusHandle: opened
// on first use, held by one caller at a time, dropped and reopened after a
// failure (an adapter can come and go), closed with the board.
type link[C io.Closer] struct {
	what string // "1-Wire bus \"probes\" (w1)"
	open func() (C, error)
	sem  chan struct{}

	mu     sync.Mutex
	c      C
	has    bool
	closed bool
}

func newLink[C io.Closer](what string, open func() (C, error)) *link[C] {
	return &link[C]{what: what, open: open, sem: make(chan struct{}, 1)}
}

func (l *link[C]) wrap(err error) error { return fmt.Errorf("%s: %w", l.what, err) }

// do holds the link for the whole of fn; errors name it.
func (l *link[C]) do(ctx context.Context, fn func(c C) error) error {
	select {
	case l.sem <- struct{}{}:
	case <-ctx.Done():
		return l.wrap(ctx.Err())
	}
	defer func() { <-l.sem }()
	if err := ctx.Err(); err != nil {
		return l.wrap(err)
	}
	c, err := l.get()
	if err != nil {
		return err
	}
	if err := fn(c); err != nil {
		l.drop()
		return l.wrap(err)
	}
	return nil
}

func (l *link[C]) get() (C, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var zero C
	if l.closed {
		return zero, l.wrap(fmt.Errorf("the board is closed"))
	}
	if l.has {
		return l.c, nil
	}
	c, err := l.open()
	if err != nil {
		return zero, l.wrap(err)
	}
	l.c, l.has = c, true
	return c, nil
}

func (l *link[C]) drop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.has {
		l.c.Close()
		var zero C
		l.c, l.has = zero, false
	}
}

func (l *link[C]) close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	if !l.has {
		return nil
	}
	err := l.c.Close()
	var zero C
	l.c, l.has = zero, false
	if err != nil {
		return l.wrap(fmt.Errorf("closing: %w", err))
	}
	return nil
}

// OneWireHandle is a configured 1-Wire bus.
type OneWireHandle struct {
	cfg OneWireConfig
	l   *link[OneWire]
}

func newOneWireHandle(b *Board, cfg OneWireConfig) *OneWireHandle {
	return &OneWireHandle{cfg: cfg, l: newLink(fmt.Sprintf("1-Wire bus %q (%s)", cfg.Name, cfg.Bus), func() (OneWire, error) {
		d, ok := b.drv.(OneWireDriver)
		if !ok {
			return nil, fmt.Errorf("the %s driver has no 1-Wire buses", b.drv.Name())
		}
		return d.OpenOneWire(cfg.Bus)
	})}
}

func (h *OneWireHandle) Name() string { return h.cfg.Name }

// Device is the bus as configured: "w1", "1" or "w1_bus_master1".
func (h *OneWireHandle) Device() string { return h.cfg.Bus }

// String is "probes (1-Wire w1)".
func (h *OneWireHandle) String() string { return fmt.Sprintf("%s (1-Wire %s)", h.cfg.Name, h.cfg.Bus) }

// Do holds the bus for the whole of fn (a conversion and its read must not
// be interleaved with another caller's reset). Errors name the bus.
func (h *OneWireHandle) Do(ctx context.Context, fn func(OneWire) error) error {
	return h.l.do(ctx, fn)
}

// SPIHandle is a configured SPI device.
type SPIHandle struct {
	cfg SPIConfig
	l   *link[SPIConn]
}

func newSPIHandle(b *Board, cfg SPIConfig) *SPIHandle {
	return &SPIHandle{cfg: cfg, l: newLink(fmt.Sprintf("SPI device %q (%s)", cfg.Name, cfg.Dev), func() (SPIConn, error) {
		d, ok := b.drv.(SPIDriver)
		if !ok {
			return nil, fmt.Errorf("the %s driver has no SPI devices", b.drv.Name())
		}
		return d.OpenSPI(cfg.Dev, cfg.Hz, cfg.Mode)
	})}
}

func (h *SPIHandle) Name() string { return h.cfg.Name }

// Config is the device as configured.
func (h *SPIHandle) Config() SPIConfig { return h.cfg }

// String is "adc (SPI 0.0, 1000000 Hz, mode 0)".
func (h *SPIHandle) String() string {
	return fmt.Sprintf("%s (SPI %s, %d Hz, mode %d)", h.cfg.Name, h.cfg.Dev, h.cfg.Hz, h.cfg.Mode)
}

// Tx clocks w out and reads as many bytes back (r is nil or as long as w).
func (h *SPIHandle) Tx(ctx context.Context, w, r []byte) error {
	if r != nil && len(r) != len(w) {
		return h.l.wrap(fmt.Errorf("a transfer reads as many bytes as it writes: %d written, %d to read", len(w), len(r)))
	}
	return h.l.do(ctx, func(c SPIConn) error { return c.Tx(w, r) })
}

// I2CTarget is a device at one address of a simulated I²C bus: it sees each
// transaction addressed to it, and an error is a NACK.
type I2CTarget interface {
	Tx(w, r []byte) error
}

// OneWireTarget is a device on a simulated 1-Wire bus. The bus answers the
// ROM commands (search, match, skip, read ROM); Tx gets what follows them
// (a function command and its data) when the device is selected.
type OneWireTarget interface {
	ROM() uint64
	Tx(w, r []byte) error
}

// SPITarget is the device behind a simulated SPI chip select.
type SPITarget interface {
	Tx(w, r []byte) error
}

// Simulator is a driver on which simulated devices can be placed (hal/sim):
// the code that reads them then runs as it would on a real board, over the
// same buses. Placing a device where one is already replaces it.
type Simulator interface {
	PlaceI2C(bus string, addr uint16, t I2CTarget) error
	PlaceOneWire(bus string, t OneWireTarget) error
	PlaceSPI(dev string, t SPITarget) error
}

// OneWireMaster is the kernel's master number of a 1-Wire bus as
// configured: "1", "w1_bus_master1", or "w1", the first master, which the
// Raspberry Pi's w1-gpio overlay creates.
func OneWireMaster(bus string) (int, error) {
	s := bus
	switch {
	case s == "w1":
		return 1, nil
	case len(s) > len("w1_bus_master") && s[:len("w1_bus_master")] == "w1_bus_master":
		s = s[len("w1_bus_master"):]
	}
	n, ok := smallNumber(s)
	if !ok {
		return 0, fmt.Errorf("1-Wire bus %q: want a master number such as 1, w1_bus_master1, or w1", bus)
	}
	return n, nil
}

// ParseSPIDev reads "BUS.CS" ("0.1" is /dev/spidev0.1).
func ParseSPIDev(dev string) (bus, cs int, err error) {
	for i := 0; i < len(dev); i++ {
		if dev[i] != '.' {
			continue
		}
		b, ok1 := smallNumber(dev[:i])
		c, ok2 := smallNumber(dev[i+1:])
		if ok1 && ok2 {
			return b, c, nil
		}
		break
	}
	return 0, 0, fmt.Errorf("SPI device %q: want BUS.CS such as 0.0 (/dev/spidev0.0)", dev)
}

// smallNumber reads 1 to 4 decimal digits: bus numbers are small, and a
// bound keeps a typo from becoming an overflow.
func smallNumber(s string) (int, bool) {
	if len(s) == 0 || len(s) > 4 {
		return 0, false
	}
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}
