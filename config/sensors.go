package config

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"
)

// The board's sensors and SPI devices (docs/sensors.md):
//
//	board:
//	  buses: {sensors: {i2c: "1"}, probes: {onewire: w1}}
//	  sensors:
//	    greenhouse: {driver: bme280, bus: sensors, address: 0x76, every: 30s}
//	    soil:       {driver: ds18b20, bus: probes, id: 28-00000a1b2c3d, every: 1m}
//	    supply:     {driver: ina219, bus: sensors, address: 0x40, shunt_ohms: 0.1}
//	    lab:        {driver: aht20, bus: sensors, sim: {temperature: 18, humidity: 55}}
//	  spi: {adc: {dev: "0.0", hz: 1000000, mode: 0}}
//
// Decoding, validation and the writer of these entries are in this file;
// the bus entries they name are board.go's.

// Sensor is a chip that measures quantities, read by its driver over a bus.
type Sensor struct {
	Driver string `yaml:"driver"`
	// Bus names a board.buses entry: an I²C bus, or a 1-Wire bus for a ds18b20.
	Bus string `yaml:"bus"`
	// Address is the I²C address; the driver's default when unset
	// (bme280, bmp280: 0x76; aht20: 0x38; ina219: 0x40). 1-Wire
	// devices have an ID instead.
	Address int `yaml:"address"`
	// ID is a 1-Wire device's id as Linux names it: 28-00000a1b2c3d.
	ID string `yaml:"id"`
	// Every is how often the sensor is sampled into the history.
	Every Duration `yaml:"every"`
	// ShuntOhms is an ina219's shunt resistor.
	ShuntOhms float64 `yaml:"shunt_ohms"`
	// Sim holds the quantities the simulated chip starts with on the sim
	// board (temperature: 21.5); a real board ignores it.
	Sim map[string]float64 `yaml:"sim"`
	// Follows (sim.follows) makes one simulated quantity follow an output
	// pin, so that the simulated board closes the loop: a heater warms the
	// greenhouse. A real board ignores it.
	Follows *SimFollows `yaml:"-"`
}

// SimFollows is a simulated quantity that follows an output pin (sim board
// only): while the pin is high the quantity moves toward Toward at Rate a
// minute; while it is low it drifts back toward its starting value (its sim
// value) at Drift a minute.
//
//	sim: {temperature: 15, follows: {pin: heater, rate: 0.5/min, toward: 30, drift: 0.2/min}}
type SimFollows struct {
	// Pin is a board.pins output.
	Pin string
	// Quantity is what follows it; temperature when unset.
	Quantity string
	// Rate and Drift are changes a minute, both positive; Drift is Rate
	// when unset.
	Rate, Drift float64
	// Toward is where the pin drives the quantity.
	Toward float64
}

// simFollowsKeys are the keys of sim.follows.
var simFollowsKeys = []string{"pin", "quantity", "rate", "toward", "drift"}

// ParseRate reads a change per time, "0.5/min" (per s, min or h), as a
// change a minute.
func ParseRate(s string) (float64, error) {
	num, unit, ok := strings.Cut(strings.TrimSpace(s), "/")
	var per float64
	switch strings.TrimSpace(unit) {
	case "s", "sec":
		per = 60
	case "min", "m":
		per = 1
	case "h", "hour":
		per = 1.0 / 60
	default:
		ok = false
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if !ok || err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("must be a change per time such as 0.5/min (per s, min or h), found %q", s)
	}
	if v <= 0 {
		return 0, fmt.Errorf("must be more than 0 (such as 0.5/min), found %q", s)
	}
	return v * per, nil
}

// FormatRate writes a change a minute as ParseRate reads it.
func FormatRate(perMinute float64) string { return formatNumber(perMinute) + "/min" }

// SPI is an SPI device the spi tools may use.
type SPI struct {
	// Dev is "BUS.CS": "0.0" is /dev/spidev0.0.
	Dev  string `yaml:"dev"`
	Hz   int    `yaml:"hz"`
	Mode int    `yaml:"mode"`
}

// Defaults of the entries.
const (
	defaultEvery     = Duration(time.Minute)
	defaultShuntOhms = 0.1
	defaultSPIHz     = 1000000
)

