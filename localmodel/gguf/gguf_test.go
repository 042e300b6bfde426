package gguf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// everyValue has every value type, with edge values, and arrays of each.
func everyValue() []KV {
	return []KV{
		{"general.architecture", String("qwen2")},
		{"general.name", String("round trip ✓ 把继电器打开")},
		{"t.u8", Uint8(255)}, {"t.i8", Int8(-128)},
		{"t.u16", Uint16(65535)}, {"t.i16", Int16(-32768)},
		{"t.u32", Uint32(1<<32 - 1)}, {"t.i32", Int32(-1 << 31)},
		{"t.f32", Float32(float32(math.Inf(-1)))}, {"t.f32b", Float32(1e-6)},
		{"t.bool.t", Bool(true)}, {"t.bool.f", Bool(false)},
		{"t.str.empty", String("")}, {"t.str", String("a\x00b\n\"c\"")},
		{"t.u64", Uint64(1<<64 - 1)}, {"t.i64", Int64(-1 << 63)},
		{"t.f64", Float64(math.SmallestNonzeroFloat64)}, {"t.f64neg0", Float64(math.Copysign(0, -1))},
		{"a.u8", Array([]uint8{0, 1, 255})}, {"a.i8", Array([]int8{-1, 127})},
		{"a.u16", Array([]uint16{7})}, {"a.i16", Array([]int16{-7, 7})},
		{"a.u32", Array([]uint32{})}, {"a.i32", Array([]int32{1, -2, 3})},
		{"a.f32", Array([]float32{0.5, -2.25})}, {"a.bool", Array([]bool{true, false, true})},
		{"a.str", Array([]string{"", "Ġ Ġ", "<|im_start|>"})},
		{"a.u64", Array([]uint64{1 << 40})}, {"a.i64", Array([]int64{-5})},
		{"a.f64", Array([]float64{math.Pi})},
		{"a.arr", Arrays(Array([]string{"x", "y"}), Array([]int32{}), Arrays(Array([]bool{true})))},
		{"a.arr.empty", Arrays()},
		{"general.alignment", Uint32(64)},
		{"qwen2.context_length", Uint32(4096)},
		{"tokenizer.chat_template", String("{{'<|im_start|>' + message['role']}}\nsecond line")},
		{"general.file_type", Uint32(uint32(FileTypeQ8_0))},
	}
}

// testTensors covers plain, half, block-quantized and empty tensors.
func testTensors() []TensorInfo {
	return []TensorInfo{
		{Name: "token_embd.weight", Dims: []uint64{32, 3}, Type: Q8_0},
		{Name: "output_norm.weight", Dims: []uint64{5}, Type: F32},
		{Name: "blk.0.attn_q.weight", Dims: []uint64{4, 2, 3}, Type: F16},
		{Name: "empty", Dims: []uint64{0, 4}, Type: F32},
		{Name: "blk.0.ffn_up.weight", Dims: []uint64{256, 2}, Type: Q4_K},
		{Name: "scalar", Dims: nil, Type: I32},
	}
}

