package gguf

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

// Writer writes a GGUF file: NewWriter writes the header, metadata and tensor
// table; then the tensors' data is written through Write, in the order of the
// table, and Close checks that all of it came. The writer inserts the
// alignment padding between tensors itself, so the data of all tensors can be
// written as one stream or tensor by tensor, in pieces of any size.
type Writer struct {
	w       *bufio.Writer
	tensors []TensorInfo
	sizes   []uint64
	align   uint64
	cur     int    // tensor being written
	left    uint64 // bytes of it still to come
	err     error
}

var zeros [256]byte

// NewWriter checks the metadata and tensor table, computes the tensors'
// offsets (the Offset fields given are ignored) and writes everything up to
// the start of the tensor data to w. The version written is 3.
func NewWriter(w io.Writer, kv []KV, tensors []TensorInfo) (*Writer, error) {
	gw := &Writer{w: bufio.NewWriterSize(w, 1<<20), align: DefaultAlignment}
	seen := make(map[string]bool, len(kv))
	for _, e := range kv {
		if e.Key == "" {
			return nil, fmt.Errorf("gguf: %w: empty metadata key", ErrInvalid)
		}
		if seen[e.Key] {
			return nil, fmt.Errorf("gguf: %w: duplicate metadata key %q", ErrInvalid, e.Key)
		}
		seen[e.Key] = true
		if err := checkValue(e.Value, 0); err != nil {
			return nil, fmt.Errorf("gguf: metadata %q: %w", e.Key, err)
		}
		if e.Key == KeyAlignment {
			a, ok := e.Value.x.(uint32)
			if !ok || a == 0 || a&(a-1) != 0 {
				return nil, fmt.Errorf("gguf: %w: %s must be a uint32 power of two", ErrInvalid, KeyAlignment)
			}
			gw.align = uint64(a)
		}
	}
	names := make(map[string]bool, len(tensors))
	gw.tensors = make([]TensorInfo, len(tensors))
	gw.sizes = make([]uint64, len(tensors))
	var off uint64
	for i, t := range tensors {
		if len(t.Name) > MaxNameLen {
			return nil, fmt.Errorf("gguf: %w: tensor name %q is longer than %d bytes", ErrInvalid, t.Name, MaxNameLen)
		}
		if names[t.Name] {
			return nil, fmt.Errorf("gguf: %w: duplicate tensor %q", ErrInvalid, t.Name)
		}
		names[t.Name] = true
		_, size, err := tensorSize(t.Dims, t.Type)
		if err != nil {
			return nil, fmt.Errorf("gguf: tensor %q: %w", t.Name, err)
		}
		t.Dims = append([]uint64(nil), t.Dims...)
		t.Offset = off
		gw.tensors[i], gw.sizes[i] = t, size
		off = align(off+size, gw.align)
	}

	var n uint64
	put := func(p []byte) {
		if gw.err == nil {
			_, gw.err = gw.w.Write(p)
			n += uint64(len(p))
		}
	}
	var b [8]byte
	put32 := func(x uint32) { binary.LittleEndian.PutUint32(b[:4], x); put(b[:4]) }
	put64 := func(x uint64) { binary.LittleEndian.PutUint64(b[:8], x); put(b[:8]) }
	putStr := func(s string) { put64(uint64(len(s))); put([]byte(s)) }

	put([]byte(Magic))
	put32(Version)
	put64(uint64(len(tensors)))
	put64(uint64(len(kv)))
	for _, e := range kv {
		putStr(e.Key)
		put32(uint32(e.Value.typ))
		gw.err = errors.Join(gw.err, writeValue(gw.w, e.Value, &n))
	}
	for _, t := range gw.tensors {
		putStr(t.Name)
		put32(uint32(len(t.Dims)))
		for _, d := range t.Dims {
			put64(d)
		}
		put32(uint32(t.Type))
		put64(t.Offset)
	}
	gw.pad(align(n, gw.align) - n)
	gw.skipEmpty()
	if gw.err != nil {
		return nil, gw.err
	}
	return gw, nil
}

// Tensors returns the tensor table with the offsets as written.
func (w *Writer) Tensors() []TensorInfo { return w.tensors }

// Write writes tensor data. p may span tensors; the padding between them is
// added here. Writing more than the tensors hold is an error.
func (w *Writer) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 && w.err == nil {
		if w.cur >= len(w.tensors) {
			w.err = fmt.Errorf("gguf: %d bytes written past the end of the last tensor", len(p))
			break
		}
		k := uint64(len(p))
		if k > w.left {
			k = w.left
		}
		if _, err := w.w.Write(p[:k]); err != nil {
			w.err = err
			break
		}
		written += int(k)
		p = p[k:]
		w.left -= k
		if w.left == 0 {
			w.pad(align(w.sizes[w.cur], w.align) - w.sizes[w.cur])
			w.cur++
			w.skipEmpty()
		}
	}
	return written, w.err
}

