package hal

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
)

// Board is a configured board: the named pins, ports and buses of a Config on
// top of a Driver. It is safe for concurrent use.
type Board struct {
	drv   Driver
	pins  map[string]*Pin
	ports map[string]*Port
	buses map[string]*BusHandle
	wires map[string]*OneWireHandle
	spis  map[string]*SPIHandle

	pinList  []*Pin
	portList []*Port
	busList  []*BusHandle
	wireList []*OneWireHandle
	spiList  []*SPIHandle

	// ctx is cancelled by Close: it wakes pulses and edge waits.
	ctx    context.Context
	cancel context.CancelFunc

	closeOnce sync.Once
	closeErr  error
}

// Open checks cfg, then configures every pin: inputs with their pull and edge,
// outputs driven to their Initial level. Ports and buses open on first use.
//
// Open takes ownership of d: on error, outputs configured so far are returned
// to their Safe level and d is closed.
func Open(d Driver, cfg Config) (*Board, error) {
	if err := checkConfig(&cfg); err != nil {
		d.Close()
		return nil, err
	}
	b := &Board{
		drv:   d,
		pins:  make(map[string]*Pin, len(cfg.Pins)),
		ports: make(map[string]*Port, len(cfg.Ports)),
		buses: make(map[string]*BusHandle, len(cfg.Buses)),
		wires: make(map[string]*OneWireHandle, len(cfg.OneWire)),
		spis:  make(map[string]*SPIHandle, len(cfg.SPI)),
	}
	b.ctx, b.cancel = context.WithCancel(context.Background())
	for _, pc := range cfg.Pins {
		p, err := openPin(b, pc)
		if err != nil {
			b.Close()
			return nil, err
		}
		b.pins[pc.Name] = p
		b.pinList = append(b.pinList, p)
	}
	for _, pc := range cfg.Ports {
		p := newPort(b, pc)
		b.ports[pc.Name] = p
		b.portList = append(b.portList, p)
	}
	for _, bc := range cfg.Buses {
		h := newBusHandle(b, bc)
		b.buses[bc.Name] = h
		b.busList = append(b.busList, h)
	}
	for _, wc := range cfg.OneWire {
		h := newOneWireHandle(b, wc)
		b.wires[wc.Name] = h
		b.wireList = append(b.wireList, h)
	}
	for _, sc := range cfg.SPI {
		h := newSPIHandle(b, sc)
		b.spis[sc.Name] = h
		b.spiList = append(b.spiList, h)
	}
	sort.Slice(b.wireList, func(i, j int) bool { return b.wireList[i].cfg.Name < b.wireList[j].cfg.Name })
	sort.Slice(b.spiList, func(i, j int) bool { return b.spiList[i].cfg.Name < b.spiList[j].cfg.Name })
	sort.Slice(b.pinList, func(i, j int) bool { return b.pinList[i].cfg.Name < b.pinList[j].cfg.Name })
	sort.Slice(b.portList, func(i, j int) bool { return b.portList[i].cfg.Name < b.portList[j].cfg.Name })
	sort.Slice(b.busList, func(i, j int) bool { return b.busList[i].cfg.Name < b.busList[j].cfg.Name })
	return b, nil
}

// Driver returns the driver's name: "sim" or "periph".
func (b *Board) Driver() string { return b.drv.Name() }

// Pin returns a configured pin; any other name is an error listing what exists.
func (b *Board) Pin(name string) (*Pin, error) {
	if p, ok := b.pins[name]; ok {
		return p, nil
	}
	return nil, unknown("pin", "pins", name, b.pinList)
}

// Pins returns every pin, sorted by name.
func (b *Board) Pins() []*Pin { return append([]*Pin(nil), b.pinList...) }

// Port returns a configured serial port; any other name is an error listing what exists.
func (b *Board) Port(name string) (*Port, error) {
	if p, ok := b.ports[name]; ok {
		return p, nil
	}
	return nil, unknown("port", "ports", name, b.portList)
}

// Ports returns every serial port, sorted by name.
func (b *Board) Ports() []*Port { return append([]*Port(nil), b.portList...) }