// sensorDriver is what the config knows of a driver: the bus it needs, its
// addresses, and its quantities with the chip's range (the datasheet's; a
// value outside it cannot be simulated, nor read).
type sensorDriver struct {
	onewire    bool
	addrs      []int // allowed I²C addresses, the default first
	quantities map[string][2]float64
}

var sensorDrivers = map[string]sensorDriver{
	"bme280":  {addrs: []int{0x76, 0x77}, quantities: map[string][2]float64{"temperature": {-40, 85}, "humidity": {0, 100}, "pressure": {300, 1100}}},
	"bmp280":  {addrs: []int{0x76, 0x77}, quantities: map[string][2]float64{"temperature": {-40, 85}, "pressure": {300, 1100}}},
	"ds18b20": {onewire: true, quantities: map[string][2]float64{"temperature": {-55, 125}}},
	"aht20":   {addrs: []int{0x38}, quantities: map[string][2]float64{"temperature": {-40, 85}, "humidity": {0, 100}}},
	"ina219": {addrs: []int{0x40, 0x41, 0x42, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49, 0x4a, 0x4b, 0x4c, 0x4d, 0x4e, 0x4f},
		// Voltage is the bus side (0..26 V); the current's range is the
		// shunt's, checked with shunt_ohms. Power follows from both.
		quantities: map[string][2]float64{"voltage": {0, 26}, "current": {-math.MaxFloat64, math.MaxFloat64}, "power": {0, math.MaxFloat64}}},
}

// SensorDrivers are the drivers a sensor may name, sorted.
var SensorDrivers = func() []string {
	var ds []string
	for d := range sensorDrivers {
		ds = append(ds, d)
	}
	slices.Sort(ds)
	return ds
}()

// SensorRange is the range of a driver's quantity, for the sensors package
// to check that it agrees.
func SensorRange(driver, quantity string) (lo, hi float64, ok bool) {
	r, ok := sensorDrivers[driver].quantities[quantity]
	return r[0], r[1], ok
}

var (
	sensorKeys = []string{"driver", "bus", "address", "id", "every", "shunt_ohms", "sim"}
	spiKeys    = []string{"dev", "hz", "mode"}
	// dsIDRE is a DS18B20's Linux name: the family 28 and 48 bits of serial.
	dsIDRE    = regexp.MustCompile(`^28-[0-9a-f]{12}$`)
	spiDevRE  = regexp.MustCompile(`^[0-9]{1,4}\.[0-9]{1,4}$`)
	onewireRE = regexp.MustCompile(`^(?:w1|[0-9]{1,4}|w1_bus_master[0-9]{1,4})$`)
)

func (d *decoder) sensors(v ast.Node, b *Board) {
	sensors := map[string]Sensor{}
	if d.entries(v, "board.sensors", func(name string, v ast.Node) {
		s := Sensor{Every: defaultEvery}
		path := "board.sensors." + name
		d.fields(v, path, sensorKeys, func(k string, v ast.Node) {
			kp := path + "." + k
			switch k {
			case "driver":
				d.str(v, kp, &s.Driver)
			case "bus":
				d.str(v, kp, &s.Bus)
			case "address":
				d.intIn(v, kp, &s.Address, 0, 0x7f)
			case "id":
				d.str(v, kp, &s.ID)
			case "every":
				d.duration(v, kp, &s.Every)
			case "shunt_ohms":
				d.number(v, kp, &s.ShuntOhms)
			case "sim":
				sim := map[string]float64{}
				if d.entries(v, kp, func(q string, v ast.Node) {
					if q == "follows" {
						s.Follows = d.simFollows(v, kp+".follows")
						return
					}
					var x float64
					d.number(v, kp+"."+q, &x)
					sim[q] = x
				}) {
					s.Sim = nilIfEmpty(sim)
				}
			}
		})
		// Defaults that depend on the driver.
		if dr, ok := sensorDrivers[s.Driver]; ok && !d.has(path+".address") && len(dr.addrs) > 0 {
			s.Address = dr.addrs[0]
		}
		if s.Driver == "ina219" && !d.has(path+".shunt_ohms") {
			s.ShuntOhms = defaultShuntOhms
		}
		sensors[name] = s
	}) {
		b.Sensors = nilIfEmpty(sensors)
	}
}

