package config

import (
	"cmp"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"
)

// The board section: the pins, serial ports and I2C buses the tools may touch.
//
//	board:
//	  driver: sim                # sim | periph
//	  pins:
//	    led:    {gpio: 17, mode: out, initial: low, safe: low}
//	    button: {gpio: 27, mode: in, pull: up, edge: both}
//	    relay:  {gpio: 22, mode: out, active_low: true, max_on: 10m}
//	  ports: {arduino: {device: /dev/ttyUSB0, baud: 115200}}
//	  buses: {sensors: {i2c: "1"}, probes: {onewire: w1}}
//	  sensors: {greenhouse: {driver: bme280, bus: sensors, address: 0x76}}
//	  spi: {adc: {dev: "0.0", hz: 1000000}}
//
// The sensors and SPI entries are sensors.go's; decoding, validation and
// the Redacted writer of the rest of the section are in this file.

// Board describes the hardware the tools may touch. Deny by default: a
// pin, port or bus that is not listed here cannot be used at all.
type Board struct {
	// Driver is "sim" (the simulated board, usable anywhere) or "periph"
	// (real hardware through the Linux character devices).
	Driver string          `yaml:"driver"`
	Pins   map[string]Pin  `yaml:"pins"`
	Ports  map[string]Port `yaml:"ports"`
	Buses  map[string]Bus  `yaml:"buses"`
	// Sensors and SPI are sensors.go's.
	Sensors map[string]Sensor `yaml:"sensors"`
	SPI     map[string]SPI    `yaml:"spi"`
}

// Pin is one GPIO line, named so that tools and people refer to "relay",
// not to a BCM number they could mistype.
type Pin struct {
	GPIO int    `yaml:"gpio"`
	Mode string `yaml:"mode"` // in | out
	// Pull and Edge apply to inputs only ("none" when unset); they are
	// empty for outputs.
	Pull string `yaml:"pull"` // none | up | down
	Edge string `yaml:"edge"` // none | rising | falling | both
	// ActiveLow inverts the logical level: "on" drives the line low. Most
	// cheap relay boards are active low.
	ActiveLow bool `yaml:"active_low"`
	// Initial and Safe apply to outputs only ("low" when unset); they are
	// empty for inputs. Safe is the level the board returns the pin to
	// on shutdown and when MaxOn expires.
	Initial string `yaml:"initial"` // low | high
	Safe    string `yaml:"safe"`    // low | high
	// MaxOn bounds how long an output may stay away from its safe level;
	// zero means no bound. It exists so that a wedged agent cannot leave
	// a heater or a garage door motor running.
	MaxOn Duration `yaml:"max_on"`
}

// Port is a serial device the serial tools may open.
type Port struct {
	Device string `yaml:"device"`
	Baud   int    `yaml:"baud"`
}

// Bus is an I2C bus the i2c tools may use, or a 1-Wire bus sensors are on:
// exactly one of the two is set.
type Bus struct {
	// I2C is the bus number ("1") or the device path ("/dev/i2c-1").
	I2C string `yaml:"i2c"`
	// OneWire is a kernel 1-Wire master: "w1" (the first, which the
	// w1-gpio overlay makes), a number ("1") or its name
	// ("w1_bus_master1").
	OneWire string `yaml:"onewire"`
}

// Defaults inside a board section the file introduces.
const (
	defaultDriver     = "sim"
	defaultBaud       = 115200
	defaultPull       = "none"
	defaultEdge       = "none"
	defaultLevel      = "low"
	defaultRelayMaxOn = Duration(10 * time.Minute)
)

// The keys of the section and the values they take.
var (
	boardKeys = []string{"driver", "pins", "ports", "buses", "sensors", "spi"}
	pinKeys   = []string{"gpio", "mode", "pull", "edge", "active_low", "initial", "safe", "max_on"}
	portKeys  = []string{"device", "baud"}
	busKeys   = []string{"i2c", "onewire"}
	drivers   = []string{"sim", "periph"}
	modes     = []string{"in", "out"}
	pulls     = []string{"none", "up", "down"}
	edges     = []string{"none", "rising", "falling", "both"}
	levels    = []string{"low", "high"}
	// standardBauds are the rates Linux termios can set without the
	// BOTHER escape hatch; anything else is almost always a typo
	// (11520, 9660) that would show up as garbage on the line.
	standardBauds = []int{50, 75, 110, 134, 150, 200, 300, 600, 1200, 1800, 2400, 4800,
		9600, 19200, 38400, 57600, 115200, 230400, 460800, 500000, 576000, 921600,
		1000000, 1152000, 1500000, 2000000, 2500000, 3000000, 3500000, 4000000}
	// i2cRE accepts a bus number or its character device.
	i2cRE = regexp.MustCompile(`^(?:[0-9]+|/dev/i2c-[0-9]+)$`)
)

