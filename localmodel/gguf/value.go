package gguf

import (
	"fmt"
	"strconv"
	"strings"
)

// ValueType is the type of a metadata value (enum gguf_type).
type ValueType uint32

// The metadata value types of GGUF.
const (
	TypeUint8   ValueType = 0
	TypeInt8    ValueType = 1
	TypeUint16  ValueType = 2
	TypeInt16   ValueType = 3
	TypeUint32  ValueType = 4
	TypeInt32   ValueType = 5
	TypeFloat32 ValueType = 6
	TypeBool    ValueType = 7
	TypeString  ValueType = 8
	TypeArray   ValueType = 9
	TypeUint64  ValueType = 10
	TypeInt64   ValueType = 11
	TypeFloat64 ValueType = 12
)

var valueTypeNames = [...]string{"uint8", "int8", "uint16", "int16", "uint32", "int32",
	"float32", "bool", "string", "array", "uint64", "int64", "float64"}

func (t ValueType) String() string {
	if int(t) < len(valueTypeNames) {
		return valueTypeNames[t]
	}
	return fmt.Sprintf("ValueType(%d)", uint32(t))
}

// Known reports whether t is one of the GGUF value types.
func (t ValueType) Known() bool { return t <= TypeFloat64 }

// size is the encoded size of a scalar of this type; for strings and arrays
// the smallest possible encoding (an empty one).
func (t ValueType) size() int64 {
	switch t {
	case TypeUint8, TypeInt8, TypeBool:
		return 1
	case TypeUint16, TypeInt16:
		return 2
	case TypeUint32, TypeInt32, TypeFloat32:
		return 4
	case TypeUint64, TypeInt64, TypeFloat64, TypeString:
		return 8
	case TypeArray:
		return 12
	}
	return 0
}

// Value is one metadata value. Scalars hold the Go type of the same name
// (uint8 ... float64, bool, string); arrays hold a slice of it ([]string for
// tokenizer.ggml.tokens), or []Value for an array of arrays. The zero Value is
// invalid: make values with the constructors or ValueOf.
type Value struct {
	typ  ValueType
	elem ValueType // arrays only
	x    any
}

// Skipped is what an array the reader was told not to decode holds
// (Options.SkipArraysOver): its length. Len and ElemType answer for such an
// array as for any other; its elements are not known, Strings and the like
// report false, and the writer refuses it.
type Skipped struct{ Len int }

// Skipped reports whether v is an array the reader skipped.
func (v Value) Skipped() bool { _, ok := v.x.(Skipped); return ok }

// Scalar is the set of Go types a GGUF scalar can hold.
type Scalar interface {
	~uint8 | ~int8 | ~uint16 | ~int16 | ~uint32 | ~int32 | ~float32 | ~bool | ~string | ~uint64 | ~int64 | ~float64
}

// Constructors of scalar values.
func Uint8(x uint8) Value     { return Value{typ: TypeUint8, x: x} }
func Int8(x int8) Value       { return Value{typ: TypeInt8, x: x} }
func Uint16(x uint16) Value   { return Value{typ: TypeUint16, x: x} }
func Int16(x int16) Value     { return Value{typ: TypeInt16, x: x} }
func Uint32(x uint32) Value   { return Value{typ: TypeUint32, x: x} }
func Int32(x int32) Value     { return Value{typ: TypeInt32, x: x} }
func Float32(x float32) Value { return Value{typ: TypeFloat32, x: x} }
func Bool(x bool) Value       { return Value{typ: TypeBool, x: x} }
func String(x string) Value   { return Value{typ: TypeString, x: x} }
func Uint64(x uint64) Value   { return Value{typ: TypeUint64, x: x} }
func Int64(x int64) Value     { return Value{typ: TypeInt64, x: x} }
func Float64(x float64) Value { return Value{typ: TypeFloat64, x: x} }

// Array makes an array value of scalars. The slice is kept, not copied.
func Array[T Scalar](xs []T) Value {
	v, err := ValueOf(xs)
	if err != nil {
		panic(err) // unreachable: every Scalar slice type is handled by ValueOf
	}
	return v
}

// Arrays makes an array of arrays. Every element must itself be an array.
func Arrays(vs ...Value) Value {
	if vs == nil {
		vs = []Value{}
	}
	return Value{typ: TypeArray, elem: TypeArray, x: vs}
}