// build writes a file of the given metadata and tensors whose data bytes are
// a counter, so that misplaced data is detected.
func build(t testing.TB, kv []KV, tensors []TensorInfo) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, kv, tensors)
	if err != nil {
		t.Fatal(err)
	}
	for _, ti := range w.Tensors() {
		data := make([]byte, ti.Bytes())
		for i := range data {
			data[i] = byte(i*7 + len(ti.Name))
		}
		// Several small writes, to exercise writes inside one tensor.
		for len(data) > 0 {
			k := min(len(data), 13)
			if _, err := w.Write(data[:k]); err != nil {
				t.Fatal(err)
			}
			data = data[k:]
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestRoundTripEveryValueType(t *testing.T) {
	kv, tensors := everyValue(), testTensors()
	data := build(t, kv, tensors)
	f, err := Read(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if f.Version != 3 || f.Alignment != 64 || f.DataOffset%64 != 0 || f.Size != int64(len(data)) {
		t.Errorf("version %d alignment %d data offset %d size %d", f.Version, f.Alignment, f.DataOffset, f.Size)
	}
	if len(f.KV) != len(kv) {
		t.Fatalf("%d keys back, want %d", len(f.KV), len(kv))
	}
	for i := range kv {
		got, want := f.KV[i], kv[i]
		if got.Key != want.Key || got.Value.Type() != want.Value.Type() || got.Value.ElemType() != want.Value.ElemType() ||
			!reflect.DeepEqual(got.Value.Any(), want.Value.Any()) {
			t.Errorf("key %d: got %s %s %v, want %s %s %v", i, got.Key, got.Value.Type(), got.Value, want.Key, want.Value.Type(), want.Value)
		}
	}
	if v, _ := f.Get("t.f64neg0"); !math.Signbit(v.Any().(float64)) {
		t.Error("-0 lost its sign")
	}
	if len(f.Tensors) != len(tensors) {
		t.Fatalf("%d tensors back", len(f.Tensors))
	}
	for i, ti := range f.Tensors {
		want := tensors[i]
		if ti.Name != want.Name || ti.Type != want.Type || !reflect.DeepEqual(ti.Dims, want.Dims) && len(want.Dims) > 0 {
			t.Errorf("tensor %d = %+v, want %+v", i, ti, want)
		}
		if ti.Offset%64 != 0 {
			t.Errorf("tensor %s offset %d not aligned", ti.Name, ti.Offset)
		}
		start := f.DataOffset + int64(ti.Offset)
		for j := range ti.Bytes() {
			if data[start+int64(j)] != byte(int(j)*7+len(ti.Name)) {
				t.Fatalf("tensor %s byte %d misplaced", ti.Name, j)
			}
		}
	}
	if got := f.Tensors[0].Bytes(); got != 3*34 {
		t.Errorf("Q8_0 32x3 is %d bytes, want 102", got)
	}
	if got := f.Tensors[4].Bytes(); got != 2*144 {
		t.Errorf("Q4_K 256x2 is %d bytes, want 288", got)
	}

	// Writing what was read gives the same bytes.
	again := build(t, f.KV, f.Tensors)
	if !bytes.Equal(again, data) {
		t.Error("rewriting the file read back changed its bytes")
	}
}

func TestMetadataHelpers(t *testing.T) {
	data := build(t, everyValue(), testTensors())
	f, err := Read(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if a := f.Architecture(); a != "qwen2" {
		t.Errorf("architecture %q", a)
	}
	if n := f.ParameterCount(); n != 32*3+5+4*2*3+0+256*2+1 {
		t.Errorf("parameters %d", n)
	}
	if q := f.Quantization(); q != "Q8_0" {
		t.Errorf("quantization %q (from general.file_type)", q)
	}
	if c, ok := f.ContextLength(); !ok || c != 4096 {
		t.Errorf("context %d %v", c, ok)
	}
	tmpl, ok := f.ChatTemplate()
	if !ok || TemplateFamily(tmpl) != "chatml" {
		t.Errorf("template %q %v", tmpl, ok)
	}
	// Without general.file_type the dominant matrix type decides: Q4_K holds
	// the most bytes; the F32 vector does not count.
	var kv []KV
	for _, e := range everyValue() {
		if e.Key != KeyFileType {
			kv = append(kv, e)
		}
	}
	data = build(t, kv, testTensors())
	f, _ = Read(bytes.NewReader(data), int64(len(data)))
	if q := f.Quantization(); q != "Q4_K" {
		t.Errorf("dominant type %q, want Q4_K", q)
	}
}

// enc builds hostile inputs by hand.
type enc struct{ bytes.Buffer }

func (e *enc) u32(x uint32) *enc { binary.Write(&e.Buffer, binary.LittleEndian, x); return e }
func (e *enc) u16(x uint16) *enc { binary.Write(&e.Buffer, binary.LittleEndian, x); return e }
func (e *enc) u64(x uint64) *enc { binary.Write(&e.Buffer, binary.LittleEndian, x); return e }
func (e *enc) str(s string) *enc { e.u64(uint64(len(s))); e.WriteString(s); return e }
func header(tensors, kvs uint64) *enc {
	e := &enc{}
	e.WriteString("GGUF")
	return e.u32(3).u64(tensors).u64(kvs)
}

func TestHostileInputs(t *testing.T) {
	padTo := func(e *enc, n int) []byte {
		b := e.Bytes()
		return append(b, make([]byte, max(0, n-len(b)))...)
	}
	for _, tc := range []struct {
		name string
		data []byte
		want error
		msg  string
	}{
		{"empty", nil, ErrTruncated, "magic"},
		{"zip", []byte("PK\x03\x04 not a model"), ErrNotGGUF, `magic "PK\x03\x04"`},
		{"ggml", []byte("lmgg\x01\x00\x00\x00"), ErrNotGGUF, "not a GGUF file"},
		{"version 1", append([]byte("GGUF"), 1, 0, 0, 0), ErrVersion, "version 1"},
		{"version 9", append([]byte("GGUF"), 9, 0, 0, 0), ErrVersion, "version 9"},
		{"big-endian", append([]byte("GGUF"), 0, 0, 0, 3), ErrVersion, "big-endian"},
		{"huge tensor count", padTo(header(1<<62, 0), 100), ErrTooLarge, "tensor count"},
		{"huge metadata count", padTo(header(0, 1<<62), 100), ErrTooLarge, "metadata count"},
		{"metadata count beyond the end", padTo(header(0, 5), 40), ErrTruncated, "metadata count 5 needs at least 65 bytes, 16 left"},
		{"huge key length", padTo(header(0, 1).u64(1<<63), 100), ErrTooLarge, "key length"},
		{"unknown value type", padTo(header(0, 1).str("k").u32(13), 100), ErrUnknownType, "value type 13"},
		{"huge string", padTo(header(0, 1).str("k").u32(uint32(TypeString)).u64(1<<41), 100), ErrTooLarge, "string length"},
		{"huge array", padTo(header(0, 1).str("k").u32(uint32(TypeArray)).u32(uint32(TypeUint64)).u64(1<<60), 100), ErrTooLarge, "array length"},
		{"array of unknown", padTo(header(0, 1).str("k").u32(uint32(TypeArray)).u32(77), 100), ErrUnknownType, "element type 77"},
		{"array string past the end", header(0, 1).str("tokenizer.ggml.tokens").u32(uint32(TypeArray)).u32(uint32(TypeString)).u64(3).str("ab").u64(50).u64(0).u16(0).Bytes(),
			ErrTruncated, `"tokenizer.ggml.tokens", element 1 of 3`},
		{"deep arrays", func() []byte {
			e := header(0, 1).str("k").u32(uint32(TypeArray))
			for range 10 {
				e.u32(uint32(TypeArray)).u64(1)
			}
			return padTo(e, 200)
		}(), ErrInvalid, "nested"},
		{"bad bool", append(header(0, 1).str("k").u32(uint32(TypeBool)).Bytes(), 2), ErrInvalid, "bool byte 2"},
		{"duplicate key", padTo(header(0, 2).str("k").u32(uint32(TypeUint8)).u32(0).str("k").u32(uint32(TypeUint8)), 100)[:0], nil, ""},
		{"alignment not a power of two", padTo(header(0, 1).str(KeyAlignment).u32(uint32(TypeUint32)).u32(48), 64), ErrInvalid, "power of two"},
		{"alignment of the wrong type", padTo(header(0, 1).str(KeyAlignment).u32(uint32(TypeUint64)).u64(32), 64), ErrInvalid, "uint32"},
		{"five dimensions", padTo(header(1, 0).str("w").u32(5), 100), ErrInvalid, "5 dimensions"},
		{"unknown tensor type", padTo(header(1, 0).str("w").u32(1).u64(32).u32(4), 100), ErrUnknownType, "tensor type 4"},
		{"row not a block multiple", padTo(header(1, 0).str("w").u32(1).u64(33).u32(uint32(Q8_0)).u64(0), 200), ErrInvalid, "block size 32"},
		{"dims overflow", padTo(header(1, 0).str("w").u32(2).u64(1<<40).u64(1<<40).u32(0).u64(0), 200), ErrTooLarge, "2^63"},
		{"long name", padTo(header(1, 0).str(strings.Repeat("n", 64)), 200), ErrInvalid, "at most 63"},
		{"misaligned offset", padTo(header(1, 0).str("w").u32(1).u64(4).u32(0).u64(3), 200), ErrInvalid, "not a multiple of the alignment"},
		{"data beyond the end", padTo(header(1, 0).str("w").u32(1).u64(1000).u32(0).u64(0), 200), ErrOutOfBounds, `tensor 0 "w"`},
		{"offset beyond the end", padTo(header(1, 0).str("w").u32(1).u64(1).u32(0).u64(1<<62), 200), ErrOutOfBounds, "outside the file"},
		{"offset and size wrap around", padTo(header(1, 0).str("w").u32(1).u64(1<<59).u32(0).u64(math.MaxUint64-31), 200), ErrOutOfBounds, "outside the file"},
	} {
		if tc.want == nil {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			f, err := Read(bytes.NewReader(tc.data), int64(len(tc.data)))
			if err == nil {
				t.Fatalf("read %+v, want an error", f)
			}
			if !errors.Is(err, tc.want) {
				t.Errorf("error %q, want %q", err, tc.want)
			}
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Errorf("error %T is not a *FormatError", err)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q does not say %q", err, tc.msg)
			}
		})
	}

	dup := header(0, 2).str("k").u32(uint32(TypeUint8))
	dup.WriteByte(0)
	dup.str("k").u32(uint32(TypeUint8)).WriteByte(1)
	if _, err := Read(bytes.NewReader(dup.Bytes()), int64(dup.Len())); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "duplicate key") {
		t.Errorf("duplicate key: %v", err)
	}
	dupT := header(2, 0).str("w").u32(1).u64(8).u32(0).u64(0).str("w").u32(1).u64(8).u32(0).u64(32)
	b := append(dupT.Bytes(), make([]byte, 128)...)
	if _, err := Read(bytes.NewReader(b), int64(len(b))); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "duplicate tensor") {
		t.Errorf("duplicate tensor: %v", err)
	}
}