// skipEmpty moves to the next tensor that has data to take.
func (w *Writer) skipEmpty() {
	for w.cur < len(w.tensors) && w.sizes[w.cur] == 0 {
		w.cur++
	}
	if w.cur < len(w.tensors) {
		w.left = w.sizes[w.cur]
	}
}

func (w *Writer) pad(n uint64) {
	for n > 0 && w.err == nil {
		k := min(n, uint64(len(zeros)))
		_, w.err = w.w.Write(zeros[:k])
		n -= k
	}
}

// Close flushes the buffered output and reports an error if tensor data is
// missing. It does not close the underlying writer.
func (w *Writer) Close() error {
	if w.err != nil {
		return w.err
	}
	if w.cur < len(w.tensors) {
		t := w.tensors[w.cur]
		w.err = fmt.Errorf("gguf: data of tensor %q incomplete: %d of %d bytes written (and %d tensors after it)",
			t.Name, w.sizes[w.cur]-w.left, w.sizes[w.cur], len(w.tensors)-w.cur-1)
		return w.err
	}
	w.err = w.w.Flush()
	if w.err == nil {
		w.err = errors.New("gguf: writer closed")
		return nil
	}
	return w.err
}

// checkValue checks that a value is well formed before anything is written.
func checkValue(v Value, depth int) error {
	if !v.typ.Known() || v.x == nil {
		return fmt.Errorf("%w: value of type %d", ErrUnknownType, uint32(v.typ))
	}
	if v.typ != TypeArray {
		return nil
	}
	if sk, ok := v.x.(Skipped); ok {
		return fmt.Errorf("%w: an array of %d %s elements that the reader skipped (Options.SkipArraysOver): its elements are unknown", ErrInvalid, sk.Len, v.elem)
	}
	vs, ok := v.x.([]Value)
	if !ok {
		return nil // typed slices are made by ValueOf and always consistent
	}
	if depth+1 >= maxNesting {
		return fmt.Errorf("%w: arrays nested more than %d deep", ErrInvalid, maxNesting)
	}
	for i, e := range vs {
		if e.typ != TypeArray {
			return fmt.Errorf("%w: element %d of an array of arrays is a %s", ErrInvalid, i, e.typ)
		}
		if err := checkValue(e, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// writeValue writes a value's encoding (without its type), counting bytes in n.
func writeValue(w *bufio.Writer, v Value, n *uint64) error {
	var b [8]byte
	le := binary.LittleEndian
	put := func(p []byte) error {
		*n += uint64(len(p))
		_, err := w.Write(p)
		return err
	}
	switch x := v.x.(type) {
	case uint8:
		return put([]byte{x})
	case int8:
		return put([]byte{byte(x)})
	case bool:
		if x {
			return put([]byte{1})
		}
		return put([]byte{0})
	case uint16:
		le.PutUint16(b[:], x)
		return put(b[:2])
	case int16:
		le.PutUint16(b[:], uint16(x))
		return put(b[:2])
	case uint32:
		le.PutUint32(b[:], x)
		return put(b[:4])
	case int32:
		le.PutUint32(b[:], uint32(x))
		return put(b[:4])
	case float32:
		le.PutUint32(b[:], math.Float32bits(x))
		return put(b[:4])
	case uint64:
		le.PutUint64(b[:], x)
		return put(b[:8])
	case int64:
		le.PutUint64(b[:], uint64(x))
		return put(b[:8])
	case float64:
		le.PutUint64(b[:], math.Float64bits(x))
		return put(b[:8])
	case string:
		le.PutUint64(b[:], uint64(len(x)))
		if err := put(b[:8]); err != nil {
			return err
		}
		*n += uint64(len(x))
		_, err := w.WriteString(x)
		return err
	}
	// An array: element type, count, elements.
	le.PutUint32(b[:4], uint32(v.elem))
	if err := put(b[:4]); err != nil {
		return err
	}
	count := v.Len()
	le.PutUint64(b[:], uint64(count))
	if err := put(b[:8]); err != nil {
		return err
	}
	switch xs := v.x.(type) {
	case []Value: // each element is an array, written without a type of its own
		for _, e := range xs {
			if err := writeValue(w, e, n); err != nil {
				return err
			}
		}
		return nil
	case []string: // the vocabulary: hundreds of thousands, skip the boxing
		for _, s := range xs {
			le.PutUint64(b[:], uint64(len(s)))
			if err := put(b[:8]); err != nil {
				return err
			}
			*n += uint64(len(s))
			if _, err := w.WriteString(s); err != nil {
				return err
			}
		}
		return nil
	}
	for i := range count {
		if err := writeValue(w, v.index(i), n); err != nil {
			return err
		}
	}
	return nil
}