// ValueOf makes a Value from a Go value of one of the scalar types, a slice of
// one, or a []Value of arrays.
func ValueOf(x any) (Value, error) {
	switch x := x.(type) {
	case uint8:
		return Uint8(x), nil
	case int8:
		return Int8(x), nil
	case uint16:
		return Uint16(x), nil
	case int16:
		return Int16(x), nil
	case uint32:
		return Uint32(x), nil
	case int32:
		return Int32(x), nil
	case float32:
		return Float32(x), nil
	case bool:
		return Bool(x), nil
	case string:
		return String(x), nil
	case uint64:
		return Uint64(x), nil
	case int64:
		return Int64(x), nil
	case float64:
		return Float64(x), nil
	case []uint8:
		return Value{TypeArray, TypeUint8, x}, nil
	case []int8:
		return Value{TypeArray, TypeInt8, x}, nil
	case []uint16:
		return Value{TypeArray, TypeUint16, x}, nil
	case []int16:
		return Value{TypeArray, TypeInt16, x}, nil
	case []uint32:
		return Value{TypeArray, TypeUint32, x}, nil
	case []int32:
		return Value{TypeArray, TypeInt32, x}, nil
	case []float32:
		return Value{TypeArray, TypeFloat32, x}, nil
	case []bool:
		return Value{TypeArray, TypeBool, x}, nil
	case []string:
		return Value{TypeArray, TypeString, x}, nil
	case []uint64:
		return Value{TypeArray, TypeUint64, x}, nil
	case []int64:
		return Value{TypeArray, TypeInt64, x}, nil
	case []float64:
		return Value{TypeArray, TypeFloat64, x}, nil
	case []Value:
		return Arrays(x...), nil
	}
	return Value{}, fmt.Errorf("gguf: no metadata type for Go type %T", x)
}

// Type is the value's type (TypeArray for arrays).
func (v Value) Type() ValueType { return v.typ }

// ElemType is the element type of an array.
func (v Value) ElemType() ValueType { return v.elem }

// Any returns the Go value: a scalar, a slice, []Value, or Skipped.
func (v Value) Any() any { return v.x }

// Len is the number of elements of an array, 0 for a scalar.
func (v Value) Len() int {
	if v.typ != TypeArray {
		return 0
	}
	return arrayLen(v.x)
}

func arrayLen(x any) int {
	switch x := x.(type) {
	case []uint8:
		return len(x)
	case []int8:
		return len(x)
	case []uint16:
		return len(x)
	case []int16:
		return len(x)
	case []uint32:
		return len(x)
	case []int32:
		return len(x)
	case []float32:
		return len(x)
	case []bool:
		return len(x)
	case []string:
		return len(x)
	case []uint64:
		return len(x)
	case []int64:
		return len(x)
	case []float64:
		return len(x)
	case []Value:
		return len(x)
	case Skipped:
		return x.Len
	}
	return 0
}

// AsString returns a string value.
func (v Value) AsString() (string, bool) { s, ok := v.x.(string); return s, ok }

// AsBool returns a bool value.
func (v Value) AsBool() (bool, bool) { b, ok := v.x.(bool); return b, ok }

// AsUint returns an integer value of any width that is not negative.
func (v Value) AsUint() (uint64, bool) {
	switch x := v.x.(type) {
	case uint8:
		return uint64(x), true
	case uint16:
		return uint64(x), true
	case uint32:
		return uint64(x), true
	case uint64:
		return x, true
	}
	if i, ok := v.AsInt(); ok && i >= 0 {
		return uint64(i), true
	}
	return 0, false
}

// AsInt returns an integer value of any width that fits an int64.
func (v Value) AsInt() (int64, bool) {
	switch x := v.x.(type) {
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case uint8:
		return int64(x), true
	case uint16:
		return int64(x), true
	case uint32:
		return int64(x), true
	case uint64:
		if x <= 1<<63-1 {
			return int64(x), true
		}
	}
	return 0, false
}

// AsFloat returns a float32 or float64 value.
func (v Value) AsFloat() (float64, bool) {
	switch x := v.x.(type) {
	case float32:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

// Strings returns an array of strings.
func (v Value) Strings() ([]string, bool) { s, ok := v.x.([]string); return s, ok }

// String renders the value for people: scalars as themselves (strings quoted
// and cut at 60 bytes), arrays as their type, length and first elements.
func (v Value) String() string {
	switch x := v.x.(type) {
	case string:
		if len(x) > 60 {
			return strconv.Quote(x[:60]) + "..."
		}
		return strconv.Quote(x)
	case nil:
		return "<invalid>"
	}
	if v.typ != TypeArray {
		return fmt.Sprint(v.x)
	}
	n := v.Len()
	var b strings.Builder
	fmt.Fprintf(&b, "[%s × %d]", v.elem, n)
	if v.Skipped() {
		b.WriteString(" (not read)")
	} else if n > 0 {
		b.WriteString(" [")
		for i := range min(n, 4) {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(v.index(i).String())
		}
		if n > 4 {
			b.WriteString(", ...")
		}
		b.WriteString("]")
	}
	return b.String()
}

// index returns element i of an array as a Value.
func (v Value) index(i int) Value {
	switch x := v.x.(type) {
	case []uint8:
		return Uint8(x[i])
	case []int8:
		return Int8(x[i])
	case []uint16:
		return Uint16(x[i])
	case []int16:
		return Int16(x[i])
	case []uint32:
		return Uint32(x[i])
	case []int32:
		return Int32(x[i])
	case []float32:
		return Float32(x[i])
	case []bool:
		return Bool(x[i])
	case []string:
		return String(x[i])
	case []uint64:
		return Uint64(x[i])
	case []int64:
		return Int64(x[i])
	case []float64:
		return Float64(x[i])
	case []Value:
		return x[i]
	}
	return Value{}
}

// KV is one metadata key and its value.
type KV struct {
	Key   string
	Value Value
}
