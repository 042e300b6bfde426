package sensors

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"periph.io/x/conn/v3/i2c"
	"periph.io/x/conn/v3/onewire"
	"periph.io/x/conn/v3/physic"
	"periph.io/x/devices/v3/aht20"
	"periph.io/x/devices/v3/bmxx80"
	"periph.io/x/devices/v3/ds18b20"
	"periph.io/x/devices/v3/ina219"

	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/sensors/simchip"
)

// This file: each driver is periph's, given a bus through periph's conn
// interfaces. A driver's device is made on the first read and dropped after
// a failed one, so a chip that was unplugged, replaced or powered down is
// set up again (its id and calibration read anew) when it answers again.

// driver reads one kind of chip.
type driver interface {
	quantities() []Quantity
	// read measures once. The sensor's lock is held.
	read(ctx context.Context) (map[Quantity]float64, error)
	// reset drops the periph device after a failure.
	reset()
	// chip makes the simulated chip of this sensor for the sim board.
	chip(s Spec) (simchip.Chip, error)
}

// i2cBus is hal's I²C bus seen as periph's i2c.Bus. It is valid only
// inside a hold of the bus (hal.BusHandle.Do), which sets b: a periph
// driver's transactions of one read are then not interleaved with another
// caller's. watch, when set, sees every transaction.
type i2cBus struct {
	name  string
	b     hal.Bus
	watch func(addr uint16, w, r []byte)
}

func (a *i2cBus) String() string { return a.name }

func (a *i2cBus) Tx(addr uint16, w, r []byte) error {
	if a.b == nil {
		return errors.New("the bus is not held (a driver used it outside a read)")
	}
	if err := a.b.Tx(addr, w, r); err != nil {
		return fmt.Errorf("address %#02x: %w", addr, err)
	}
	if a.watch != nil {
		a.watch(addr, w, r)
	}
	return nil
}

// SetSpeed is refused: the bus clock is the kernel's (dtparam=i2c_arm_baudrate),
// shared by every device on the bus.
func (a *i2cBus) SetSpeed(physic.Frequency) error {
	return errors.New("the I²C clock is set by the kernel (dtparam=i2c_arm_baudrate), not by a sensor")
}

var _ i2c.Bus = (*i2cBus)(nil)

// do holds h for fn with the adapter pointing at the held bus.
func (a *i2cBus) do(ctx context.Context, h *hal.BusHandle, fn func() error) error {
	return h.Do(ctx, func(b hal.Bus) error {
		a.b = b
		defer func() { a.b = nil }()
		return fn()
	})
}

// wireBus is hal's 1-Wire bus seen as periph's onewire.Bus, valid inside a
// hold of the bus like i2cBus.
type wireBus struct {
	name string
	o    hal.OneWire
}

func (a *wireBus) String() string { return a.name }

func (a *wireBus) Tx(w, r []byte, power onewire.Pullup) error {
	if a.o == nil {
		return errors.New("the bus is not held (a driver used it outside a read)")
	}
	return a.o.Tx(w, r, bool(power))
}

func (a *wireBus) Search(alarmOnly bool) ([]onewire.Address, error) {
	if a.o == nil {
		return nil, errors.New("the bus is not held (a driver used it outside a read)")
	}
	roms, err := a.o.Search(alarmOnly)
	addrs := make([]onewire.Address, len(roms))
	for i, r := range roms {
		addrs[i] = onewire.Address(r)
	}
	return addrs, err
}

var _ onewire.Bus = (*wireBus)(nil)

func (a *wireBus) do(ctx context.Context, h *hal.OneWireHandle, fn func() error) error {
	return h.Do(ctx, func(o hal.OneWire) error {
		a.o = o
		defer func() { a.o = nil }()
		return fn()
	})
}

// Conversions from periph's units.
func celsius(t physic.Temperature) float64      { return t.Celsius() }
func hPa(p physic.Pressure) float64             { return float64(p) / float64(physic.Pascal) / 100 }
func percent(h physic.RelativeHumidity) float64 { return float64(h) / float64(physic.PercentRH) }
func volts(v physic.ElectricPotential) float64  { return float64(v) / float64(physic.Volt) }
func amperes(c physic.ElectricCurrent) float64  { return float64(c) / float64(physic.Ampere) }
func watts(p physic.Power) float64              { return float64(p) / float64(physic.Watt) }

