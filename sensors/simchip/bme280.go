package simchip

import (
	"fmt"
)

// BME280 is a Bosch BME280 (or, made with NewBMP280, a BMP280: no
// humidity) at one I²C address. Its registers are the datasheet's: the chip
// id at 0xD0, the calibration block at 0x88..0xA1 and 0xE1..0xE7, ctrl_hum,
// status, ctrl_meas and config at 0xF2..0xF5, the ADC values at 0xF7..0xFE.
// A write is register and value pairs; a read auto-increments from the
// register written before it. Writing ctrl_meas with forced mode measures:
// the set values are turned into the raw ADC values that the calibration
// block's compensation maps back to them (found by search on the
// datasheet's own integer formulas), at the resolution the oversampling
// gives (16 bits at 1x to 20 at 16x), and the chip returns to sleep.
type BME280 struct {
	values
	isBME bool
	regs  [256]byte
	ptr   byte
	cal   bmeCal
}

// The registers a driver uses.
const (
	bmeChipID   = 0xD0
	bmeReset    = 0xE0
	bmeCtrlHum  = 0xF2
	bmeStatus   = 0xF3
	bmeCtrlMeas = 0xF4
	bmeData     = 0xF7
)

// bmeCal is a calibration block: the datasheet's example trimming for
// temperature and pressure (section 8.1's worked values) and humidity values
// as read from a production chip. Any chip's block works the same way; these
// keep the inversion honest with realistic signs and magnitudes.
type bmeCal struct {
	t1                             uint16
	t2, t3                         int16
	p1                             uint16
	p2, p3, p4, p5, p6, p7, p8, p9 int16
	h1, h3                         uint8
	h2, h4, h5                     int16
	h6                             int8
}

var typicalCal = bmeCal{
	t1: 27504, t2: 26435, t3: -1000,
	p1: 36477, p2: -10685, p3: 3024, p4: 2855, p5: 140, p6: -7, p7: 15500, p8: -14600, p9: 6000,
	h1: 75, h2: 362, h3: 0, h4: 313, h5: 50, h6: 30,
}

// NewBME280 returns a BME280 at 21.5 °C, 40 %RH and 1013.25 hPa, asleep.
func NewBME280() *BME280 {
	c := &BME280{isBME: true, values: newValues(map[string][2]float64{
		Temperature: {-40, 85}, Humidity: {0, 100}, Pressure: {300, 1100},
	}, Skipped)}
	c.v[Temperature], c.v[Humidity], c.v[Pressure] = 21.5, 40, 1013.25
	c.init(0x60)
	return c
}

// NewBMP280 returns a BMP280 (chip id 0x58, no humidity) at 21.5 °C and
// 1013.25 hPa.
func NewBMP280() *BME280 {
	c := &BME280{values: newValues(map[string][2]float64{
		Temperature: {-40, 85}, Pressure: {300, 1100},
	}, Skipped)}
	c.v[Temperature], c.v[Pressure] = 21.5, 1013.25
	c.init(0x58)
	return c
}

func (c *BME280) init(id byte) {
	c.cal = typicalCal
	c.regs = [256]byte{}
	c.regs[bmeChipID] = id
	k := c.cal
	le := func(at int, v uint16) { c.regs[at], c.regs[at+1] = byte(v), byte(v>>8) }
	le(0x88, k.t1)
	le(0x8A, uint16(k.t2))
	le(0x8C, uint16(k.t3))
	le(0x8E, k.p1)
	for i, p := range []int16{k.p2, k.p3, k.p4, k.p5, k.p6, k.p7, k.p8, k.p9} {
		le(0x90+2*i, uint16(p))
	}
	c.regs[0xA1] = k.h1
	if c.isBME {
		le(0xE1, uint16(k.h2))
		c.regs[0xE3] = k.h3
		// H4 and H5 are 12-bit values sharing 0xE5's two nibbles.
		c.regs[0xE4] = byte(k.h4 >> 4)
		c.regs[0xE5] = byte(k.h4&0x0F) | byte(k.h5&0x0F)<<4
		c.regs[0xE6] = byte(k.h5 >> 4)
		c.regs[0xE7] = byte(k.h6)
	}
	// The ADC registers hold the "no measurement yet" values after reset.
	c.regs[0xF7], c.regs[0xF8], c.regs[0xF9] = 0x80, 0, 0
	c.regs[0xFA], c.regs[0xFB], c.regs[0xFC] = 0x80, 0, 0
	c.regs[0xFD], c.regs[0xFE] = 0x80, 0
}

// Tx is one I²C transaction addressed to the chip.
func (c *BME280) Tx(w, r []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.hit(Silent, len(r)) {
		return ErrNACK
	}
	if len(w) > 0 {
		c.ptr = w[0]
		if len(w)%2 != 0 && len(w) > 1 {
			return fmt.Errorf("simchip: BME280 writes are register and value pairs, got %d bytes", len(w))
		}
		for i := 0; i+1 < len(w); i += 2 {
			c.write(w[i], w[i+1])
		}
	}
	for i := range r {
		r[i] = c.regs[c.ptr]
		c.ptr++
	}
	return nil
}

