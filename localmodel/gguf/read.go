package gguf

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
)

// Open reads the header, metadata and tensor table of a GGUF file and checks
// that every tensor's data lies inside the file. Errors name the path.
// Every metadata value is decoded, the tokenizer's arrays included; a program
// that does not tokenize opens with OpenWith and Options.SkipArraysOver.
func Open(path string) (*File, error) { return OpenWith(path, Options{}) }

// Options change what the reader keeps of the metadata.
type Options struct {
	// SkipArraysOver, when positive, leaves undecoded every array of numbers
	// or of strings with more elements than this: the reader passes over its
	// bytes (seeking over long runs of fixed-size elements when the source
	// can seek) and keeps only its element type and length, as a Skipped
	// value. Strings are still read for their lengths and checked against the
	// file's size, so a file is accepted or refused exactly as without the
	// option, with the same error. Arrays of bools and of arrays are always
	// decoded (their elements need checking, and nothing real has long ones).
	SkipArraysOver int

	// For tests of the seeking: the buffer size (at least 16) and the run
	// length from which skip seeks; 0 for readBuffer.
	bufSize, seekFrom int
}

// SmallArray is the SkipArraysOver of a program that looks at a model but
// does not tokenize: it keeps per-layer arrays (a few hundred elements at
// most) and skips the tokenizer's tokens, token types, scores and merges
// (over a hundred thousand each in a Qwen model, 14 MB decoded).
const SmallArray = 1024

// OpenWith is Open with options.
func OpenWith(path string, o Options) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	gf, err := ReadWith(f, st.Size(), o)
	if err != nil {
		var fe *FormatError
		if errors.As(err, &fe) {
			fe.File = path
			return nil, fe
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return gf, nil
}

// Read parses a GGUF file of size bytes from r, which is positioned at its
// start. Only the header, metadata and tensor table are read; size bounds
// every count and length in them and is where tensor data must end.
func Read(r io.Reader, size int64) (*File, error) { return ReadWith(r, size, Options{}) }

// ReadWith is Read with options. If r is an io.Seeker, arrays skipped by
// the options may be seeked over rather than read.
func ReadWith(r io.Reader, size int64, o Options) (*File, error) {
	if size < 0 {
		return nil, errors.New("gguf: negative size")
	}
	if o.bufSize <= 0 {
		o.bufSize = readBuffer
	}
	if o.seekFrom <= 0 {
		o.seekFrom = readBuffer
	}
	d := &decoder{r: bufio.NewReaderSize(r, o.bufSize), src: r, size: size, part: "header", opts: o}
	d.seeker, _ = r.(io.Seeker)
	f, err := d.file()
	if err != nil {
		var fe *FormatError
		if !errors.As(err, &fe) {
			err = &FormatError{Part: d.part, Offset: d.off, Err: err}
		}
		return nil, err
	}
	return f, nil
}

// readBuffer is the size of the reader's buffer.
const readBuffer = 64 << 10

// decoder reads little-endian values and knows how much of the file is left.
type decoder struct {
	r      *bufio.Reader
	src    io.Reader // what r reads from
	seeker io.Seeker // src, if it can seek
	opts   Options
	off    int64  // bytes consumed
	size   int64  // of the file
	part   string // what is being read, for errors
	buf    [8]byte
}

func (d *decoder) left() int64 { return d.size - d.off }

// fail makes a FormatError at the current offset.
func (d *decoder) fail(at int64, sentinel error, format string, args ...any) error {
	return &FormatError{Part: d.part, Offset: at, Err: fmt.Errorf("%w: "+format, append([]any{sentinel}, args...)...)}
}

// read fills p from the file.
func (d *decoder) read(p []byte, what string) error {
	if int64(len(p)) > d.left() {
		return d.fail(d.off, ErrTruncated, "%s needs %d bytes, the file ends %d bytes later", what, len(p), d.left())
	}
	n, err := io.ReadFull(d.r, p)
	d.off += int64(n)
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return d.fail(d.off, ErrTruncated, "%s: the data ends before the stated size %d", what, d.size)
		}
		return &FormatError{Part: d.part, Offset: d.off, Err: err}
	}
	return nil
}

func (d *decoder) u32(what string) (uint32, error) {
	if err := d.read(d.buf[:4], what); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(d.buf[:4]), nil
}

func (d *decoder) u64(what string) (uint64, error) {
	if err := d.read(d.buf[:8], what); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(d.buf[:8]), nil
}

// maxPlausible is more bytes than any part of a real GGUF header: a count
// or length claiming more is corrupt or hostile, not merely cut short.
const maxPlausible = 1 << 40