// TestTruncatedEverywhere cuts a valid file at every byte: every cut that
// loses metadata or tensor data is an error, never a panic.
func TestTruncatedEverywhere(t *testing.T) {
	data := build(t, everyValue(), testTensors())
	f, err := Read(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var dataEnd int64
	for _, ti := range f.Tensors {
		dataEnd = max(dataEnd, f.DataOffset+int64(ti.Offset+ti.Bytes()))
	}
	for n := range len(data) {
		cut := data[:n]
		_, err := Read(bytes.NewReader(cut), int64(n))
		if int64(n) >= dataEnd {
			// Only the final padding is missing: llama.cpp loads that too.
			if err != nil {
				t.Errorf("cut at %d (in the final padding): %v", n, err)
			}
			continue
		}
		if !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrOutOfBounds) {
			t.Fatalf("cut at %d of %d: %v, want truncated or out of bounds", n, len(data), err)
		}
		// A reader that ends early while claiming the full size.
		if _, err := Read(bytes.NewReader(cut), int64(len(data))); err == nil && int64(n) < f.DataOffset-int64(f.Alignment) {
			t.Fatalf("short stream at %d claiming %d bytes read fine", n, len(data))
		}
	}
}

// TestBoundedAllocation reads inputs that claim huge counts and lengths and
// checks that the reader allocates little, whatever they claim.
func TestBoundedAllocation(t *testing.T) {
	valid := build(t, everyValue(), testTensors())
	inputs := [][]byte{
		append(header(1<<40, 1<<40).Bytes(), make([]byte, 100)...),
		append(header(0, 1).str("k").u32(uint32(TypeArray)).u32(uint32(TypeString)).u64(1<<58).Bytes(), make([]byte, 100)...),
		append(header(0, 1).str("k").u32(uint32(TypeArray)).u32(uint32(TypeArray)).u64(1<<58).Bytes(), make([]byte, 100)...),
		append(header(0, 1).str("k").u32(uint32(TypeString)).u64(1<<62).Bytes(), make([]byte, 100)...),
		append(header(0, 1).u64(1<<50).Bytes(), make([]byte, 100)...),
		valid[:len(valid)/2],
	}
	for i, in := range inputs {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err := Read(bytes.NewReader(in), int64(len(in)))
		runtime.ReadMemStats(&after)
		if err == nil {
			t.Errorf("input %d read fine", i)
		}
		// The 64 KiB read buffer plus a small multiple of the input.
		if got, limit := after.TotalAlloc-before.TotalAlloc, uint64(128<<10+64*len(in)); got > limit {
			t.Errorf("input %d of %d bytes: allocated %d bytes, limit %d (%v)", i, len(in), got, limit, err)
		}
	}
}

func TestOpenNamesTheFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cut.gguf")
	data := build(t, everyValue(), testTensors())
	os.WriteFile(path, data[:100], 0o600)
	_, err := Open(path)
	if err == nil || !strings.Contains(err.Error(), path) || !errors.Is(err, ErrTruncated) {
		t.Errorf("Open of a truncated file: %v", err)
	}
	os.WriteFile(path, []byte("#!/bin/sh\necho hi\n"), 0o600)
	if _, err := Open(path); err == nil || !strings.Contains(err.Error(), path+": header") || !errors.Is(err, ErrNotGGUF) {
		t.Errorf("Open of a script: %v", err)
	}
	if _, err := Open(filepath.Join(dir, "missing.gguf")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Open of a missing file: %v", err)
	}
	if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("Open of a directory: %v", err)
	}
	os.WriteFile(path, data, 0o600)
	f, err := Open(path)
	if err != nil || len(f.Tensors) != len(testTensors()) {
		t.Fatalf("Open of a valid file: %v", err)
	}
}

func TestWriterErrors(t *testing.T) {
	var buf bytes.Buffer
	for _, tc := range []struct {
		name    string
		kv      []KV
		tensors []TensorInfo
		msg     string
	}{
		{"duplicate key", []KV{{"a", Uint8(1)}, {"a", Uint8(2)}}, nil, "duplicate metadata key"},
		{"empty key", []KV{{"", Uint8(1)}}, nil, "empty"},
		{"zero value", []KV{{"a", Value{}}}, nil, "unknown type"},
		{"array of scalars as arrays", []KV{{"a", Arrays(Uint8(1))}}, nil, "element 0"},
		{"alignment", []KV{{KeyAlignment, Uint32(3)}}, nil, "power of two"},
		{"duplicate tensor", nil, []TensorInfo{{Name: "w", Dims: []uint64{1}}, {Name: "w", Dims: []uint64{1}}}, "duplicate tensor"},
		{"long name", nil, []TensorInfo{{Name: strings.Repeat("x", 64), Dims: []uint64{1}}}, "longer than 63"},
		{"row length", nil, []TensorInfo{{Name: "w", Dims: []uint64{31}, Type: Q8_0}}, "multiple of the Q8_0 block size 32"},
		{"unknown type", nil, []TensorInfo{{Name: "w", Dims: []uint64{1}, Type: 5}}, "tensor type 5"},
	} {
		if _, err := NewWriter(&buf, tc.kv, tc.tensors); err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.msg)
		}
	}

	tensors := []TensorInfo{{Name: "a", Dims: []uint64{3}, Type: F32}, {Name: "b", Dims: []uint64{2}, Type: F16}}
	w, _ := NewWriter(&buf, nil, tensors)
	w.Write(make([]byte, 12))
	if err := w.Close(); err == nil || !strings.Contains(err.Error(), `"b" incomplete: 0 of 4 bytes`) {
		t.Errorf("short data: %v", err)
	}
	w, _ = NewWriter(&buf, nil, tensors)
	if _, err := w.Write(make([]byte, 17)); err == nil || !strings.Contains(err.Error(), "past the end") {
		t.Errorf("too much data: %v", err)
	}
	// One write for all the data, padding inserted between the tensors.
	buf.Reset()
	w, _ = NewWriter(&buf, nil, tensors)
	if n, err := w.Write(make([]byte, 16)); n != 16 || err != nil {
		t.Fatal(n, err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := Read(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil || f.Tensors[1].Offset != 32 || buf.Len() != int(f.DataOffset)+64 {
		t.Errorf("offsets %+v, size %d: %v", f.Tensors, buf.Len(), err)
	}
}

func TestF16(t *testing.T) {
	for h := range 1 << 16 {
		f := F16Float(uint16(h))
		if f != f {
			if back := F16Bits(f); back&0x7c00 != 0x7c00 || back&0x3ff == 0 {
				t.Fatalf("NaN %#04x came back as %#04x", h, back)
			}
			continue
		}
		if back := F16Bits(f); back != uint16(h) {
			t.Fatalf("%#04x -> %v -> %#04x", h, f, back)
		}
	}
	for _, tc := range []struct {
		f float32
		h uint16
	}{
		{1, 0x3c00}, {-2, 0xc000}, {65504, 0x7bff}, {65520, 0x7c00}, {1e9, 0x7c00},
		{float32(math.Ldexp(1, -24)), 0x0001}, {float32(math.Ldexp(1, -25)), 0}, {float32(math.Ldexp(1.5, -25)), 0x0001},
		{float32(math.Ldexp(1, -14)), 0x0400}, {1 + float32(math.Ldexp(1, -11)), 0x3c00}, {1 + 3*float32(math.Ldexp(1, -11)), 0x3c02},
		{0.02, 0x251f}, {1e-10, 0},
	} {
		if got := F16Bits(tc.f); got != tc.h {
			t.Errorf("F16Bits(%v) = %#04x, want %#04x", tc.f, got, tc.h)
		}
	}
}

func TestQ8_0(t *testing.T) {
	src := make([]float32, 64)
	for i := range src {
		src[i] = float32(math.Sin(float64(i))) * float32(i+1) / 10
	}
	src[40] = 0
	dst := make([]byte, 2*34)
	if err := PutQ8_0(dst, src); err != nil {
		t.Fatal(err)
	}
	back := make([]float32, 64)
	Q8_0Floats(back, dst)
	for b := range 2 {
		var amax float64
		for _, v := range src[b*32 : b*32+32] {
			amax = max(amax, math.Abs(float64(v)))
		}
		d := amax / 127
		for i := b * 32; i < b*32+32; i++ {
			if diff := math.Abs(float64(back[i] - src[i])); diff > d*0.51+1e-3*amax {
				t.Errorf("element %d: %v back as %v (scale %v)", i, src[i], back[i], d)
			}
		}
	}
	zero := make([]byte, 34)
	PutQ8_0(zero, make([]float32, 32))
	if !bytes.Equal(zero, make([]byte, 34)) {
		t.Errorf("an all-zero block encodes as %x", zero)
	}
	if err := PutQ8_0(dst, src[:33]); err == nil {
		t.Error("33 elements quantized")
	}
}
