// Package gguf reads and writes GGUF, the model file format of llama.cpp:
// a header, typed key-value metadata, a table of tensors (name, shape, type,
// offset) and the aligned tensor data.
//
// The reader takes only the header, metadata and tensor table into memory,
// never the data. It treats its input as hostile: every count and length is
// checked against the bytes left in the file before anything is allocated, so
// a small file cannot make it allocate much more than its own size, and every
// problem is an error (never a panic) naming the file, the part being read and
// the offset. OpenWith and ReadWith can pass over long arrays (the tokenizer's
// tokens and merges) keeping only their type and length, for programs that
// look at a model without tokenizing.
//
// The writer streams tensor data: it writes the header and tensor table from
// the shapes alone, then takes the data in order through Write, so a model
// larger than memory can be produced.
//
// Layout facts (little-endian throughout):
//
//	magic "GGUF" | version u32 | tensor count u64 | metadata count u64
//	metadata: key (u64 length + bytes) | value type u32 | value
//	  arrays: element type u32 | count u64 | elements
//	tensors: name (string) | n_dims u32 | dims u64[n_dims] (row length first)
//	         | type u32 | offset u64 (from the start of the data section)
//	padding to the alignment (general.alignment, default 32) | tensor data
package gguf

import (
	"errors"
	"fmt"
)

// Magic is the first four bytes of every GGUF file.
const Magic = "GGUF"

// Version is the version the writer produces. The reader accepts 2 and 3,
// which differ only in that 3 allowed big-endian files (not supported here).
const Version = 3

// DefaultAlignment is the alignment of tensor data when general.alignment is
// not set.
const DefaultAlignment = 32

// MaxDims is the most dimensions a ggml tensor has.
const MaxDims = 4

// MaxNameLen is the longest tensor name ggml accepts, in bytes (GGML_MAX_NAME
// less the terminating NUL).
const MaxNameLen = 63

// maxNesting bounds arrays of arrays, which nothing real uses beyond two.
const maxNesting = 4

// KeyAlignment is the metadata key that sets the alignment of tensor data.
const KeyAlignment = "general.alignment"

// Errors that the reader's and writer's errors wrap; test with errors.Is.
var (
	ErrNotGGUF     = errors.New("not a GGUF file")
	ErrVersion     = errors.New("unsupported GGUF version")
	ErrTruncated   = errors.New("truncated")
	ErrTooLarge    = errors.New("count or length too large for any GGUF file")
	ErrUnknownType = errors.New("unknown type")
	ErrOutOfBounds = errors.New("tensor data outside the file")
	ErrInvalid     = errors.New("invalid")
)

// FormatError is what the reader returns for a file that is not valid GGUF.
type FormatError struct {
	File   string // the path; empty when reading a stream
	Part   string // what was being read: "header", `metadata 3 "general.name"`, `tensor 7 "output.weight"`
	Offset int64  // where in the file
	Err    error  // wraps one of the Err* values above, with detail
}

func (e *FormatError) Error() string {
	file := e.File
	if file == "" {
		file = "gguf"
	}
	return fmt.Sprintf("%s: %s, offset %d: %v", file, e.Part, e.Offset, e.Err)
}

func (e *FormatError) Unwrap() error { return e.Err }

// TensorInfo describes one tensor.
type TensorInfo struct {
	Name string
	// Dims are the sizes of the dimensions in ggml order: Dims[0] is the row
	// length (contiguous), Dims[1] the number of rows, and so on. A weight
	// matrix of a layer mapping n_embd to n_ff is {n_embd, n_ff}.
	Dims   []uint64
	Type   TensorType
	Offset uint64 // from the start of the data section; the writer sets it
}

// Elements is the number of elements (the product of the dimensions).
func (t TensorInfo) Elements() uint64 {
	n, _, _ := tensorSize(t.Dims, t.Type)
	return n
}

// Bytes is the size of the tensor's data.
func (t TensorInfo) Bytes() uint64 {
	_, b, _ := tensorSize(t.Dims, t.Type)
	return b
}

// tensorSize checks a tensor's shape and type and returns its element count
// and byte size. ggml counts in int64: both must fit.
func tensorSize(dims []uint64, typ TensorType) (elems, bytes uint64, err error) {
	ti, ok := tensorTypes[typ]
	if !ok {
		return 0, 0, fmt.Errorf("%w: tensor type %d", ErrUnknownType, uint32(typ))
	}
	if len(dims) > MaxDims {
		return 0, 0, fmt.Errorf("%w: %d dimensions, at most %d", ErrInvalid, len(dims), MaxDims)
	}
	const limit = 1<<63 - 1
	elems = 1
	for _, d := range dims {
		if d > limit || (d != 0 && elems > limit/d) {
			return 0, 0, fmt.Errorf("%w: shape %v has more than 2^63 elements", ErrTooLarge, dims)
		}
		elems *= d
	}
	if len(dims) > 0 && dims[0]%ti.block != 0 {
		return 0, 0, fmt.Errorf("%w: row length %d is not a multiple of the %s block size %d", ErrInvalid, dims[0], typ, ti.block)
	}
	blocks := elems / ti.block
	if blocks > limit/ti.size {
		return 0, 0, fmt.Errorf("%w: shape %v of %s is more than 2^63 bytes", ErrTooLarge, dims, typ)
	}
	return elems, blocks * ti.size, nil
}

// File is the parsed header of a GGUF file: everything but the tensor data.
type File struct {
	Version    uint32
	KV         []KV // in file order
	Tensors    []TensorInfo
	Alignment  uint64 // of tensor data
	DataOffset int64  // where the data section starts in the file
	Size       int64  // of the whole file
}

// Get returns the value of a metadata key.
func (f *File) Get(key string) (Value, bool) {
	for _, kv := range f.KV {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return Value{}, false
}

// Tensor returns the tensor of that name.
func (f *File) Tensor(name string) (TensorInfo, bool) {
	for _, t := range f.Tensors {
		if t.Name == name {
			return t, true
		}
	}
	return TensorInfo{}, false
}

// align rounds n up to a multiple of a (a power of two).
func align(n, a uint64) uint64 { return (n + a - 1) &^ (a - 1) }
