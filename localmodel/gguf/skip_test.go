package gguf

import (
	"bytes"
	"errors"
	"io"
	"os"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// realVocab is the vocabulary-only Qwen2 model of scripts/fetch-llama.sh:
// 151,936 tokens and 151,387 merges.
const realVocab = "../../third_party/llama/models/ggml-vocab-qwen2.gguf"

func TestSkipArrays(t *testing.T) {
	data := build(t, longArrays(3000), testTensors())
	full, err := Read(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		o    Options
	}{
		{"default buffer", Options{SkipArraysOver: SmallArray}},
		{"seeking", Options{SkipArraysOver: SmallArray, bufSize: 16, seekFrom: 100}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, r := range []io.Reader{bytes.NewReader(data), noSeek{bytes.NewReader(data)}} {
				f, err := ReadWith(r, int64(len(data)), tc.o)
				if err != nil {
					t.Fatal(err)
				}
				var skipped []string
				for i, kv := range f.KV {
					if kv.Value.Skipped() {
						skipped = append(skipped, kv.Key)
					}
					if !skippedOrEqual(kv.Value, full.KV[i].Value) {
						t.Errorf("%s = %s, read %s", kv.Key, kv.Value, full.KV[i].Value)
					}
				}
				want := []string{KeyTokens, "tokenizer.ggml.token_type", "tokenizer.ggml.scores", "a.u8"}
				if !reflect.DeepEqual(skipped, want) {
					t.Errorf("skipped %v, want %v", skipped, want)
				}
				if !reflect.DeepEqual(f.Tensors, full.Tensors) || f.DataOffset != full.DataOffset {
					t.Errorf("tensors or data offset differ")
				}
				v, _ := f.Get(KeyTokens)
				if _, ok := v.Strings(); ok || v.Len() != 3000 || v.ElemType() != TypeString {
					t.Errorf("skipped tokens: %s", v)
				}
				if got := v.String(); got != "[string × 3000] (not read)" {
					t.Errorf("String() = %q", got)
				}
				nested, _ := f.Get("a.nested")
				if inner := nested.Any().([]Value); !inner[1].Skipped() || inner[0].Skipped() {
					t.Errorf("a.nested = %s: the inner string array should be skipped, the array of arrays not", nested)
				}
			}
		})
	}
	// What the reader skipped the writer cannot write.
	f, _ := ReadWith(bytes.NewReader(data), int64(len(data)), Options{SkipArraysOver: SmallArray})
	if _, err := NewWriter(&bytes.Buffer{}, f.KV, nil); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "skipped") {
		t.Errorf("writing a skipped array: %v", err)
	}
}

// TestSkipHostile: with arrays skipped, the hostile inputs of
// TestHostileInputs and every cut of a file fail as they do without.
func TestSkipHostile(t *testing.T) {
	data := build(t, longArrays(50), testTensors())
	for n := range len(data) + 1 {
		cut := data[:n]
		_, err := Read(bytes.NewReader(cut), int64(n))
		for _, o := range []Options{{SkipArraysOver: 3}, {SkipArraysOver: 3, bufSize: 16, seekFrom: 1}} {
			_, serr := ReadWith(bytes.NewReader(cut), int64(n), o)
			if (err == nil) != (serr == nil) || err != nil && err.Error() != serr.Error() {
				t.Fatalf("cut at %d: skipping %v, reading %v", n, serr, err)
			}
		}
	}
	// A string inside a skipped array claiming more than the file.
	bad := header(0, 1).str(KeyTokens).u32(uint32(TypeArray)).u32(uint32(TypeString)).u64(3).str("ab").u64(1 << 50).u64(0).u16(0).Bytes()
	_, err := ReadWith(bytes.NewReader(bad), int64(len(bad)), Options{SkipArraysOver: 1})
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), `"tokenizer.ggml.tokens", element 1 of 3`) {
		t.Errorf("huge string in a skipped array: %v", err)
	}
	// The stream ends before the size it claims, inside a seeked-over run.
	long := build(t, longArrays(3000), nil)
	short := long[:len(long)/2]
	_, err = ReadWith(bytes.NewReader(short), int64(len(long)), Options{SkipArraysOver: 1, bufSize: 16, seekFrom: 1})
	if !errors.Is(err, ErrTruncated) {
		t.Errorf("short stream: %v", err)
	}
}

