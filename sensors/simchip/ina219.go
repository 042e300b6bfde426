package simchip

import (
	"math"
)

// INA219 is a TI INA219 current and power monitor on a shunt. Its registers
// are 16 bits, big-endian: configuration (0), shunt voltage (1, 10 µV a
// bit), bus voltage (2, 4 mV a bit from bit 3, bit 1 "conversion ready"),
// power (3), current (4) and calibration (5). A write is the register and
// its two bytes; a read returns the register last pointed at. Current and
// power follow the datasheet's section 8.5: current = shunt × calibration /
// 4096, power = current × bus / 5000.
type INA219 struct {
	values
	shunt float64 // Ω, which the chip itself does not know: the board's
	regs  [6]uint16
	ptr   byte
}

// NewINA219 returns an INA219 on a shunt of shuntOhms, at 5 V and 0.1 A.
func NewINA219(shuntOhms float64) *INA219 {
	// The shunt ADC reads ±320 mV at most.
	maxA := 0.32 / shuntOhms
	c := &INA219{shunt: shuntOhms, values: newValues(map[string][2]float64{Voltage: {0, 26}, Current: {-maxA, maxA}})}
	c.v[Voltage], c.v[Current] = 5, 0.1
	c.regs[0] = 0x399F // the power-on configuration
	return c
}

func (c *INA219) Tx(w, r []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.hit(Silent, len(r)) {
		return ErrNACK
	}
	if len(w) > 0 {
		c.ptr = w[0] % 8
		if len(w) >= 3 && c.ptr < 6 {
			v := uint16(w[1])<<8 | uint16(w[2])
			switch c.ptr {
			case 0:
				if v&0x8000 != 0 { // reset
					c.regs = [6]uint16{0x399F}
				} else {
					c.regs[0] = v
				}
			case 5:
				c.regs[5] = v &^ 1 // bit 0 is not used
			}
		}
	}
	c.convert()
	var v uint16
	if c.ptr < 6 {
		v = c.regs[c.ptr]
	}
	for i := range r {
		r[i] = byte(v >> (8 * (1 - i%2)))
	}
	return nil
}

// convert computes the measurement registers from the set values.
func (c *INA219) convert() {
	shunt := int64(math.Round(c.get(Current) * c.shunt / 10e-6))
	shunt = max(min(shunt, 32000), -32000)
	bus := int64(math.Round(c.get(Voltage) / 0.004))
	bus = min(bus, 8000) // 32 V: the top of the ADC
	current := shunt * int64(c.regs[5]) / 4096
	power := current * bus / 5000
	c.regs[1] = uint16(int16(shunt))
	c.regs[2] = uint16(bus<<3) | 2
	c.regs[3] = uint16(max(power, 0))
	c.regs[4] = uint16(int16(max(min(current, 32767), -32768)))
}