// simFollows decodes sim.follows: {pin, quantity, rate, toward, drift}.
func (d *decoder) simFollows(v ast.Node, path string) *SimFollows {
	f := &SimFollows{}
	rate := func(v ast.Node, kp string, dst *float64) {
		sc, ok := d.scalar(v, kp, "a change per time such as 0.5/min", false)
		if !ok {
			return
		}
		r, err := ParseRate(sc.text)
		if err != nil {
			d.errf(kp, "%v", err)
			d.fail(kp)
			return
		}
		*dst = r
	}
	d.fields(v, path, simFollowsKeys, func(k string, v ast.Node) {
		kp := path + "." + k
		switch k {
		case "pin":
			d.str(v, kp, &f.Pin)
		case "quantity":
			d.str(v, kp, &f.Quantity)
		case "rate":
			rate(v, kp, &f.Rate)
		case "drift":
			rate(v, kp, &f.Drift)
		case "toward":
			d.number(v, kp, &f.Toward)
		}
	})
	if f.Quantity == "" {
		f.Quantity = "temperature"
	}
	if f.Drift == 0 {
		f.Drift = f.Rate
	}
	return f
}

// validateSimFollows checks a sensor's sim.follows against its driver and
// the board's pins.
func (d *decoder) validateSimFollows(b *Board, path string, s Sensor, dr sensorDriver) {
	f := s.Follows
	fp := path + ".sim.follows"
	if !d.has(fp + ".pin") {
		d.missing(fp+".pin", " (an output of board.pins, such as a heater)")
	} else if p, ok := b.Pins[f.Pin]; !ok {
		d.errf(fp+".pin", "no pin %s in board.pins (%s)", d.quote(fp+".pin", f.Pin), pinList(b.Pins))
	} else if p.Mode != "out" {
		d.errf(fp+".pin", "pin %q is an input: a simulated quantity follows an output (mode: out), as a heater or a fan", f.Pin)
	}
	r, qok := dr.quantities[f.Quantity]
	switch {
	case !qok:
		msg := fmt.Sprintf("a %s has no %s to follow the pin (it has %s)", s.Driver, strconv.Quote(f.Quantity), strings.Join(sortedKeys(dr.quantities), ", "))
		if d.has(fp + ".quantity") {
			d.errf(fp+".quantity", "%s", msg)
		} else {
			d.add(d.keyAt(fp), "%s: %s", fp, msg)
		}
	case f.Quantity == "power":
		d.errf(fp+".quantity", "an ina219's power is its voltage times its current: let one of those follow the pin")
	default:
		if _, set := s.Sim[f.Quantity]; !set {
			d.add(d.keyAt(fp), "%s: %s follows the pin, and sim does not set where it starts (and drifts back to): add %s: VALUE to sim", fp, f.Quantity, f.Quantity)
		}
	}
	if !d.has(fp + ".rate") {
		d.missing(fp+".rate", " (a change per time such as 0.5/min)")
	}
	if !d.has(fp + ".toward") {
		d.missing(fp+".toward", " (where the pin drives "+f.Quantity+")")
	} else if qok && (f.Toward < r[0] || f.Toward > r[1]) {
		d.errf(fp+".toward", "%s is outside a %s's range of %s (%s..%s)", formatNumber(f.Toward), s.Driver, f.Quantity, formatNumber(r[0]), formatNumber(r[1]))
	}
}

func pinList(pins map[string]Pin) string {
	if len(pins) == 0 {
		return "none is configured"
	}
	return "configured: " + strings.Join(sortedKeys(pins), ", ")
}

func (d *decoder) spis(v ast.Node, b *Board) {
	spis := map[string]SPI{}
	if d.entries(v, "board.spi", func(name string, v ast.Node) {
		s := SPI{Hz: defaultSPIHz}
		path := "board.spi." + name
		d.fields(v, path, spiKeys, func(k string, v ast.Node) {
			kp := path + "." + k
			switch k {
			case "dev":
				d.str(v, kp, &s.Dev)
			case "hz":
				d.intIn(v, kp, &s.Hz, math.MinInt32, math.MaxInt32)
			case "mode":
				d.intIn(v, kp, &s.Mode, math.MinInt32, math.MaxInt32)
			}
		})
		spis[name] = s
	}) {
		b.SPI = nilIfEmpty(spis)
	}
}