// count reads a u64 count of items of at least minSize bytes each and checks
// that so many could fit in what is left of the file.
func (d *decoder) count(what string, minSize int64) (int, error) {
	at := d.off
	n, err := d.u64(what)
	if err != nil {
		return 0, err
	}
	if minSize < 1 {
		minSize = 1
	}
	if n > maxPlausible/uint64(minSize) {
		return 0, d.fail(at, ErrTooLarge, "%s %d (the file has %d bytes)", what, n, d.size)
	}
	if n > uint64(d.left())/uint64(minSize) {
		return 0, d.fail(at, ErrTruncated, "%s %d needs at least %d bytes, %d left", what, n, n*uint64(minSize), d.left())
	}
	if n > math.MaxInt {
		return 0, d.fail(at, ErrTooLarge, "%s %d is more than this machine can hold", what, n)
	}
	return int(n), nil
}

// skip passes over n bytes without keeping them: through the buffer, or for
// a long run on a source that can seek, by seeking.
func (d *decoder) skip(n int64, what string) error {
	if n > d.left() {
		return d.fail(d.off, ErrTruncated, "%s needs %d bytes, the file ends %d bytes later", what, n, d.left())
	}
	if buffered := int64(d.r.Buffered()); d.seeker != nil && n-buffered >= int64(d.opts.seekFrom) {
		// The source is at d.off+buffered: drop the buffer and seek past the rest.
		d.r.Discard(int(buffered))
		if _, err := d.seeker.Seek(n-buffered, io.SeekCurrent); err != nil {
			return &FormatError{Part: d.part, Offset: d.off, Err: err}
		}
		d.r.Reset(d.src)
		d.off += n
		return nil
	}
	for n > 0 {
		k, err := d.r.Discard(int(min(n, 1<<30)))
		d.off += int64(k)
		n -= int64(k)
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return d.fail(d.off, ErrTruncated, "%s: the data ends before the stated size %d", what, d.size)
			}
			return &FormatError{Part: d.part, Offset: d.off, Err: err}
		}
	}
	return nil
}

func (d *decoder) str(what string) (string, error) {
	n, err := d.count(what+" length", 1)
	if err != nil {
		return "", err
	}
	b := make([]byte, n)
	if err := d.read(b, what); err != nil {
		return "", err
	}
	return string(b), nil
}

