package sim

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/clawedge/clawedge/hal"
)

// This file: the buses on which simulated devices are placed (hal.Simulator),
// so that a sensor's real driver runs on the sim board over the same
// interfaces as on hardware: an I²C bus routing each transaction to the
// device at its address, a 1-Wire bus that answers the ROM commands itself
// and hands the rest to the selected device, and SPI chip selects.

var _ hal.Simulator = (*Sim)(nil)
var _ hal.OneWireDriver = (*Sim)(nil)
var _ hal.SPIDriver = (*Sim)(nil)

// chipBus is an I²C bus of placed devices; an address with none NACKs.
type chipBus struct {
	s       *Sim
	bus     string
	targets map[uint16]hal.I2CTarget
}

func (b *chipBus) Tx(addr uint16, w, r []byte) error {
	b.s.mu.Lock()
	t := b.targets[addr]
	b.s.mu.Unlock()
	if t == nil {
		return fmt.Errorf("sim: I²C bus %s: no device at address %#02x (NACK)", b.bus, addr)
	}
	return t.Tx(w, r)
}

func (b *chipBus) Close() error { return nil }

// PlaceI2C puts t at addr of the I²C bus ("1" or "/dev/i2c-1"). A bus that a
// test attached whole with AttachBus cannot take devices.
func (s *Sim) PlaceI2C(bus string, addr uint16, t hal.I2CTarget) error {
	if addr > 0x7f {
		return fmt.Errorf("sim: I²C address %#x is not a 7-bit address", addr)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	key := busKey(bus)
	cb, ok := s.buses[key].(*chipBus)
	if !ok {
		if s.buses[key] != nil {
			return fmt.Errorf("sim: I²C bus %s is attached whole (AttachBus); it takes no placed devices", bus)
		}
		cb = &chipBus{s: s, bus: key, targets: map[uint16]hal.I2CTarget{}}
		s.buses[key] = cb
	}
	cb.targets[addr] = t
	return nil
}

// The ROM commands a 1-Wire master sends after a reset.
const (
	romRead  = 0x33
	romMatch = 0x55
	romSkip  = 0xCC
)

// wireBus is a simulated 1-Wire master and the devices on it.
type wireBus struct {
	s       *Sim
	master  int
	targets []hal.OneWireTarget // sorted by ROM
}

// PlaceOneWire puts t on a 1-Wire bus ("w1", "1", "w1_bus_master1").
func (s *Sim) PlaceOneWire(bus string, t hal.OneWireTarget) error {
	m, err := hal.OneWireMaster(bus)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.wires == nil {
		s.wires = map[int]*wireBus{}
	}
	wb := s.wires[m]
	if wb == nil {
		wb = &wireBus{s: s, master: m}
		s.wires[m] = wb
	}
	wb.targets = slices.DeleteFunc(wb.targets, func(o hal.OneWireTarget) bool { return o.ROM() == t.ROM() })
	wb.targets = append(wb.targets, t)
	slices.SortFunc(wb.targets, func(a, b hal.OneWireTarget) int {
		switch {
		case a.ROM() < b.ROM():
			return -1
		case a.ROM() > b.ROM():
			return 1
		}
		return 0
	})
	return nil
}

// OpenOneWire opens a 1-Wire master; one with no device placed on it is a
// bus where no device answers the reset.
func (s *Sim) OpenOneWire(bus string) (hal.OneWire, error) {
	m, err := hal.OneWireMaster(bus)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errClosed
	}
	if s.wires == nil {
		s.wires = map[int]*wireBus{}
	}
	wb := s.wires[m]
	if wb == nil {
		wb = &wireBus{s: s, master: m}
		s.wires[m] = wb
	}
	return wb, nil
}

func (b *wireBus) devices() []hal.OneWireTarget {
	b.s.mu.Lock()
	defer b.s.mu.Unlock()
	return slices.Clone(b.targets)
}

