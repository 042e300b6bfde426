// Package sensors reads the world in units: a configured sensor (a BME280
// on an I²C bus, a DS18B20 on a 1-Wire bus, ...) is opened over a hal
// board's bus and read by periph's driver for its chip
// (periph.io/x/devices/v3), through periph.io/x/conn's interfaces adapted
// from hal's. A Read gives each quantity's value in its unit (°C, %, hPa,
// V, A, W) with its time, or an error naming the sensor: a chip that does
// not answer, a CRC that fails, a skipped measurement or a value outside
// the chip's range is never a reading.
//
// On the sim board each sensor is a chip simulated at the register level
// (sensors/simchip) placed on the sim's bus, so the code that reads it is
// the real driver's; its values are set from the config's sim entry and at
// run time (Set.Simulate, the sim/set tool).
//
// A Sampler reads each sensor at its own interval into the store's
// history (store.History), and tells a callback of each reading. The
// tools sensor/list, sensor/read, sensor/history and sim/set are here too.
package sensors

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// Quantity is a kind of measurement, with one unit.
type Quantity string

const (
	Temperature Quantity = "temperature" // °C
	Humidity    Quantity = "humidity"    // % relative humidity
	Pressure    Quantity = "pressure"    // hPa
	Voltage     Quantity = "voltage"     // V
	Current     Quantity = "current"     // A
	Power       Quantity = "power"       // W
)

// Quantities are every quantity, in the order they are listed.
var Quantities = []Quantity{Temperature, Humidity, Pressure, Voltage, Current, Power}

// Unit is the quantity's unit as it is shown: °C, %, hPa, V, A, W.
func (q Quantity) Unit() string {
	switch q {
	case Temperature:
		return "°C"
	case Humidity:
		return "%"
	case Pressure:
		return "hPa"
	case Voltage:
		return "V"
	case Current:
		return "A"
	case Power:
		return "W"
	}
	return ""
}

// decimals is how many decimals a value of q is shown with: about the
// resolution of the best chip that measures it.
func (q Quantity) decimals() int {
	switch q {
	case Temperature, Humidity, Pressure:
		return 2
	case Voltage:
		return 3
	}
	return 4
}

// Reading is one quantity read from a sensor.
type Reading struct {
	Sensor   string
	Quantity Quantity
	Value    float64
	Time     time.Time
}

// Unit is the reading's unit.
func (r Reading) Unit() string { return r.Quantity.Unit() }

// Round is the value at the quantity's shown resolution.
func (r Reading) Round() float64 {
	p := math.Pow(10, float64(r.Quantity.decimals()))
	return math.Round(r.Value*p) / p
}

// String is "temperature 21.50 °C".
func (r Reading) String() string {
	unit := r.Unit()
	if unit != "%" {
		unit = " " + unit
	}
	return fmt.Sprintf("%s %s%s", r.Quantity, strconv.FormatFloat(r.Value, 'f', r.Quantity.decimals(), 64), unit)
}