// write stores a register a driver may write; the rest are read-only.
func (c *BME280) write(reg, v byte) {
	switch reg {
	case bmeReset:
		if v == 0xB6 {
			c.init(c.regs[bmeChipID])
		}
	case bmeCtrlHum:
		if c.isBME {
			c.regs[reg] = v & 0x07
		}
	case 0xF5:
		c.regs[reg] = v
	case bmeCtrlMeas:
		c.regs[reg] = v
		if mode := v & 3; mode == 1 || mode == 2 {
			c.measure()
			c.regs[reg] &^= 3 // back to sleep
		} else if mode == 3 {
			c.measure() // normal mode: the next conversion is as good as now
		}
	}
}

// measure fills the ADC registers from the set values.
func (c *BME280) measure() {
	osT := c.regs[bmeCtrlMeas] >> 5
	osP := c.regs[bmeCtrlMeas] >> 2 & 7
	osH := c.regs[bmeCtrlHum] & 7
	skip := c.take(Skipped)
	rawT := int32(0x80000)
	if osT != 0 && !skip {
		rawT = c.rawTemperature(c.get(Temperature), osT)
	}
	_, tFine := c.cal.temperature(rawT)
	rawP := int32(0x80000)
	if osP != 0 && !skip {
		rawP = c.rawPressure(c.get(Pressure), tFine, osP)
	}
	rawH := int32(0x8000)
	if c.isBME && osH != 0 && !skip {
		rawH = c.rawHumidity(c.get(Humidity), tFine)
	}
	c.regs[0xF7], c.regs[0xF8], c.regs[0xF9] = byte(rawP>>12), byte(rawP>>4), byte(rawP<<4)
	c.regs[0xFA], c.regs[0xFB], c.regs[0xFC] = byte(rawT>>12), byte(rawT>>4), byte(rawT<<4)
	c.regs[0xFD], c.regs[0xFE] = byte(rawH>>8), byte(rawH)
}

// bits is an oversampling setting's ADC resolution: 16 bits at 1x, one more
// each doubling, 20 at 16x (the datasheet's table 5 and 6).
func bits(os byte) uint {
	if os > 5 {
		os = 5
	}
	return 15 + uint(os)
}

func (c *BME280) rawTemperature(celsius float64, os byte) int32 {
	shift := 20 - bits(os)
	k := searchUp(1<<bits(os), celsius*100, func(k int64) float64 {
		t, _ := c.cal.temperature(int32(k << shift))
		return float64(t)
	})
	return int32(k << shift)
}

// rawPressure: pressure falls as the raw value rises, so the search runs on
// the raw value counted down from the top.
func (c *BME280) rawPressure(hPa float64, tFine int32, os byte) int32 {
	shift := 20 - bits(os)
	top := int64(1)<<bits(os) - 1
	k := searchUp(top+1, hPa*100*256, func(k int64) float64 {
		return float64(c.cal.pressure(int32((top-k)<<shift), tFine))
	})
	return int32((top - k) << shift)
}

func (c *BME280) rawHumidity(rh float64, tFine int32) int32 {
	return int32(searchUp(1<<16, rh*1024, func(k int64) float64 {
		return float64(c.cal.humidity(int32(k), tFine))
	}))
}

// temperature is the datasheet's compensation (section 4.2.3): hundredths of
// a °C, and t_fine, which pressure and humidity take.
func (k *bmeCal) temperature(raw int32) (centi, tFine int32) {
	a := ((raw>>3 - int32(k.t1)<<1) * int32(k.t2)) >> 11
	d := raw>>4 - int32(k.t1)
	b := (((d * d) >> 12) * int32(k.t3)) >> 14
	tFine = a + b
	return (tFine*5 + 128) >> 8, tFine
}

// pressure is the datasheet's 64-bit compensation: Pa in Q24.8.
func (k *bmeCal) pressure(raw, tFine int32) uint32 {
	a := int64(tFine) - 128000
	b := a * a * int64(k.p6)
	b += (a * int64(k.p5)) << 17
	b += int64(k.p4) << 35
	a = (a*a*int64(k.p3))>>8 + (a*int64(k.p2))<<12
	a = ((int64(1)<<47 + a) * int64(k.p1)) >> 33
	if a == 0 {
		return 0 // the datasheet's guard against dividing by zero
	}
	p := int64(1048576 - raw)
	p = ((p<<31 - b) * 3125) / a
	a = (int64(k.p9) * (p >> 13) * (p >> 13)) >> 25
	b = (int64(k.p8) * p) >> 19
	return uint32((p+a+b)>>8 + int64(k.p7)<<4)
}

// humidity is the datasheet's compensation: %RH in Q22.10, clamped to 0..100.
func (k *bmeCal) humidity(raw, tFine int32) uint32 {
	v := tFine - 76800
	x := (raw<<14 - int32(k.h4)<<20 - int32(k.h5)*v + 16384) >> 15
	y := ((((v*int32(k.h6))>>10)*(((v*int32(k.h3))>>11)+32768))>>10 + 2097152) * int32(k.h2)
	v = x * ((y + 8192) >> 14)
	v -= (((v >> 15) * (v >> 15)) >> 7) * int32(k.h1) >> 4
	v = max(v, 0)
	v = min(v, 419430400)
	return uint32(v >> 12)
}