func (d *decoder) file() (*File, error) {
	var magic [4]byte
	n, _ := io.ReadFull(d.r, magic[:min(d.size, 4)])
	d.off = int64(n)
	if string(magic[:n]) != Magic[:n] {
		return nil, d.fail(0, ErrNotGGUF, "magic %q, want %q", magic[:n], Magic)
	}
	if n < 4 {
		return nil, d.fail(d.off, ErrTruncated, "the file ends inside the magic (%d bytes)", d.size)
	}
	at := d.off
	version, err := d.u32("version")
	if err != nil {
		return nil, err
	}
	switch {
	case version == 2 || version == 3:
	case version == 1:
		return nil, d.fail(at, ErrVersion, "version 1 (the pre-release format) is not supported, only 2 and 3")
	case version == 2<<24 || version == 3<<24:
		return nil, d.fail(at, ErrVersion, "big-endian file (version %d byte-swapped): only little-endian GGUF is supported", version>>24)
	default:
		return nil, d.fail(at, ErrVersion, "version %d, want 2 or 3", version)
	}
	// The smallest tensor entry: empty name length, n_dims, type, offset.
	nTensors, err := d.count("tensor count", 8+4+4+8)
	if err != nil {
		return nil, err
	}
	// The smallest metadata entry: key length, type, one-byte value.
	nKV, err := d.count("metadata count", 8+4+1)
	if err != nil {
		return nil, err
	}
	f := &File{Version: version, Size: d.size, Alignment: DefaultAlignment}
	f.KV = make([]KV, 0, min(nKV, 256))
	seen := make(map[string]bool, min(nKV, 256))
	for i := range nKV {
		d.part = fmt.Sprintf("metadata %d", i)
		key, err := d.str("key")
		if err != nil {
			return nil, err
		}
		d.part = fmt.Sprintf("metadata %d %q", i, key)
		if key == "" {
			return nil, d.fail(d.off, ErrInvalid, "empty key")
		}
		if seen[key] {
			return nil, d.fail(d.off, ErrInvalid, "duplicate key")
		}
		seen[key] = true
		at := d.off
		t, err := d.u32("value type")
		if err != nil {
			return nil, err
		}
		if !ValueType(t).Known() {
			return nil, d.fail(at, ErrUnknownType, "value type %d", t)
		}
		v, err := d.value(ValueType(t), 0)
		if err != nil {
			return nil, err
		}
		if key == KeyAlignment {
			a, ok := v.x.(uint32)
			if !ok || a == 0 || a&(a-1) != 0 {
				return nil, d.fail(at, ErrInvalid, "alignment must be a uint32 power of two, got %s %v", v.typ, v)
			}
			f.Alignment = uint64(a)
		}
		f.KV = append(f.KV, KV{key, v})
	}

	f.Tensors = make([]TensorInfo, 0, min(nTensors, 1024))
	names := make(map[string]bool, min(nTensors, 1024))
	for i := range nTensors {
		d.part = fmt.Sprintf("tensor %d", i)
		at := d.off
		name, err := d.str("name")
		if err != nil {
			return nil, err
		}
		if len(name) > MaxNameLen {
			return nil, d.fail(at, ErrInvalid, "name of %d bytes, at most %d", len(name), MaxNameLen)
		}
		d.part = fmt.Sprintf("tensor %d %q", i, name)
		if names[name] {
			return nil, d.fail(at, ErrInvalid, "duplicate tensor name")
		}
		names[name] = true
		at = d.off
		nd, err := d.u32("dimension count")
		if err != nil {
			return nil, err
		}
		if nd > MaxDims {
			return nil, d.fail(at, ErrInvalid, "%d dimensions, at most %d", nd, MaxDims)
		}
		dims := make([]uint64, nd)
		for j := range dims {
			if dims[j], err = d.u64("dimension"); err != nil {
				return nil, err
			}
		}
		at = d.off
		typ, err := d.u32("type")
		if err != nil {
			return nil, err
		}
		if !TensorType(typ).Known() {
			return nil, d.fail(at, ErrUnknownType, "tensor type %d", typ)
		}
		if _, _, err := tensorSize(dims, TensorType(typ)); err != nil {
			return nil, &FormatError{Part: d.part, Offset: at, Err: err}
		}
		at = d.off
		off, err := d.u64("offset")
		if err != nil {
			return nil, err
		}
		if off%f.Alignment != 0 {
			return nil, d.fail(at, ErrInvalid, "data offset %d is not a multiple of the alignment %d", off, f.Alignment)
		}
		f.Tensors = append(f.Tensors, TensorInfo{Name: name, Dims: dims, Type: TensorType(typ), Offset: off})
	}

	d.part = "tensor data"
	f.DataOffset = int64(align(uint64(d.off), f.Alignment))
	for i, t := range f.Tensors {
		// Offsets and sizes are below 2^63 and DataOffset below the file size,
		// so only the sum needs care.
		start := uint64(f.DataOffset) + t.Offset
		end := start + t.Bytes()
		if start < t.Offset || end < start || end > uint64(f.Size) {
			d.part = fmt.Sprintf("tensor %d %q", i, t.Name)
			return nil, d.fail(d.off, ErrOutOfBounds, "data [%d, %d) of %d bytes, but the file has %d",
				uint64(f.DataOffset)+t.Offset, uint64(f.DataOffset)+t.Offset+t.Bytes(), t.Bytes(), f.Size)
		}
	}
	return f, nil
}

// value reads one value of type t; depth counts enclosing arrays.
func (d *decoder) value(t ValueType, depth int) (Value, error) {
	switch t {
	case TypeUint8, TypeInt8, TypeBool:
		if err := d.read(d.buf[:1], t.String()); err != nil {
			return Value{}, err
		}
		b := d.buf[0]
		switch t {
		case TypeUint8:
			return Uint8(b), nil
		case TypeInt8:
			return Int8(int8(b)), nil
		}
		if b > 1 {
			return Value{}, d.fail(d.off-1, ErrInvalid, "bool byte %d, want 0 or 1", b)
		}
		return Bool(b == 1), nil
	case TypeUint16, TypeInt16:
		if err := d.read(d.buf[:2], t.String()); err != nil {
			return Value{}, err
		}
		u := binary.LittleEndian.Uint16(d.buf[:2])
		if t == TypeInt16 {
			return Int16(int16(u)), nil
		}
		return Uint16(u), nil
	case TypeUint32, TypeInt32, TypeFloat32:
		u, err := d.u32(t.String())
		if err != nil {
			return Value{}, err
		}
		switch t {
		case TypeInt32:
			return Int32(int32(u)), nil
		case TypeFloat32:
			return Float32(math.Float32frombits(u)), nil
		}
		return Uint32(u), nil
	case TypeUint64, TypeInt64, TypeFloat64:
		u, err := d.u64(t.String())
		if err != nil {
			return Value{}, err
		}
		switch t {
		case TypeInt64:
			return Int64(int64(u)), nil
		case TypeFloat64:
			return Float64(math.Float64frombits(u)), nil
		}
		return Uint64(u), nil
	case TypeString:
		s, err := d.str("string")
		if err != nil {
			return Value{}, err
		}
		return String(s), nil
	case TypeArray:
		return d.array(depth)
	}
	return Value{}, d.fail(d.off, ErrUnknownType, "value type %d", uint32(t))
}