// Bus returns a configured I²C bus; any other name is an error listing what exists.
func (b *Board) Bus(name string) (*BusHandle, error) {
	if h, ok := b.buses[name]; ok {
		return h, nil
	}
	return nil, unknown("bus", "buses", name, b.busList)
}

// Buses returns every I²C bus, sorted by name.
func (b *Board) Buses() []*BusHandle { return append([]*BusHandle(nil), b.busList...) }

// OneWire returns a configured 1-Wire bus; any other name is an error listing what exists.
func (b *Board) OneWire(name string) (*OneWireHandle, error) {
	if h, ok := b.wires[name]; ok {
		return h, nil
	}
	return nil, unknown("1-Wire bus", "1-Wire buses", name, b.wireList)
}

// OneWires returns every 1-Wire bus, sorted by name.
func (b *Board) OneWires() []*OneWireHandle { return append([]*OneWireHandle(nil), b.wireList...) }

// SPI returns a configured SPI device; any other name is an error listing what exists.
func (b *Board) SPI(name string) (*SPIHandle, error) {
	if h, ok := b.spis[name]; ok {
		return h, nil
	}
	return nil, unknown("SPI device", "SPI devices", name, b.spiList)
}

// SPIs returns every SPI device, sorted by name.
func (b *Board) SPIs() []*SPIHandle { return append([]*SPIHandle(nil), b.spiList...) }

// Simulator returns the driver when simulated devices can be placed on it
// (the sim board), so that sensors configured with simulated values can be
// put on its buses; a real board has none.
func (b *Board) Simulator() (Simulator, bool) {
	s, ok := b.drv.(Simulator)
	return s, ok
}

// String is "sim board: 3 pins, 1 port, 0 buses".
func (b *Board) String() string {
	return fmt.Sprintf("%s board: %s, %s, %s", b.drv.Name(),
		plural(len(b.pinList), "pin", "pins"), plural(len(b.portList), "port", "ports"), plural(len(b.busList), "bus", "buses"))
}

// Close returns every output pin to its Safe level, stops max_on timers, wakes
// pulses and edge waits, and closes ports, buses and the driver. Calling it
// again does nothing and returns nil.
func (b *Board) Close() error {
	first := false
	b.closeOnce.Do(func() {
		first = true
		b.cancel()
		var errs []error
		for _, p := range b.pinList {
			errs = append(errs, p.close())
		}
		for _, p := range b.portList {
			errs = append(errs, p.close())
		}
		for _, h := range b.busList {
			errs = append(errs, h.close())
		}
		for _, h := range b.wireList {
			errs = append(errs, h.l.close())
		}
		for _, h := range b.spiList {
			errs = append(errs, h.l.close())
		}
		if err := b.drv.Close(); err != nil {
			errs = append(errs, fmt.Errorf("closing %s driver: %w", b.drv.Name(), err))
		}
		b.closeErr = errors.Join(errs...)
	})
	if !first {
		return nil
	}
	return b.closeErr
}

type named interface{ Name() string }

