// Package periph is the "periph" hal driver for real boards: GPIO through the
// Linux GPIO character device (periph.io/x/host/v3/gpioioctl), serial ports
// through go.bug.st/serial, I²C through periph's sysfs driver.
//
// Everything is opened lazily: a board with only serial ports configured never
// touches /dev/gpiochip*. The hardware-facing surface is kept thin (chip
// lookup, line lookup, bus lookup); the logic that can be tested without
// hardware (the Line adapter, chip choice, error advice) is in plain functions.
package periph

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"periph.io/x/conn/v3/driver/driverreg"
	"periph.io/x/host/v3/gpioioctl"
	"periph.io/x/host/v3/sysfs"

	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/hal/serialport"
)

// PiChipLabels are the labels of the Raspberry Pi GPIO controllers whose line
// offsets are the BCM GPIO numbers of the 40-pin header, in order of
// preference (a Pi 5 also has pinctrl-bcm2712 chips that are not the header).
var PiChipLabels = []string{"pinctrl-rp1", "pinctrl-bcm2711", "pinctrl-bcm2835"}

// Options configure the driver. The zero value suits every Raspberry Pi.
type Options struct {
	// Chip selects the GPIO chip by label ("pinctrl-bcm2711"), name
	// ("gpiochip0") or path ("/dev/gpiochip0"). Empty: the first chip labelled
	// as in PiChipLabels.
	Chip string
}

// Driver is the real-hardware hal.Driver.
type Driver struct {
	opts Options

	gpioOnce sync.Once
	chip     *gpioioctl.GPIOChip
	chipErr  error

	mu     sync.Mutex
	used   []*gpioioctl.GPIOLine
	closed bool
}

// New returns the driver; nothing is opened until used.
func New(opts Options) *Driver { return &Driver{opts: opts} }

var _ hal.Driver = (*Driver)(nil)

// Name is "periph".
func (d *Driver) Name() string { return "periph" }

// Line returns the line at offset gpio of the GPIO chip, which on a Pi is BCM GPIO gpio.
func (d *Driver) Line(gpio int) (hal.Line, error) {
	d.gpioOnce.Do(func() { d.chip, d.chipErr = openChip(d.opts.Chip) })
	if d.chipErr != nil {
		return nil, d.chipErr
	}
	if gpio < 0 || gpio >= d.chip.LineCount() {
		return nil, fmt.Errorf("%s (%s) has lines 0..%d, not %d", d.chip.Path(), d.chip.Label(), d.chip.LineCount()-1, gpio)
	}
	gl := d.chip.ByNumber(gpio)
	if gl == nil {
		return nil, fmt.Errorf("%s (%s): no line %d", d.chip.Path(), d.chip.Label(), gpio)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, errors.New("periph: the driver is closed")
	}
	d.used = append(d.used, gl)
	return NewLine(fmt.Sprintf("GPIO%d (%s line %d)", gpio, d.chip.Path(), gpio), gl), nil
}

// OpenPort opens a real serial device.
func (d *Driver) OpenPort(device string, baud int) (hal.PortConn, error) {
	return serialport.Open(device, baud)
}

// OpenBus opens an I²C bus by number ("1") or path ("/dev/i2c-1").
func (d *Driver) OpenBus(bus string) (hal.Bus, error) {
	n, err := strconv.Atoi(strings.TrimPrefix(bus, "/dev/i2c-"))
	if err != nil {
		return nil, fmt.Errorf("I²C bus %q: want a number like 1 or a path like /dev/i2c-1", bus)
	}
	path := fmt.Sprintf("/dev/i2c-%d", n)
	// Try the device first: periph's own errors do not say what to do.
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, ExplainI2C(path, err)
	}
	f.Close()
	// Opened directly rather than through host.Init and i2creg: that would
	// link every periph host driver (about 1 MB of an 8 MB budget) to find
	// the one sysfs driver we use, and would miss a USB adapter plugged in later.
	b, err := sysfs.NewI2C(n)
	if err != nil {
		return nil, ExplainI2C(path, err)
	}
	return b, nil
}

// Close releases the GPIO lines used (their levels stay as last driven) so
// other programs can request them.
func (d *Driver) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	for _, gl := range d.used {
		gl.Close()
	}
	d.used = nil
	return nil
}

// openChip finds the GPIO chip to use. gpioioctl only logs the chips it fails
// to open, so first try them ourselves, for an error that says what to do.
func openChip(want string) (*gpioioctl.GPIOChip, error) {
	paths, _ := filepath.Glob("/dev/gpiochip*")
	if len(paths) == 0 {
		return nil, errors.New("no /dev/gpiochip*: this system has no GPIO character device (on a board without GPIO, use driver: sim)")
	}
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, ExplainGPIO(p, err)
		}
		f.Close()
	}
	// driverreg.Init runs only the periph drivers this binary imports
	// (gpioioctl, sysfs), not all of host.Init's, which would cost ~1 MB.
	if _, err := driverreg.Init(); err != nil {
		return nil, fmt.Errorf("periph: initialising the GPIO driver: %w", err)
	}
	infos := make([]ChipInfo, len(gpioioctl.Chips))
	for i, c := range gpioioctl.Chips {
		infos[i] = ChipInfo{Name: c.Name(), Label: c.Label(), Path: c.Path(), Lines: c.LineCount()}
	}
	i, err := PickChip(infos, want)
	if err != nil {
		return nil, err
	}
	return gpioioctl.Chips[i], nil
}

// ChipInfo describes a GPIO chip for PickChip.
type ChipInfo struct {
	Name  string // "gpiochip0"
	Label string // "pinctrl-bcm2711"
	Path  string // "/dev/gpiochip0"
	Lines int
}

func (c ChipInfo) String() string {
	return fmt.Sprintf("%s %q (%d lines)", c.Path, c.Label, c.Lines)
}

// PickChip returns the index of the chip to use: the one want names (label,
// name or path), or else the first Raspberry Pi GPIO controller in
// PiChipLabels order. It never guesses: driving the wrong chip's lines could
// switch something unexpected.
func PickChip(chips []ChipInfo, want string) (int, error) {
	list := func() string {
		if len(chips) == 0 {
			return "none found"
		}
		s := make([]string, len(chips))
		for i, c := range chips {
			s[i] = c.String()
		}
		return strings.Join(s, ", ")
	}
	if want != "" {
		for i, c := range chips {
			if want == c.Label || want == c.Name || want == c.Path {
				return i, nil
			}
		}
		return 0, fmt.Errorf("GPIO chip %q not found (chips: %s)", want, list())
	}
	for _, label := range PiChipLabels {
		for i, c := range chips {
			if c.Label == label {
				return i, nil
			}
		}
	}
	return 0, fmt.Errorf("no Raspberry Pi GPIO controller (%s) among the GPIO chips (%s): set the board's chip option to the one to use",
		strings.Join(PiChipLabels, ", "), list())
}