func (d *decoder) validateSensors(b *Board) {
	type place struct{ bus, at string }
	used := map[place]string{}
	for _, name := range byPosition(d, "board.sensors.", b.Sensors) {
		s := b.Sensors[name]
		path := "board.sensors." + name
		d.checkName("board.sensors", name, "sensor")

		dr, driverOK := sensorDrivers[s.Driver]
		switch {
		case !d.has(path + ".driver"):
			d.missing(path+".driver", " ("+alternatives(SensorDrivers)+")")
		case s.Driver == "sht4x":
			// Named by issue 37, but periph.io/x/devices v3.7.4 has
			// no SHT4x driver, and drivers are periph's, not ours.
			d.errf(path+".driver", "sht4x has no driver in periph.io/x/devices v3.7.4, which clawedge's sensors use; use %s", alternatives(SensorDrivers))
		default:
			d.oneOf(path+".driver", s.Driver, SensorDrivers)
		}

		busOK := false
		if !d.has(path + ".bus") {
			d.missing(path+".bus", " (the name of a board.buses entry)")
		} else if bus, ok := b.Buses[s.Bus]; !ok {
			d.errf(path+".bus", "no bus %s in board.buses (%s)", d.quote(path+".bus", s.Bus), busList(b.Buses))
		} else if driverOK {
			switch {
			case dr.onewire && bus.OneWire == "":
				d.errf(path+".bus", "a %s is a 1-Wire device, and bus %q is I²C: name a bus with onewire: w1", s.Driver, s.Bus)
			case !dr.onewire && bus.I2C == "":
				d.errf(path+".bus", "a %s is an I²C device, and bus %q is 1-Wire: name a bus with i2c: \"1\"", s.Driver, s.Bus)
			default:
				busOK = true
			}
		}

		at := ""
		if driverOK && dr.onewire {
			if d.has(path + ".address") {
				d.errf(path+".address", "a %s on 1-Wire has an id, not an address", s.Driver)
			}
			switch {
			case !d.has(path + ".id"):
				d.missing(path+".id", " (its name under /sys/bus/w1/devices, such as 28-00000a1b2c3d)")
			case !dsIDRE.MatchString(s.ID):
				d.errf(path+".id", "must be a DS18B20's 1-Wire id: 28- and 12 lower-case hex digits, such as 28-00000a1b2c3d, found %s", d.quote(path+".id", s.ID))
			default:
				at = s.ID
			}
		} else if driverOK {
			if d.has(path + ".id") {
				d.errf(path+".id", "a %s on I²C has an address, not an id", s.Driver)
			}
			if !slices.Contains(dr.addrs, s.Address) {
				d.errf(path+".address", "a %s answers at %s, not %#02x", s.Driver, hexList(dr.addrs), s.Address)
			} else {
				at = fmt.Sprintf("%#02x", s.Address)
			}
		}
		if busOK && at != "" {
			p := place{s.Bus, at}
			if other, dup := used[p]; dup {
				where := path + ".address"
				if dr.onewire {
					where = path + ".id"
				}
				if !d.has(where) {
					where = path
				}
				d.errf(where, "%s on bus %q is already sensor %q", at, s.Bus, other)
			} else {
				used[p] = name
			}
		}

		if fp := path + ".every"; d.has(fp) && (s.Every < Duration(time.Second) || s.Every > Duration(24*time.Hour)) {
			d.errf(fp, "must be from 1s to 24h, found %s", s.Every)
		}
		if fp := path + ".shunt_ohms"; d.has(fp) {
			switch {
			case driverOK && s.Driver != "ina219":
				d.errf(fp, "shunt_ohms is an ina219's; a %s has no shunt", s.Driver)
			case s.ShuntOhms <= 0 || s.ShuntOhms > 100:
				d.errf(fp, "must be more than 0 and at most 100 Ω (a typical shunt is 0.1), found %s", formatNumber(s.ShuntOhms))
			}
		}
		if !driverOK {
			continue
		}
		if s.Follows != nil {
			d.validateSimFollows(b, path, s, dr)
		}
		for _, q := range sortedKeys(s.Sim) {
			qp := path + ".sim." + q
			r, ok := dr.quantities[q]
			switch {
			case !ok:
				d.add(d.keyAt(qp), "%s: a %s has no %s (it has %s)", path+".sim", s.Driver, strconv.Quote(q), strings.Join(sortedKeys(dr.quantities), ", "))
			case q == "power":
				d.errf(qp, "an ina219's power is its voltage times its current: set those")
			case q == "current" && s.ShuntOhms > 0 && math.Abs(s.Sim[q]) > 0.32/s.ShuntOhms:
				d.errf(qp, "%s A is past what a %s Ω shunt can read (±%s A: 320 mV across it)", formatNumber(s.Sim[q]), formatNumber(s.ShuntOhms), formatNumber(math.Round(0.32/s.ShuntOhms*1e6)/1e6))
			case s.Sim[q] < r[0] || s.Sim[q] > r[1]:
				d.errf(qp, "%s is outside a %s's range of %s (%s..%s)", formatNumber(s.Sim[q]), s.Driver, q, formatNumber(r[0]), formatNumber(r[1]))
			}
		}
	}

	usedDev := map[string]string{}
	for _, name := range byPosition(d, "board.spi.", b.SPI) {
		s := b.SPI[name]
		path := "board.spi." + name
		d.checkName("board.spi", name, "SPI device")
		switch {
		case !d.has(path + ".dev"):
			d.missing(path+".dev", ` (BUS.CS, such as "0.0" for /dev/spidev0.0)`)
		case !spiDevRE.MatchString(s.Dev):
			d.errf(path+".dev", `must be BUS.CS such as "0.0" (/dev/spidev0.0), found %s`, d.quote(path+".dev", s.Dev))
		default:
			if other, dup := usedDev[s.Dev]; dup {
				d.errf(path+".dev", "%s is already SPI device %q", s.Dev, other)
			} else {
				usedDev[s.Dev] = name
			}
		}
		if s.Hz < 1000 || s.Hz > 125000000 {
			d.errf(path+".hz", "must be from 1000 to 125000000 (Hz), found %d", s.Hz)
		}
		if s.Mode < 0 || s.Mode > 3 {
			d.errf(path+".mode", "must be 0, 1, 2 or 3, found %d", s.Mode)
		}
	}
}