// ErrSkipped is wrapped by the error of a BME280 or BMP280 whose ADC holds
// the "measurement skipped" value (0x80000) after a measurement.
var ErrSkipped = errors.New("the chip skipped the measurement (its ADC holds 0x80000)")

// bmx280 is a BME280 or BMP280 (bmxx80).
type bmx280 struct {
	h    *hal.BusHandle
	addr uint16
	bme  bool
	bus  i2cBus
	dev  *bmxx80.Dev
	// data is the last read of the ADC registers (0xF7 on), which
	// bmxx80 compensates without checking for a skipped measurement.
	data    [8]byte
	hasData bool
}

func newBMx280(h *hal.BusHandle, addr uint16, bme bool) *bmx280 {
	d := &bmx280{h: h, addr: addr, bme: bme, bus: i2cBus{name: h.String()}}
	d.bus.watch = func(a uint16, w, r []byte) {
		if a == d.addr && len(w) == 1 && w[0] == 0xF7 && len(r) >= 6 {
			d.hasData = true
			copy(d.data[:], r)
		}
	}
	return d
}

func (d *bmx280) quantities() []Quantity {
	if d.bme {
		return []Quantity{Temperature, Humidity, Pressure}
	}
	return []Quantity{Temperature, Pressure}
}

func (d *bmx280) reset() { d.dev = nil }

func (d *bmx280) read(ctx context.Context) (map[Quantity]float64, error) {
	var e physic.Env
	err := d.bus.do(ctx, d.h, func() error {
		if d.dev == nil {
			// periph's recommended oversampling (4x): 18-bit
			// temperature and pressure, in about 26 ms.
			dev, err := bmxx80.NewI2C(&d.bus, d.addr, &bmxx80.DefaultOpts)
			if err != nil {
				return err
			}
			if name := strings.SplitN(dev.String(), "{", 2)[0]; d.bme && name != "BME280" || !d.bme && name != "BMP280" {
				return fmt.Errorf("the chip at %#02x is a %s, not a %s: set its driver to %s", d.addr, name, d.model(), strings.ToLower(name))
			}
			d.dev = dev
		}
		d.hasData = false
		return d.dev.Sense(&e)
	})
	if err != nil {
		return nil, err
	}
	b := d.data
	if !d.hasData {
		return nil, errors.New("the driver read no measurement")
	}
	rawP := int32(b[0])<<12 | int32(b[1])<<4 | int32(b[2])>>4
	rawT := int32(b[3])<<12 | int32(b[4])<<4 | int32(b[5])>>4
	rawH := int32(b[6])<<8 | int32(b[7])
	if rawT == 0x80000 || rawP == 0x80000 || d.bme && rawH == 0x8000 {
		return nil, ErrSkipped
	}
	v := map[Quantity]float64{Temperature: celsius(e.Temperature), Pressure: hPa(e.Pressure)}
	if d.bme {
		v[Humidity] = percent(e.Humidity)
	}
	return v, nil
}

func (d *bmx280) model() string {
	if d.bme {
		return "BME280"
	}
	return "BMP280"
}

func (d *bmx280) chip(s Spec) (simchip.Chip, error) {
	if d.bme {
		return simchip.NewBME280(), nil
	}
	return simchip.NewBMP280(), nil
}

// ErrPowerOn is wrapped by the error of a DS18B20 that reads its power-on
// 85 °C: no conversion happened (a parasite-powered chip without a strong
// pull-up, VDD not wired to 3.3 V). An exact 85.0000 °C is taken for it.
var ErrPowerOn = errors.New("the DS18B20 reads its power-on 85 °C: no conversion happened (wire VDD to 3.3 V rather than parasite power, and check the 4.7 kΩ pull-up)")

// ds18b20 conversions at 12 bits (0.0625 °C) take up to 750 ms.
const (
	dsBits       = 12
	dsConversion = 750 * time.Millisecond
)