func unknown[T named](kind, kinds, name string, have []T) error {
	if len(have) == 0 {
		return fmt.Errorf("unknown %s %q (no %s configured)", kind, name, kinds)
	}
	names := make([]string, len(have))
	for i, h := range have {
		names[i] = h.Name()
	}
	return fmt.Errorf("unknown %s %q (configured: %s)", kind, name, strings.Join(names, ", "))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// checkConfig normalizes empty Pull and Edge to none and reports every problem
// at once, each naming the pin, port or bus.
func checkConfig(cfg *Config) error {
	var errs []error
	byName := map[string]bool{}
	byGPIO := map[int]string{}
	for i := range cfg.Pins {
		pc := &cfg.Pins[i]
		if pc.Pull == "" {
			pc.Pull = PullNone
		}
		if pc.Edge == "" {
			pc.Edge = EdgeNone
		}
		bad := func(format string, args ...any) {
			errs = append(errs, fmt.Errorf("pin %q (GPIO%d): %s", pc.Name, pc.GPIO, fmt.Sprintf(format, args...)))
		}
		switch {
		case pc.Name == "":
			bad("the name is empty")
		case byName[pc.Name]:
			bad("configured twice")
		}
		byName[pc.Name] = true
		if pc.GPIO < 0 {
			bad("GPIO number must not be negative")
		} else if other, dup := byGPIO[pc.GPIO]; dup {
			bad("GPIO%d is already used by pin %q", pc.GPIO, other)
		} else {
			byGPIO[pc.GPIO] = pc.Name
		}
		switch pc.Mode {
		case ModeIn:
			if pc.MaxOn != 0 {
				bad("max_on is only for outputs")
			}
		case ModeOut:
			if pc.Pull != PullNone {
				bad("pull is only for inputs")
			}
			if pc.Edge != EdgeNone {
				bad("edge is only for inputs")
			}
			if pc.MaxOn < 0 {
				bad("max_on must not be negative")
			}
		default:
			bad("mode %q: want in or out", pc.Mode)
		}
		switch pc.Pull {
		case PullNone, PullUp, PullDown:
		default:
			bad("pull %q: want none, up or down", pc.Pull)
		}
		switch pc.Edge {
		case EdgeNone, EdgeRising, EdgeFalling, EdgeBoth:
		default:
			bad("edge %q: want none, rising, falling or both", pc.Edge)
		}
	}

	portNames := map[string]bool{}
	devices := map[string]string{}
	for _, pc := range cfg.Ports {
		bad := func(format string, args ...any) {
			errs = append(errs, fmt.Errorf("port %q (%s): %s", pc.Name, pc.Device, fmt.Sprintf(format, args...)))
		}
		switch {
		case pc.Name == "":
			bad("the name is empty")
		case portNames[pc.Name]:
			bad("configured twice")
		}
		portNames[pc.Name] = true
		if pc.Device == "" {
			bad("no device path")
		} else if other, dup := devices[pc.Device]; dup {
			bad("device already used by port %q", other)
		} else {
			devices[pc.Device] = pc.Name
		}
		if pc.Baud <= 0 {
			bad("baud %d must be positive", pc.Baud)
		}
	}

	busNames := map[string]bool{}
	for _, bc := range cfg.Buses {
		bad := func(format string, args ...any) {
			errs = append(errs, fmt.Errorf("bus %q (%s): %s", bc.Name, bc.Bus, fmt.Sprintf(format, args...)))
		}
		switch {
		case bc.Name == "":
			bad("the name is empty")
		case busNames[bc.Name]:
			bad("configured twice")
		}
		busNames[bc.Name] = true
		if bc.Bus == "" {
			bad("no bus (want a number like 1 or a path like /dev/i2c-1)")
		}
	}

	// A 1-Wire bus and an I²C bus are both "buses" to a sensor's
	// configuration, so their names share one space.
	for _, wc := range cfg.OneWire {
		bad := func(format string, args ...any) {
			errs = append(errs, fmt.Errorf("1-Wire bus %q (%s): %s", wc.Name, wc.Bus, fmt.Sprintf(format, args...)))
		}
		switch {
		case wc.Name == "":
			bad("the name is empty")
		case busNames[wc.Name]:
			bad("configured twice")
		}
		busNames[wc.Name] = true
		if wc.Bus == "" {
			bad("no bus (want a master number like 1, or w1)")
		}
	}

	spiNames := map[string]bool{}
	for _, sc := range cfg.SPI {
		bad := func(format string, args ...any) {
			errs = append(errs, fmt.Errorf("SPI device %q (%s): %s", sc.Name, sc.Dev, fmt.Sprintf(format, args...)))
		}
		switch {
		case sc.Name == "":
			bad("the name is empty")
		case spiNames[sc.Name]:
			bad("configured twice")
		}
		spiNames[sc.Name] = true
		if sc.Dev == "" {
			bad("no device (want BUS.CS such as 0.0)")
		}
		if sc.Hz <= 0 {
			bad("clock %d Hz must be positive", sc.Hz)
		}
		if sc.Mode < 0 || sc.Mode > 3 {
			bad("mode %d: want 0, 1, 2 or 3", sc.Mode)
		}
	}
	return errors.Join(errs...)
}