// TestSkipBoundedAllocation: huge claims cost no more with skipping.
func TestSkipBoundedAllocation(t *testing.T) {
	inputs := [][]byte{
		append(header(0, 1).str("k").u32(uint32(TypeArray)).u32(uint32(TypeString)).u64(1<<58).Bytes(), make([]byte, 100)...),
		append(header(0, 1).str("k").u32(uint32(TypeArray)).u32(uint32(TypeUint32)).u64(1<<38).Bytes(), make([]byte, 100)...),
		append(header(0, 1).str("k").u32(uint32(TypeArray)).u32(uint32(TypeString)).u64(8).u64(1<<62).Bytes(), make([]byte, 100)...),
	}
	for i, in := range inputs {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err := ReadWith(bytes.NewReader(in), int64(len(in)), Options{SkipArraysOver: 1})
		runtime.ReadMemStats(&after)
		if err == nil {
			t.Errorf("input %d read fine", i)
		}
		if got, limit := after.TotalAlloc-before.TotalAlloc, uint64(128<<10+64*len(in)); got > limit {
			t.Errorf("input %d: allocated %d bytes, limit %d (%v)", i, got, limit, err)
		}
	}
}

// openAllocs opens path and returns the bytes and objects the open
// allocated, and the heap still in use by its result after a collection.
func openAllocs(t testing.TB, path string, o Options) (f *File, total, mallocs uint64, live int64) {
	var before, after, kept runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f, err := OpenWith(path, o)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&kept)
	runtime.KeepAlive(f)
	return f, after.TotalAlloc - before.TotalAlloc, after.Mallocs - before.Mallocs, int64(kept.HeapInuse) - int64(before.HeapInuse)
}

// TestOpenRealVocabSkipping opens the real Qwen2 vocabulary both ways: what
// the core reads of it (architecture, context, template, quantization, the
// keys EstimateMemory reads, the vocabulary's size) is the same, at a
// fraction of the allocation. The figures are in docs/BENCHMARKS.md:
//
//	go test -run TestOpenRealVocabSkipping -v ./localmodel/gguf/
func TestOpenRealVocabSkipping(t *testing.T) {
	if _, err := os.Stat(realVocab); err != nil {
		t.Skipf("%v: run scripts/fetch-llama.sh", err)
	}
	full, fTotal, fMallocs, fLive := openAllocs(t, realVocab, Options{})
	light, lTotal, lMallocs, lLive := openAllocs(t, realVocab, Options{SkipArraysOver: SmallArray})
	t.Logf("Open:                           %10d bytes allocated, %7d objects, %10d bytes live after", fTotal, fMallocs, fLive)
	t.Logf("OpenWith(SkipArraysOver: 1024): %10d bytes allocated, %7d objects, %10d bytes live after", lTotal, lMallocs, lLive)

	for i, kv := range light.KV {
		fv := full.KV[i].Value
		if kv.Key != full.KV[i].Key || kv.Value.Type() != fv.Type() || kv.Value.ElemType() != fv.ElemType() || kv.Value.Len() != fv.Len() {
			t.Errorf("%s: %s, read in full %s", kv.Key, kv.Value, fv)
		}
		if kv.Value.Skipped() != (fv.Len() > SmallArray) {
			t.Errorf("%s skipped = %v", kv.Key, kv.Value.Skipped())
		}
		if !kv.Value.Skipped() && !reflect.DeepEqual(kv.Value.Any(), fv.Any()) {
			t.Errorf("%s: %s, read in full %s", kv.Key, kv.Value, fv)
		}
	}
	type view struct {
		Arch, Name, Quant, Template string
		Ctx, Params                 uint64
		Tokens                      int
	}
	see := func(f *File) view {
		v := view{Arch: f.Architecture(), Name: f.Name(), Quant: f.Quantization(), Params: f.ParameterCount()}
		v.Ctx, _ = f.ContextLength()
		v.Template, _ = f.ChatTemplate()
		tok, _ := f.Get(KeyTokens)
		v.Tokens = tok.Len()
		return v
	}
	if a, b := see(light), see(full); a != b || a.Tokens != 151936 || a.Arch != "qwen2" || a.Template == "" {
		t.Errorf("skipping sees %+v, reading in full %+v", a, b)
	}
	for _, k := range []string{"block_count", "attention.head_count", "attention.head_count_kv", "embedding_length"} {
		a, _ := light.Get("qwen2." + k)
		b, _ := full.Get("qwen2." + k)
		if a.Any() != b.Any() || a.Any() == nil {
			t.Errorf("qwen2.%s: %v, in full %v", k, a, b)
		}
	}
	if lTotal*8 > fTotal {
		t.Errorf("skipping allocated %d bytes, reading in full %d: expected under an eighth", lTotal, fTotal)
	}
}

// BenchmarkOpenVocab opens the real Qwen2 vocabulary in full and skipping
// its arrays:
//
//	go test -run '^$' -bench OpenVocab -benchmem ./localmodel/gguf/
func BenchmarkOpenVocab(b *testing.B) {
	if _, err := os.Stat(realVocab); err != nil {
		b.Skipf("%v: run scripts/fetch-llama.sh", err)
	}
	for _, bc := range []struct {
		name string
		o    Options
	}{{"full", Options{}}, {"skip", Options{SkipArraysOver: SmallArray}}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := OpenWith(realVocab, bc.o); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
