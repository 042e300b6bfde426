package gguf

import (
	"encoding/binary"
	"fmt"
	"math"
)

// F16Bits converts a float32 to IEEE 754 half precision, rounding to nearest
// even; too large becomes infinity, too small zero, NaN stays NaN.
func F16Bits(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int(b>>23) & 0xff
	mant := b & 0x7fffff
	if exp == 0xff {
		if mant != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	}
	e := exp - 127 + 15
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 {
		// A half subnormal: m × 2^-24 with the implicit bit made explicit.
		if e < -10 {
			return sign
		}
		full := mant | 0x800000
		shift := uint(14 - e)
		m := full >> shift
		rem, half := full&(1<<shift-1), uint32(1)<<(shift-1)
		if rem > half || rem == half && m&1 == 1 {
			m++ // may carry into the smallest normal: still the right bits
		}
		return sign | uint16(m)
	}
	h := uint32(e)<<10 | mant>>13
	rem := mant & 0x1fff
	if rem > 0x1000 || rem == 0x1000 && h&1 == 1 {
		h++ // may carry into the exponent, up to infinity: still right
	}
	return sign | uint16(h)
}

// F16Float converts IEEE 754 half precision bits to a float32 (exactly).
func F16Float(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	case exp == 0 && mant == 0:
		return math.Float32frombits(sign)
	case exp == 0:
		e := uint32(127 - 15 + 1)
		for mant&0x400 == 0 {
			mant <<= 1
			e--
		}
		return math.Float32frombits(sign | e<<23 | (mant&0x3ff)<<13)
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
}

// PutF16 encodes src as F16 tensor data into dst, which must hold 2 bytes per
// element.
func PutF16(dst []byte, src []float32) {
	if len(src) == 0 {
		return
	}
	_ = dst[2*len(src)-1]
	// In blocks through local arrays, which compile without per-element
	// bounds checks: twice as fast as a plain loop.
	var in [64]float32
	var out [128]byte
	for len(src) > 0 {
		n := copy(in[:], src)
		for i, f := range in[:n] {
			binary.LittleEndian.PutUint16(out[2*i:], F16Bits(f))
		}
		copy(dst, out[:2*n])
		src, dst = src[n:], dst[2*n:]
	}
}

// Q8_0 stores blocks of 32 elements as an F16 scale d followed by 32 signed
// bytes q, each element being d×q.
const (
	q8Block = 32
	q8Bytes = 2 + q8Block
)

// PutQ8_0 quantizes src, whose length must be a multiple of 32, into Q8_0
// tensor data in dst (34 bytes per 32 elements): per block, d = max|x|/127 and
// q = round(x/d), as ggml's reference quantizer does.
func PutQ8_0(dst []byte, src []float32) error {
	if len(src)%q8Block != 0 {
		return fmt.Errorf("gguf: Q8_0 needs a multiple of %d elements, got %d", q8Block, len(src))
	}
	if len(dst) < len(src)/q8Block*q8Bytes {
		return fmt.Errorf("gguf: Q8_0 of %d elements needs %d bytes, got %d", len(src), len(src)/q8Block*q8Bytes, len(dst))
	}
	var x [q8Block]float32
	var out [q8Bytes]byte
	for b := 0; b < len(src); b += q8Block {
		copy(x[:], src[b:]) // local arrays, as in PutF16
		var amax float32
		for _, v := range x {
			amax = max(amax, v, -v)
		}
		d := amax / 127
		var id float32
		if d != 0 {
			id = 1 / d
		}
		binary.LittleEndian.PutUint16(out[:], F16Bits(d))
		for i, v := range x {
			// Round half away from zero (C's roundf), in float64 where
			// adding 0.5 to a float32 product is exact; |q| <= 127.
			q := float64(v * id)
			if q < 0 {
				out[2+i] = byte(-int8(-q + 0.5))
			} else {
				out[2+i] = byte(int8(q + 0.5))
			}
		}
		copy(dst[b/q8Block*q8Bytes:], out[:])
	}
	return nil
}

// Q8_0Floats decodes Q8_0 tensor data into dst (len(src)/34×32 elements).
func Q8_0Floats(dst []float32, src []byte) {
	for b := 0; b+q8Bytes <= len(src); b += q8Bytes {
		d := F16Float(binary.LittleEndian.Uint16(src[b:]))
		out := dst[b/q8Bytes*q8Block:][:q8Block]
		for i := range out {
			out[i] = d * float32(int8(src[b+2+i]))
		}
	}
}
