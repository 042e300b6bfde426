package periph

import (
	"fmt"
	"os"

	"periph.io/x/conn/v3/onewire"
	"periph.io/x/conn/v3/physic"
	"periph.io/x/conn/v3/spi"
	"periph.io/x/host/v3/netlink"
	"periph.io/x/host/v3/sysfs"

	"github.com/clawedge/clawedge/hal"
)

// This file: 1-Wire through the kernel's w1 netlink interface
// (periph.io/x/host/v3/netlink), SPI through spidev (periph's sysfs driver).

var _ hal.OneWireDriver = (*Driver)(nil)
var _ hal.SPIDriver = (*Driver)(nil)

// OpenOneWire opens a kernel 1-Wire master ("w1", "1", "w1_bus_master1").
// The master exists once the w1-gpio overlay is loaded
// (dtoverlay=w1-gpio in config.txt, GPIO4 by default).
func (d *Driver) OpenOneWire(bus string) (hal.OneWire, error) {
	m, err := hal.OneWireMaster(bus)
	if err != nil {
		return nil, err
	}
	sys := fmt.Sprintf("/sys/bus/w1/devices/w1_bus_master%d", m)
	if _, err := os.Stat(sys); err != nil {
		return nil, fmt.Errorf("1-Wire master %d: %s is missing: load the w1-gpio overlay (dtoverlay=w1-gpio in /boot/firmware/config.txt, data on GPIO4 with a 4.7 kΩ pull-up to 3.3 V) and reboot", m, sys)
	}
	o, err := netlink.New(uint32(m))
	if err != nil {
		return nil, fmt.Errorf("1-Wire master %d: %w (the w1 netlink socket needs root or CAP_NET_ADMIN)", m, err)
	}
	return &oneWire{o: o}, nil
}

// oneWire adapts periph's netlink master to hal.OneWire. The kernel's
// netlink interface cannot hold a strong pull-up, so a parasite-powered
// DS18B20 needs its VDD wired to 3.3 V.
type oneWire struct{ o *netlink.OneWire }

func (w *oneWire) Tx(wb, r []byte, power bool) error {
	return w.o.Tx(wb, r, onewire.Pullup(power))
}

func (w *oneWire) Search(alarmOnly bool) ([]uint64, error) {
	as, err := w.o.Search(alarmOnly)
	if err != nil {
		return nil, err
	}
	roms := make([]uint64, len(as))
	for i, a := range as {
		roms[i] = uint64(a)
	}
	return roms, nil
}

func (w *oneWire) Close() error { return w.o.Close() }

// OpenSPI opens /dev/spidevBUS.CS at hz in mode, 8 bits a word.
func (d *Driver) OpenSPI(dev string, hz int64, mode int) (hal.SPIConn, error) {
	bus, cs, err := hal.ParseSPIDev(dev)
	if err != nil {
		return nil, err
	}
	path := fmt.Sprintf("/dev/spidev%d.%d", bus, cs)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, ExplainSPI(path, err)
	}
	f.Close()
	p, err := sysfs.NewSPI(bus, cs)
	if err != nil {
		return nil, ExplainSPI(path, err)
	}
	c, err := p.Connect(physic.Frequency(hz)*physic.Hertz, spi.Mode(mode), 8)
	if err != nil {
		p.Close()
		return nil, fmt.Errorf("%s: %d Hz, mode %d: %w", path, hz, mode, err)
	}
	return &spiConn{p: p, c: c}, nil
}

type spiConn struct {
	p *sysfs.SPI
	c spi.Conn
}

func (s *spiConn) Tx(w, r []byte) error { return s.c.Tx(w, r) }
func (s *spiConn) Close() error         { return s.p.Close() }