// Tx answers the ROM command itself. What several devices send at once is
// their wired AND, as on the wire; what nobody sends reads as 1s (the
// pull-up), which is how a missing device looks on a real bus.
func (b *wireBus) Tx(w, r []byte, power bool) error {
	devs := b.devices()
	if len(devs) == 0 {
		return fmt.Errorf("sim: 1-Wire master %d: no presence pulse (no device on the bus)", b.master)
	}
	if len(w) == 0 {
		return fmt.Errorf("sim: 1-Wire master %d: a transaction after the reset starts with a ROM command", b.master)
	}
	for i := range r {
		r[i] = 0xFF
	}
	and := func(t hal.OneWireTarget, fn []byte) error {
		got := make([]byte, len(r))
		if err := t.Tx(fn, got); err != nil {
			return err
		}
		for i := range r {
			r[i] &= got[i]
		}
		return nil
	}
	switch w[0] {
	case romMatch:
		if len(w) < 9 {
			return fmt.Errorf("sim: 1-Wire master %d: match ROM needs the 8 bytes of an address, got %d", b.master, len(w)-1)
		}
		var rom uint64
		for i := 8; i >= 1; i-- {
			rom = rom<<8 | uint64(w[i])
		}
		for _, t := range devs {
			if t.ROM() == rom {
				return and(t, w[9:])
			}
		}
		return nil // nobody selected: the read is all 1s
	case romSkip:
		for _, t := range devs {
			if err := and(t, w[1:]); err != nil {
				return err
			}
		}
		return nil
	case romRead:
		for _, t := range devs {
			var rom [8]byte
			for i := range rom {
				rom[i] = byte(t.ROM() >> (8 * i))
			}
			for i := range r {
				if i < 8 {
					r[i] &= rom[i]
				}
			}
		}
		return nil
	}
	return fmt.Errorf("sim: 1-Wire master %d: unknown ROM command %#02x", b.master, w[0])
}

// alarmed is a device that can be in alarm (a DS18B20 past its limits).
type alarmed interface{ Alarm() bool }

func (b *wireBus) Search(alarmOnly bool) ([]uint64, error) {
	var roms []uint64
	for _, t := range b.devices() {
		if a, ok := t.(alarmed); alarmOnly && (!ok || !a.Alarm()) {
			continue
		}
		roms = append(roms, t.ROM())
	}
	return roms, nil
}

func (b *wireBus) Close() error { return nil }

func (b *wireBus) String() string { return "sim 1-Wire master " + strconv.Itoa(b.master) }

// PlaceSPI puts t behind the chip select of dev ("0.0").
func (s *Sim) PlaceSPI(dev string, t hal.SPITarget) error {
	bus, cs, err := hal.ParseSPIDev(dev)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.spis == nil {
		s.spis = map[[2]int]hal.SPITarget{}
	}
	s.spis[[2]int{bus, cs}] = t
	return nil
}

// OpenSPI opens an SPI device. Where nothing was placed the device is a
// loopback, MISO wired to MOSI, the usual first test of an SPI port: each
// byte read is the byte written.
func (s *Sim) OpenSPI(dev string, hz int64, mode int) (hal.SPIConn, error) {
	bus, cs, err := hal.ParseSPIDev(dev)
	if err != nil {
		return nil, err
	}
	if hz <= 0 || mode < 0 || mode > 3 {
		return nil, fmt.Errorf("sim: SPI %s: clock %d Hz and mode %d: want a positive clock and a mode 0..3", dev, hz, mode)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errClosed
	}
	return &spiConn{s: s, key: [2]int{bus, cs}}, nil
}

type spiConn struct {
	s   *Sim
	key [2]int
}

func (c *spiConn) Tx(w, r []byte) error {
	if r != nil && len(r) != len(w) {
		return fmt.Errorf("sim: SPI %d.%d: full duplex: %d bytes written, %d to read", c.key[0], c.key[1], len(w), len(r))
	}
	c.s.mu.Lock()
	t := c.s.spis[c.key]
	c.s.mu.Unlock()
	if t == nil {
		copy(r, w)
		return nil
	}
	if r == nil {
		r = make([]byte, len(w))
	}
	return t.Tx(w, r)
}

func (c *spiConn) Close() error { return nil }