// ds is a DS18B20 (ds18b20). A read starts a conversion on the bus, waits
// for it outside the bus's hold (the context can end it), then reads the
// scratchpad, which periph checks (its CRC, the power-on 85 °C).
type ds struct {
	h      *hal.OneWireHandle
	addr   onewire.Address
	serial uint64
	bus    wireBus
	dev    *ds18b20.Dev
	sleep  func(context.Context, time.Duration) error
}

func (d *ds) quantities() []Quantity { return []Quantity{Temperature} }
func (d *ds) reset()                 { d.dev = nil }

func (d *ds) read(ctx context.Context) (map[Quantity]float64, error) {
	err := d.bus.do(ctx, d.h, func() error {
		if d.dev == nil {
			dev, err := ds18b20.New(&d.bus, d.addr, dsBits)
			if err != nil {
				return err
			}
			d.dev = dev
		}
		// Every DS18B20 on the bus converts: one conversion time
		// for all of them, when several share it.
		return ds18b20.StartAll(&d.bus)
	})
	if err != nil {
		return nil, err
	}
	if err := d.sleep(ctx, dsConversion); err != nil {
		return nil, err
	}
	var t physic.Temperature
	err = d.bus.do(ctx, d.h, func() error {
		var err error
		t, err = d.dev.LastTemp()
		return err
	})
	if err != nil {
		return nil, err
	}
	// periph means to refuse the power-on 85 °C but compares it with 85 K
	// (ds18b20 v3.7.4), so the check is here: a chip that reset while
	// converting, for want of power, reads exactly that.
	if t == 85*physic.Celsius+physic.ZeroCelsius {
		return nil, ErrPowerOn
	}
	return map[Quantity]float64{Temperature: celsius(t)}, nil
}

func (d *ds) chip(s Spec) (simchip.Chip, error) { return simchip.NewDS18B20(d.serial), nil }

// aht is an AHT20 (aht20), always at 0x38.
type aht struct {
	h   *hal.BusHandle
	bus i2cBus
	dev *aht20.Dev
}

func (d *aht) quantities() []Quantity { return []Quantity{Temperature, Humidity} }
func (d *aht) reset()                 { d.dev = nil }

func (d *aht) read(ctx context.Context) (map[Quantity]float64, error) {
	var e physic.Env
	err := d.bus.do(ctx, d.h, func() error {
		if d.dev == nil {
			dev, err := aht20.NewI2C(&d.bus, nil)
			if err != nil {
				return err
			}
			d.dev = dev
		}
		return d.dev.Sense(&e)
	})
	if err != nil {
		return nil, err
	}
	return map[Quantity]float64{Temperature: celsius(e.Temperature), Humidity: percent(e.Humidity)}, nil
}

func (d *aht) chip(s Spec) (simchip.Chip, error) { return simchip.NewAHT20(), nil }

// ina is an INA219 (ina219) on a shunt. Its full scale is the shunt ADC's
// ±320 mV across the shunt, which gives the best resolution of the current
// for that shunt (0.1 Ω: ±3.2 A in steps of 98 µA).
type ina struct {
	h     *hal.BusHandle
	addr  uint16
	shunt float64
	bus   i2cBus
	dev   *ina219.Dev
}

func (d *ina) quantities() []Quantity { return []Quantity{Voltage, Current, Power} }
func (d *ina) reset()                 { d.dev = nil }

func (d *ina) maxCurrent() float64 { return 0.32 / d.shunt }

func (d *ina) read(ctx context.Context) (map[Quantity]float64, error) {
	var pm ina219.PowerMonitor
	err := d.bus.do(ctx, d.h, func() error {
		if d.dev == nil {
			dev, err := ina219.New(&d.bus, &ina219.Opts{
				Address:       int(d.addr),
				SenseResistor: physic.ElectricResistance(d.shunt * float64(physic.Ohm)),
				MaxCurrent:    physic.ElectricCurrent(d.maxCurrent() * float64(physic.Ampere)),
			})
			if err != nil {
				return err
			}
			d.dev = dev
		}
		var err error
		pm, err = d.dev.Sense()
		return err
	})
	if err != nil {
		return nil, err
	}
	return map[Quantity]float64{Voltage: volts(pm.Voltage), Current: amperes(pm.Current), Power: watts(pm.Power)}, nil
}

func (d *ina) chip(s Spec) (simchip.Chip, error) { return simchip.NewINA219(d.shunt), nil }
