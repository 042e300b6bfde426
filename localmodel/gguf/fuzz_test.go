package gguf

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzRead feeds arbitrary bytes to the reader: it must return a *FormatError
// or a File whose tensors lie inside the input, and a File it accepts must
// survive a write and a second read unchanged (the writer accepts everything
// the reader does, and both agree on the encoding).
func FuzzRead(f *testing.F) {
	f.Add(build(f, everyValue(), testTensors()))
	f.Add(header(0, 0).Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		gf, err := Read(bytes.NewReader(data), int64(len(data)))
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
