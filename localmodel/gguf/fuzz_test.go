package gguf

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"testing"
)

// FuzzRead feeds arbitrary bytes to the reader: it must return a *FormatError
// or a File whose tensors lie inside the input, and a File it accepts must
// survive a write and a second read unchanged (the writer accepts everything
// the reader does, and both agree on the encoding). Reading with arrays
// skipped, by seeking or not, must accept and refuse the same inputs with
// the same errors and keep the same metadata but for the skipped elements.
func FuzzRead(f *testing.F) {
	f.Add(build(f, everyValue(), testTensors()))
	f.Add(header(0, 0).Bytes())
	f.Add(build(f, longArrays(40), testTensors()))
	f.Fuzz(func(t *testing.T, data []byte) {
		gf, err := Read(bytes.NewReader(data), int64(len(data)))
		checkSkipping(t, data, gf, err)
		if err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("error %T %v is not a *FormatError", err, err)
			}
			return
		}
		var total uint64
		for _, ti := range gf.Tensors {
			if end := uint64(gf.DataOffset) + ti.Offset + ti.Bytes(); end > uint64(len(data)) {
				t.Fatalf("tensor %q ends at %d, past the %d bytes read", ti.Name, end, len(data))
			}
			total += ti.Bytes()
		}
		if total > 1<<20 {
			return // tensors may share bytes: rewriting them could take far more than the input
		}
		once := rewrite(t, gf, data)
		again, err := Read(bytes.NewReader(once), int64(len(once)))
		if err != nil {
			t.Fatalf("reading the rewritten file: %v", err)
		}
		if twice := rewrite(t, again, once); !bytes.Equal(once, twice) {
			t.Fatal("writing, reading and writing again changed the bytes")
		}
	})
}

// rewrite writes gf's metadata and tensors, with their data taken from data.
func rewrite(t *testing.T, gf *File, data []byte) []byte {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, gf.KV, gf.Tensors)
	if err != nil {
		t.Fatalf("the writer refuses what the reader accepted: %v", err)
	}
	for _, ti := range gf.Tensors {
		start := uint64(gf.DataOffset) + ti.Offset
		if _, err := w.Write(data[start : start+ti.Bytes()]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// longArrays is metadata with arrays of n elements of every kind the reader
// may skip, and of the kinds it never does.
func longArrays(n int) []KV {
	tokens, types, scores, u8 := make([]string, n), make([]int32, n), make([]float32, n), make([]uint8, n)
	bools, nested := make([]bool, n), make([]Value, n)
	for i := range n {
		tokens[i] = string(rune('a'+i%26)) + string(rune('A'+i/26%26))
		types[i], scores[i], u8[i], bools[i] = int32(i%3), -float32(i), uint8(i), i%2 == 0
		nested[i] = Array([]uint64{uint64(i)})
	}
	return []KV{
		{KeyArchitecture, String("qwen2")},
		{KeyTokens, Array(tokens)},
		{"tokenizer.ggml.token_type", Array(types)},
		{"tokenizer.ggml.scores", Array(scores)},
		{"a.u8", Array(u8)},
		{"a.bool", Array(bools)},
		{"a.nested", Arrays(Arrays(nested...), Array(tokens))},
		{"a.short", Array([]uint16{1, 2})},
		{KeyChatTemplate, String("<|im_start|>")},
	}
}

// noSeek hides a reader's Seek.
type noSeek struct{ io.Reader }

// checkSkipping reads data with arrays of more than two elements skipped,
// by seeking through a tiny buffer and by reading, and compares with the
// full read's gf and err.
func checkSkipping(t *testing.T, data []byte, gf *File, err error) {
	t.Helper()
	for _, tc := range []struct {
		name string
		r    io.Reader
	}{
		{"seeking", bytes.NewReader(data)},
		{"reading", noSeek{bytes.NewReader(data)}},
	} {
		sf, serr := ReadWith(tc.r, int64(len(data)), Options{SkipArraysOver: 2, bufSize: 16, seekFrom: 1})
		if (err == nil) != (serr == nil) || err != nil && err.Error() != serr.Error() {
			t.Fatalf("%s over arrays: error %v, reading them: %v", tc.name, serr, err)
		}
		if err != nil {
			continue
		}
		if sf.Version != gf.Version || sf.Alignment != gf.Alignment || sf.DataOffset != gf.DataOffset ||
			sf.Size != gf.Size || !reflect.DeepEqual(sf.Tensors, gf.Tensors) || len(sf.KV) != len(gf.KV) {
			t.Fatalf("%s over arrays: header or tensors differ", tc.name)
		}
		for i, kv := range sf.KV {
			full := gf.KV[i]
			if kv.Key != full.Key || kv.Value.Type() != full.Value.Type() || kv.Value.ElemType() != full.Value.ElemType() ||
				kv.Value.Len() != full.Value.Len() {
				t.Fatalf("%s over arrays: %q is %s, read it is %s", tc.name, kv.Key, kv.Value, full.Value)
			}
			if !skippedOrEqual(kv.Value, full.Value) {
				t.Fatalf("%s over arrays: %q is %s, read it is %s", tc.name, kv.Key, kv.Value, full.Value)
			}
		}
	}
}

// skippedOrEqual: s, read with arrays skipped, is v or v with arrays of more
// than two numbers or strings skipped.
func skippedOrEqual(s, v Value) bool {
	if s.typ != v.typ || s.elem != v.elem || s.Len() != v.Len() {
		return false
	}
	if s.Skipped() {
		return v.Len() > 2 && v.elem != TypeBool && v.elem != TypeArray
	}
	if ss, ok := s.x.([]Value); ok {
		vs := v.x.([]Value)
		for i := range ss {
			if !skippedOrEqual(ss[i], vs[i]) {
				return false
			}
		}
		return true
	}
	if v.typ == TypeArray && v.Len() > 2 && v.elem != TypeBool && v.elem != TypeArray {
		return false // should have been skipped
	}
	return reflect.DeepEqual(s.x, v.x) || isNaN(s) && isNaN(v)
}

func isNaN(v Value) bool { f, ok := v.AsFloat(); return ok && f != f }