// GPIO number ranges by driver. The simulated board models the 40-pin
// header, whose BCM GPIOs are 0-27; periph addresses Linux GPIO lines,
// which go higher on boards with expanders.
const (
	maxGPIOSim    = 27
	maxGPIOPeriph = 1023
)

// defaultBoard is the simulated board with an LED, a button and a relay, so
// that every tool can be tried on a laptop. Each call returns fresh maps.
func defaultBoard() Board {
	return Board{
		Driver: defaultDriver,
		Pins: map[string]Pin{
			"led":    {GPIO: 17, Mode: "out", Initial: defaultLevel, Safe: defaultLevel},
			"button": {GPIO: 27, Mode: "in", Pull: "up", Edge: "both"},
			"relay": {GPIO: 22, Mode: "out", ActiveLow: true, Initial: defaultLevel,
				Safe: defaultLevel, MaxOn: defaultRelayMaxOn},
		},
	}
}

func (d *decoder) board(n ast.Node, b *Board) {
	d.fields(n, "board", boardKeys, func(k string, v ast.Node) {
		switch k {
		case "driver":
			d.str(v, "board.driver", &b.Driver)
		case "pins":
			// A file that lists pins means exactly those pins: the
			// defaults' LED, button and relay are not merged in,
			// or a real board would expose a "relay" on GPIO 22
			// that nobody wired.
			pins := map[string]Pin{}
			if d.entries(v, "board.pins", func(name string, v ast.Node) {
				pins[name] = d.pin(v, "board.pins."+name)
			}) {
				b.Pins = pins
			}
		case "ports":
			ports := map[string]Port{}
			if d.entries(v, "board.ports", func(name string, v ast.Node) {
				p := Port{Baud: defaultBaud}
				path := "board.ports." + name
				d.fields(v, path, portKeys, func(k string, v ast.Node) {
					switch k {
					case "device":
						d.str(v, path+".device", &p.Device)
					case "baud":
						d.intField(v, path+".baud", &p.Baud)
					}
				})
				ports[name] = p
			}) {
				b.Ports = nilIfEmpty(ports)
			}
		case "buses":
			buses := map[string]Bus{}
			if d.entries(v, "board.buses", func(name string, v ast.Node) {
				var bus Bus
				path := "board.buses." + name
				d.fields(v, path, busKeys, func(k string, v ast.Node) {
					if k == "onewire" {
						d.str(v, path+".onewire", &bus.OneWire)
					} else {
						d.str(v, path+".i2c", &bus.I2C)
					}
				})
				buses[name] = bus
			}) {
				b.Buses = nilIfEmpty(buses)
			}
		case "sensors":
			d.sensors(v, b) // sensors.go
		case "spi":
			d.spis(v, b)
		}
	})
}

func (d *decoder) pin(n ast.Node, path string) Pin {
	var p Pin
	d.fields(n, path, pinKeys, func(k string, v ast.Node) {
		kp := path + "." + k
		switch k {
		case "gpio":
			d.intField(v, kp, &p.GPIO)
		case "mode":
			d.str(v, kp, &p.Mode)
		case "pull":
			d.str(v, kp, &p.Pull)
		case "edge":
			d.str(v, kp, &p.Edge)
		case "active_low":
			d.boolean(v, kp, &p.ActiveLow)
		case "initial":
			d.str(v, kp, &p.Initial)
		case "safe":
			d.str(v, kp, &p.Safe)
		case "max_on":
			d.duration(v, kp, &p.MaxOn)
		}
	})
	// Defaults depend on the direction: pull and edge mean something
	// only for inputs, initial and safe only for outputs.
	switch p.Mode {
	case "in":
		p.Pull = cmp.Or(p.Pull, defaultPull)
		p.Edge = cmp.Or(p.Edge, defaultEdge)
	case "out":
		p.Initial = cmp.Or(p.Initial, defaultLevel)
		p.Safe = cmp.Or(p.Safe, defaultLevel)
	}
	return p
}

