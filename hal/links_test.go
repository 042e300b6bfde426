package hal_test

import (
	"context"
	"strings"
	"testing"

	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/hal/sim"
)

// echoTarget answers each SPI transfer with its bytes plus one.
type echoTarget struct{}

func (echoTarget) Tx(w, r []byte) error {
	for i := range w {
		r[i] = w[i] + 1
	}
	return nil
}

// romTarget is a 1-Wire device that answers its function command with it.
type romTarget struct{ rom uint64 }

func (t romTarget) ROM() uint64 { return t.rom }
func (t romTarget) Tx(w, r []byte) error {
	for i := range r {
		r[i] = w[0]
	}
	return nil
}

func TestSPIAndOneWireOnTheSim(t *testing.T) {
	s := sim.New()
	b, err := hal.Open(s, hal.Config{
		OneWire: []hal.OneWireConfig{{Name: "probes", Bus: "w1"}},
		SPI:     []hal.SPIConfig{{Name: "loop", Dev: "0.0", Hz: 1e6}, {Name: "chip", Dev: "0.1", Hz: 1e6, Mode: 3}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := context.Background()

	loop, err := b.SPI("loop")
	if err != nil {
		t.Fatal(err)
	}
	r := make([]byte, 3)
	if err := loop.Tx(ctx, []byte{1, 2, 3}, r); err != nil || string(r) != "\x01\x02\x03" {
		t.Errorf("loopback read % x, %v; want what was written", r, err)
	}
	if err := loop.Tx(ctx, []byte{1, 2}, make([]byte, 3)); err == nil || !strings.Contains(err.Error(), `SPI device "loop" (0.0)`) {
		t.Errorf("a short write for a longer read: %v, want an error naming the device", err)
	}
	if err := s.PlaceSPI("0.1", echoTarget{}); err != nil {
		t.Fatal(err)
	}
	chip, _ := b.SPI("chip")
	if err := chip.Tx(ctx, []byte{1, 2, 3}, r); err != nil || string(r) != "\x02\x03\x04" {
		t.Errorf("placed device read % x, %v", r, err)
	}
	if _, err := b.SPI("nope"); err == nil || !strings.Contains(err.Error(), "configured: chip, loop") {
		t.Errorf("unknown SPI device: %v", err)
	}

	w, err := b.OneWire("probes")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Do(ctx, func(o hal.OneWire) error { return o.Tx([]byte{0xCC, 0x44}, nil, true) }); err == nil || !strings.Contains(err.Error(), "no presence pulse") {
		t.Errorf("empty bus: %v, want no presence pulse", err)
	}
	const a, c = 0x0000000a1b2c3d28, 0x0000000a1b2c3e28
	for _, rom := range []uint64{c, a} {
		if err := s.PlaceOneWire("1", romTarget{rom}); err != nil {
			t.Fatal(err)
		}
	}
	err = w.Do(ctx, func(o hal.OneWire) error {
		roms, err := o.Search(false)
		if err != nil || len(roms) != 2 || roms[0] != a || roms[1] != c {
			t.Errorf("search = %x, %v; want both, sorted", roms, err)
		}
		match := []byte{0x55, 0x28, 0x3d, 0x2c, 0x1b, 0x0a, 0, 0, 0, 0xBE}
		got := make([]byte, 2)
		if err := o.Tx(match, got, false); err != nil || got[0] != 0xBE {
			t.Errorf("match ROM: % x, %v", got, err)
		}
		match[1] = 0x99 // nobody has it: the bus reads as its pull-up
		if err := o.Tx(match, got, false); err != nil || got[0] != 0xFF || got[1] != 0xFF {
			t.Errorf("match of an absent ROM: % x, %v; want ff ff", got, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if sm, ok := b.Simulator(); !ok || sm == nil {
		t.Error("the sim board is not a Simulator")
	}
}

func TestLinksConfigErrors(t *testing.T) {
	_, err := hal.Open(sim.New(), hal.Config{
		Buses:   []hal.BusConfig{{Name: "x", Bus: "1"}},
		OneWire: []hal.OneWireConfig{{Name: "x", Bus: "w1"}, {Name: "y"}},
		SPI:     []hal.SPIConfig{{Name: "s", Dev: "0.0", Hz: 0, Mode: 4}},
	})
	for _, want := range []string{`1-Wire bus "x" (w1): configured twice`, `1-Wire bus "y" (): no bus`, `SPI device "s" (0.0): clock 0 Hz must be positive`, "mode 4"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v\nwant it to say %q", err, want)
		}
	}
}

func TestLinkNames(t *testing.T) {
	for in, want := range map[string]int{"w1": 1, "1": 1, "w1_bus_master3": 3, "12": 12} {
		if got, err := hal.OneWireMaster(in); err != nil || got != want {
			t.Errorf("OneWireMaster(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "w2", "w1_bus_master", "-1", "99999", "1.0"} {
		if _, err := hal.OneWireMaster(bad); err == nil {
			t.Errorf("OneWireMaster(%q) accepted", bad)
		}
	}
	if b, cs, err := hal.ParseSPIDev("1.2"); err != nil || b != 1 || cs != 2 {
		t.Errorf("ParseSPIDev(1.2) = %d, %d, %v", b, cs, err)
	}
	for _, bad := range []string{"", "0", "0.", ".0", "a.b", "0.0.0", "/dev/spidev0.0"} {
		if _, _, err := hal.ParseSPIDev(bad); err == nil {
			t.Errorf("ParseSPIDev(%q) accepted", bad)
		}
	}
}

// A driver without 1-Wire or SPI is refused at first use, naming both.
func TestLinksNeedTheDriver(t *testing.T) {
	b, err := hal.Open(plainDriver{sim.New()}, hal.Config{SPI: []hal.SPIConfig{{Name: "s", Dev: "0.0", Hz: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	h, _ := b.SPI("s")
	err = h.Tx(context.Background(), []byte{1}, nil)
	if err == nil || !strings.Contains(err.Error(), "has no SPI devices") {
		t.Errorf("SPI on a driver without: %v", err)
	}
	if _, ok := b.Simulator(); ok {
		t.Error("a plain driver is a Simulator")
	}
}

// plainDriver hides everything of the sim but hal.Driver.
type plainDriver struct{ d hal.Driver }

func (p plainDriver) Name() string                                     { return "plain" }
func (p plainDriver) Line(g int) (hal.Line, error)                     { return p.d.Line(g) }
func (p plainDriver) OpenPort(dev string, b int) (hal.PortConn, error) { return p.d.OpenPort(dev, b) }
func (p plainDriver) OpenBus(bus string) (hal.Bus, error)              { return p.d.OpenBus(bus) }
func (p plainDriver) Close() error                                     { return p.d.Close() }