func (d *decoder) array(depth int) (Value, error) {
	at := d.off
	et, err := d.u32("array element type")
	if err != nil {
		return Value{}, err
	}
	elem := ValueType(et)
	if !elem.Known() {
		return Value{}, d.fail(at, ErrUnknownType, "array element type %d", et)
	}
	if elem == TypeArray && depth+1 >= maxNesting {
		return Value{}, d.fail(at, ErrInvalid, "arrays nested more than %d deep", maxNesting)
	}
	n, err := d.count("array length", elem.size())
	if err != nil {
		return Value{}, err
	}
	if o := d.opts.SkipArraysOver; o > 0 && n > o && elem != TypeBool && elem != TypeArray {
		return d.skipArray(elem, n, depth)
	}
	le := binary.LittleEndian
	switch elem {
	case TypeUint8:
		return readArray(d, n, depth, fixed(d, 1, func(b []byte) uint8 { return b[0] }))
	case TypeInt8:
		return readArray(d, n, depth, fixed(d, 1, func(b []byte) int8 { return int8(b[0]) }))
	case TypeUint16:
		return readArray(d, n, depth, fixed(d, 2, le.Uint16))
	case TypeInt16:
		return readArray(d, n, depth, fixed(d, 2, func(b []byte) int16 { return int16(le.Uint16(b)) }))
	case TypeUint32:
		return readArray(d, n, depth, fixed(d, 4, le.Uint32))
	case TypeInt32:
		return readArray(d, n, depth, fixed(d, 4, func(b []byte) int32 { return int32(le.Uint32(b)) }))
	case TypeFloat32:
		return readArray(d, n, depth, fixed(d, 4, func(b []byte) float32 { return math.Float32frombits(le.Uint32(b)) }))
	case TypeUint64:
		return readArray(d, n, depth, fixed(d, 8, le.Uint64))
	case TypeInt64:
		return readArray(d, n, depth, fixed(d, 8, func(b []byte) int64 { return int64(le.Uint64(b)) }))
	case TypeFloat64:
		return readArray(d, n, depth, fixed(d, 8, func(b []byte) float64 { return math.Float64frombits(le.Uint64(b)) }))
	case TypeString:
		return readArray(d, n, depth, func() (string, error) { return d.str("string") })
	default: // bools are checked, arrays recurse: both go through value
		if elem == TypeBool {
			return readArray(d, n, depth, func() (bool, error) {
				v, err := d.value(TypeBool, depth+1)
				return v.x == true, err
			})
		}
		return readArray(d, n, depth, func() (Value, error) { return d.value(TypeArray, depth+1) })
	}
}

// skipArray passes over the n elements of an array of numbers or strings
// and returns a Skipped value. Strings are checked as readArray checks them,
// with the same errors.
func (d *decoder) skipArray(elem ValueType, n, depth int) (Value, error) {
	if elem != TypeString {
		// count checked that n elements fit in what is left.
		if err := d.skip(int64(n)*elem.size(), "array elements"); err != nil {
			return Value{}, err
		}
		return Value{typ: TypeArray, elem: elem, x: Skipped{Len: n}}, nil
	}
	for i := range n {
		k, err := d.count("string length", 1)
		if err == nil {
			err = d.skip(int64(k), "string")
		}
		if err != nil {
			var fe *FormatError
			if errors.As(err, &fe) && depth == 0 {
				fe.Part += fmt.Sprintf(", element %d of %d", i, n)
			}
			return Value{}, err
		}
	}
	return Value{typ: TypeArray, elem: elem, x: Skipped{Len: n}}, nil
}

// fixed makes an element reader for a fixed-size little-endian type.
func fixed[T any](d *decoder, size int, decode func([]byte) T) func() (T, error) {
	return func() (T, error) {
		err := d.read(d.buf[:size], "array element")
		return decode(d.buf[:size]), err
	}
}

// readArray reads n elements into a []T. n has been checked against the
// bytes left, so the slice is at most a small multiple of them.
func readArray[T any](d *decoder, n, depth int, next func() (T, error)) (Value, error) {
	xs := make([]T, n)
	for i := range xs {
		x, err := next()
		if err != nil {
			var fe *FormatError
			if errors.As(err, &fe) && depth == 0 {
				fe.Part += fmt.Sprintf(", element %d of %d", i, n)
			}
			return Value{}, err
		}
		xs[i] = x
	}
	if vs, ok := any(xs).([]Value); ok {
		return Arrays(vs...), nil
	}
	return ValueOf(xs)
}