func (d *decoder) validateBoard(b *Board) {
	driverOK := d.oneOf("board.driver", b.Driver, drivers)
	maxGPIO := maxGPIOSim
	if b.Driver == "periph" {
		maxGPIO = maxGPIOPeriph
	}

	usedGPIO := map[int]string{}
	for _, name := range byPosition(d, "board.pins.", b.Pins) {
		p := b.Pins[name]
		path := "board.pins." + name
		d.checkName("board.pins", name, "pin")

		if d.has(path+".gpio") || d.failed[path+".gpio"] {
			switch {
			case d.failed[path+".gpio"]:
			case !driverOK:
				// The range depends on the driver, which is wrong.
			case p.GPIO < 0 || p.GPIO > maxGPIO:
				why := "the BCM GPIO numbers of the 40-pin header"
				if b.Driver == "periph" {
					why = "Linux GPIO line offsets"
				}
				d.errf(path+".gpio", "GPIO %d is out of range for the %s driver (0..%d: %s)", p.GPIO, b.Driver, maxGPIO, why)
			default:
				if other, dup := usedGPIO[p.GPIO]; dup {
					d.errf(path+".gpio", "GPIO %d is already used by pin %q", p.GPIO, other)
				} else {
					usedGPIO[p.GPIO] = name
				}
			}
		} else if d.has(path) {
			d.missing(path+".gpio", " (the BCM GPIO number)")
		} else if _, dup := usedGPIO[p.GPIO]; !dup {
			usedGPIO[p.GPIO] = name // a default pin
		}

		modeOK := false
		if p.Mode == "" && !d.has(path+".mode") {
			d.missing(path+".mode", " (in or out)")
		} else {
			modeOK = d.oneOf(path+".mode", p.Mode, modes)
		}

		// A pin is either an input or an output. Settings of the other
		// direction are refused rather than ignored: "edge: both" on an
		// output means the user believes they will get events, and
		// "safe: low" on an input means they believe it is driven.
		for _, f := range []struct {
			key, v string
			valid  []string
			dir    string
		}{
			{"pull", p.Pull, pulls, "in"},
			{"edge", p.Edge, edges, "in"},
			{"initial", p.Initial, levels, "out"},
			{"safe", p.Safe, levels, "out"},
		} {
			fp := path + "." + f.key
			if !d.has(fp) {
				continue
			}
			if modeOK && p.Mode != f.dir {
				d.errf(fp, "%s applies to %s pins, and %q is an %s pin (mode: %s): it cannot be both in and out", f.key, direction(f.dir), name, direction(p.Mode), p.Mode)
				continue
			}
			d.oneOf(fp, f.v, f.valid)
		}
		if fp := path + ".max_on"; d.has(fp) {
			switch {
			case modeOK && p.Mode == "in":
				d.errf(fp, "max_on applies to output pins, and %q is an input pin (mode: in): it cannot be both in and out", name)
			case p.MaxOn <= 0:
				d.errf(fp, "must be greater than zero (leave max_on out for no limit)")
			}
		}
	}

	usedDevice := map[string]string{}
	for _, name := range byPosition(d, "board.ports.", b.Ports) {
		p := b.Ports[name]
		path := "board.ports." + name
		d.checkName("board.ports", name, "port")
		if p.Device == "" {
			if d.has(path + ".device") {
				d.errf(path+".device", "must not be empty")
			} else {
				d.missing(path+".device", " (such as /dev/ttyUSB0)")
			}
		} else {
			dev := filepath.Clean(p.Device)
			if other, dup := usedDevice[dev]; dup {
				d.errf(path+".device", "%s is already used by port %q", d.quote(path+".device", p.Device), other)
			} else {
				usedDevice[dev] = name
			}
		}
		d.checkBaud(path+".baud", p.Baud)
	}

	usedBus := map[string]string{}
	for _, name := range byPosition(d, "board.buses.", b.Buses) {
		bus := b.Buses[name]
		path := "board.buses." + name
		d.checkName("board.buses", name, "bus")
		switch {
		case d.has(path+".i2c") && d.has(path+".onewire"):
			d.errf(path+".onewire", "a bus is either I²C or 1-Wire: keep i2c or onewire, not both")
		case d.has(path + ".onewire"):
			if !onewireRE.MatchString(bus.OneWire) {
				d.errf(path+".onewire", `must be a 1-Wire master: w1, a number such as "1", or w1_bus_master1, found %s`, d.quote(path+".onewire", bus.OneWire))
				break
			}
			dev := "w1:" + strings.TrimPrefix(bus.OneWire, "w1_bus_master")
			if bus.OneWire == "w1" {
				dev = "w1:1"
			}
			if n, err := strconv.Atoi(dev[3:]); err == nil {
				dev = "w1:" + strconv.Itoa(n)
			}
			if other, dup := usedBus[dev]; dup {
				d.errf(path+".onewire", "1-Wire master %s is already configured as %q", dev[3:], other)
			} else {
				usedBus[dev] = name
			}
		case !d.has(path + ".i2c"):
			d.missing(path+".i2c", ` (a bus number such as "1", or /dev/i2c-1; or onewire: w1 for a 1-Wire bus)`)
		case !i2cRE.MatchString(bus.I2C):
			d.errf(path+".i2c", `must be a bus number such as "1" or a device such as /dev/i2c-1, found %s`, d.quote(path+".i2c", bus.I2C))
		default:
			dev := strings.TrimPrefix(bus.I2C, "/dev/i2c-")
			if n, err := strconv.Atoi(dev); err == nil {
				dev = strconv.Itoa(n) // "01" is bus 1
			}
			if other, dup := usedBus[dev]; dup {
				d.errf(path+".i2c", "bus %s is already configured as %q", dev, other)
			} else {
				usedBus[dev] = name
			}
		}
	}
	d.validateSensors(b) // sensors.go
}

