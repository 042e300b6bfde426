package simchip

import (
	"fmt"
	"math"
)

// DS18B20 is a Maxim DS18B20 on a 1-Wire bus. Its 64-bit ROM code is the
// family 0x28, a 48-bit serial and the CRC of both; its scratchpad is the
// datasheet's nine bytes (temperature, TH, TL, configuration, three
// reserved, CRC). Convert T (0x44) puts the set temperature in the
// scratchpad at the configured resolution (9 to 12 bits, low bits zero);
// Read Scratchpad (0xBE) sends it with its CRC; Write Scratchpad (0x4E),
// Copy (0x48), Recall (0xB8) and Read Power Supply (0xB4) behave as on the
// chip. Until the first conversion the scratchpad holds the power-on 85 °C.
type DS18B20 struct {
	values
	rom    uint64
	spad   [9]byte
	eeprom [3]byte // TH, TL, configuration
}

// The function commands of a DS18B20.
const (
	dsConvert = 0x44
	dsRead    = 0xBE
	dsWrite   = 0x4E
	dsCopy    = 0x48
	dsRecall  = 0xB8
	dsPower   = 0xB4
)

// NewDS18B20 returns a DS18B20 with the 48-bit serial (the hex digits after
// "28-" in its Linux name), at 21.5 °C, not yet converted.
func NewDS18B20(serial uint64) *DS18B20 {
	c := &DS18B20{values: newValues(map[string][2]float64{Temperature: {-55, 125}}, BadCRC, NoConversion)}
	c.v[Temperature] = 21.5
	c.rom = ROM(0x28, serial)
	// Power-on values: +85 °C, the factory alarm limits, 12 bits.
	c.eeprom = [3]byte{0x4B, 0x46, 0x7F}
	c.spad = [9]byte{0x50, 0x05, c.eeprom[0], c.eeprom[1], c.eeprom[2], 0xFF, 0x0C, 0x10}
	c.spad[8] = CRC8(c.spad[:8])
	return c
}

// ROM is a 1-Wire ROM code: family, 48-bit serial, and their CRC in the top byte.
func ROM(family byte, serial uint64) uint64 {
	var b [7]byte
	b[0] = family
	for i := 1; i < 7; i++ {
		b[i] = byte(serial >> (8 * (i - 1)))
	}
	rom := uint64(CRC8(b[:])) << 56
	for i := 6; i >= 0; i-- {
		rom |= uint64(b[i]) << (8 * i)
	}
	return rom
}

// CRC8 is the Dallas/Maxim 1-Wire CRC (x⁸+x⁵+x⁴+1, bits in reflected
// order), over the ROM code and the scratchpad.
func CRC8(b []byte) byte {
	var crc byte
	for _, v := range b {
		for i := 0; i < 8; i++ {
			mix := (crc ^ v) & 1
			crc >>= 1
			if mix != 0 {
				crc ^= 0x8C
			}
			v >>= 1
		}
	}
	return crc
}

// ROM is the chip's 64-bit ROM code (hal.OneWireTarget).
func (c *DS18B20) ROM() uint64 { return c.rom }

// Alarm reports a temperature past TH or TL, for an alarm search.
func (c *DS18B20) Alarm() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := int8(c.spad[1]<<4 | c.spad[0]>>4)
	return t >= int8(c.spad[2]) || t <= int8(c.spad[3])
}

// Tx is the function command after the bus selected the chip, and what the
// master reads after it.
func (c *DS18B20) Tx(w, r []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range r {
		r[i] = 0xFF
	}
	if c.hit(Silent, len(r)) || len(w) == 0 {
		return nil // nothing drives the bus: the master reads its pull-up
	}
	switch w[0] {
	case dsConvert:
		if c.take(NoConversion) {
			// Without enough power the chip resets while
			// converting: its scratchpad is the power-on 85 °C.
			c.spad[0], c.spad[1] = 0x50, 0x05
			c.spad[8] = CRC8(c.spad[:8])
			return nil
		}
		res := c.spad[4] >> 5 & 3 // 0: 9 bits .. 3: 12 bits
		raw := int16(math.Round(c.get(Temperature) * 16))
		raw &^= int16(1)<<(3-res) - 1 // the low bits a lower resolution leaves undefined (zero here)
		c.spad[0], c.spad[1] = byte(raw), byte(uint16(raw)>>8)
		c.spad[8] = CRC8(c.spad[:8])
		for i := range r {
			r[i] = 0xFF // conversion done: a read slot returns 1
		}
	case dsRead:
		out := c.spad
		if c.take(BadCRC) {
			out[8] ^= 0x5A
		}
		copy(r, out[:])
	case dsWrite:
		if len(w) < 4 {
			return fmt.Errorf("simchip: DS18B20 write scratchpad takes TH, TL and the configuration, got %d bytes", len(w)-1)
		}
		c.spad[2], c.spad[3] = w[1], w[2]
		c.spad[4] = w[3]&0x60 | 0x1F // only R1 R0 are writable
		c.spad[8] = CRC8(c.spad[:8])
	case dsCopy:
		copy(c.eeprom[:], c.spad[2:5])
	case dsRecall:
		copy(c.spad[2:5], c.eeprom[:])
		c.spad[8] = CRC8(c.spad[:8])
	case dsPower:
		// 1: externally powered (a parasite-powered chip pulls the bus low).
	default:
		return fmt.Errorf("simchip: DS18B20: unknown function command %#02x", w[0])
	}
	return nil
}