func busList(buses map[string]Bus) string {
	if len(buses) == 0 {
		return "none is configured"
	}
	return "configured: " + strings.Join(sortedKeys(buses), ", ")
}

func hexList(addrs []int) string {
	if len(addrs) > 4 {
		return fmt.Sprintf("%#02x..%#02x", addrs[0], addrs[len(addrs)-1])
	}
	s := make([]string, len(addrs))
	for i, a := range addrs {
		s[i] = fmt.Sprintf("%#02x", a)
	}
	return alternatives(s)
}

// writeSensors writes board.sensors and board.spi for Redacted.
func (c *Config) writeSensors(w *writer) {
	if len(c.Board.Sensors) > 0 {
		w.key(1, "sensors")
		for _, name := range sortedKeys(c.Board.Sensors) {
			s := c.Board.Sensors[name]
			w.key(2, yamlKey(name))
			w.kv(3, "driver", w.str(s.Driver))
			w.kv(3, "bus", w.str(s.Bus))
			if s.ID != "" {
				w.kv(3, "id", w.str(s.ID))
			} else {
				w.kv(3, "address", fmt.Sprintf("%#02x", s.Address))
			}
			w.kv(3, "every", s.Every.String())
			if s.ShuntOhms != 0 {
				w.kv(3, "shunt_ohms", formatNumber(s.ShuntOhms))
			}
			if len(s.Sim) > 0 || s.Follows != nil {
				w.key(3, "sim")
				for _, q := range sortedKeys(s.Sim) {
					w.kv(4, yamlKey(q), formatNumber(s.Sim[q]))
				}
				if f := s.Follows; f != nil {
					w.key(4, "follows")
					w.kv(5, "pin", w.str(f.Pin))
					w.kv(5, "quantity", w.str(f.Quantity))
					w.kv(5, "rate", FormatRate(f.Rate))
					w.kv(5, "toward", formatNumber(f.Toward))
					w.kv(5, "drift", FormatRate(f.Drift))
				}
			}
		}
	}
	if len(c.Board.SPI) > 0 {
		w.key(1, "spi")
		for _, name := range sortedKeys(c.Board.SPI) {
			s := c.Board.SPI[name]
			w.key(2, yamlKey(name))
			w.kv(3, "dev", w.str(s.Dev))
			w.kv(3, "hz", strconv.Itoa(s.Hz))
			w.kv(3, "mode", strconv.Itoa(s.Mode))
		}
	}
}