func direction(mode string) string {
	if mode == "in" {
		return "input"
	}
	return "output"
}

func (d *decoder) checkBaud(path string, baud int) {
	if !slices.Contains(standardBauds, baud) {
		d.errf(path, "%d is not a standard baud rate (such as 9600, 19200, 38400, 57600, 115200 or 230400)", baud)
	}
}

// writeBoard writes the board section for Redacted.
func (c *Config) writeBoard(w *writer) {
	w.key(0, "board")
	w.kv(1, "driver", w.str(c.Board.Driver))
	// pins is always written, even empty: an absent pins key would bring
	// back the default pins on the next parse.
	if len(c.Board.Pins) == 0 {
		w.kv(1, "pins", "{}")
	} else {
		w.key(1, "pins")
		for _, name := range sortedKeys(c.Board.Pins) {
			p := c.Board.Pins[name]
			w.key(2, yamlKey(name))
			w.kv(3, "gpio", strconv.Itoa(p.GPIO))
			w.kv(3, "mode", w.str(p.Mode))
			w.kvOmit(3, "pull", p.Pull)
			w.kvOmit(3, "edge", p.Edge)
			if p.ActiveLow {
				w.kv(3, "active_low", "true")
			}
			w.kvOmit(3, "initial", p.Initial)
			w.kvOmit(3, "safe", p.Safe)
			if p.MaxOn != 0 {
				// A Duration's text never resolves to another YAML
				// type (it always ends in a unit), so it goes plain.
				w.kv(3, "max_on", p.MaxOn.String())
			}
		}
	}
	if len(c.Board.Ports) > 0 {
		w.key(1, "ports")
		for _, name := range sortedKeys(c.Board.Ports) {
			p := c.Board.Ports[name]
			w.key(2, yamlKey(name))
			w.kv(3, "device", w.str(p.Device))
			w.kv(3, "baud", strconv.Itoa(p.Baud))
		}
	}
	if len(c.Board.Buses) > 0 {
		w.key(1, "buses")
		for _, name := range sortedKeys(c.Board.Buses) {
			w.key(2, yamlKey(name))
			if ow := c.Board.Buses[name].OneWire; ow != "" {
				w.kv(3, "onewire", w.str(ow))
			} else {
				w.kv(3, "i2c", w.str(c.Board.Buses[name].I2C))
			}
		}
	}
	c.writeSensors(w) // sensors.go
}
