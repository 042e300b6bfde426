package simchip

import (
	"fmt"
	"math"
)

// AHT20 is an Aosong AHT20 at 0x38. It takes commands, not registers:
// status (0x71, one byte back), initialise (0xBE 0x08 0x00: sets the
// calibrated bit), trigger measurement (0xAC 0x33 0x00), soft reset (0xBA).
// A plain read after a trigger returns the status, 20 bits of humidity,
// 20 bits of temperature and a CRC-8 (x⁸+x⁵+x⁴+1, from 0xFF).
type AHT20 struct {
	values
	status byte
	data   [7]byte
}

// The status bits.
const (
	ahtBusy       = 0x80
	ahtCalibrated = 0x08
)

// NewAHT20 returns an AHT20 at 21.5 °C and 40 %RH, calibrated, as the chip
// leaves the factory.
func NewAHT20() *AHT20 {
	c := &AHT20{values: newValues(map[string][2]float64{Temperature: {-40, 85}, Humidity: {0, 100}}, BadCRC), status: 0x18}
	c.v[Temperature], c.v[Humidity] = 21.5, 40
	c.data[0] = c.status
	return c
}

func (c *AHT20) Tx(w, r []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.hit(Silent, len(r)) {
		return ErrNACK
	}
	if len(w) > 0 {
		switch w[0] {
		case 0x71:
			for i := range r {
				r[i] = c.status
			}
			return nil
		case 0xBE:
			c.status |= ahtCalibrated
		case 0xBA:
			c.status = 0x18
		case 0xAC:
			c.measure()
		default:
			return fmt.Errorf("simchip: AHT20: unknown command %#02x", w[0])
		}
	}
	out := c.data
	if c.hit(BadCRC, len(r)) && len(r) > 0 {
		out[6] ^= 0x5A
	}
	copy(r, out[:])
	return nil
}

func (c *AHT20) measure() {
	const full = 1 << 20
	h := uint32(math.Round(c.get(Humidity) / 100 * full))
	t := uint32(math.Round((c.get(Temperature) + 50) / 200 * full))
	h, t = min(h, full-1), min(t, full-1)
	c.data = [7]byte{c.status &^ ahtBusy, byte(h >> 12), byte(h >> 4), byte(h<<4) | byte(t>>16&0x0F), byte(t >> 8), byte(t)}
	c.data[6] = ahtCRC(c.data[:6])
}

// ahtCRC is the AHT20's CRC-8: polynomial 0x31, initial value 0xFF, MSB first.
func ahtCRC(b []byte) byte {
	crc := byte(0xFF)
	for _, v := range b {
		crc ^= v
		for i := 0; i < 8; i++ {
			if crc&0x80 != 0 {
				crc = crc<<1 ^ 0x31
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}
