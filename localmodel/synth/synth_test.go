package synth

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/clawedge/clawedge/localmodel/gguf"
)

// realVocab is the Qwen2 vocabulary from scripts/fetch-llama.sh; tests that
// need it skip without it (go test ./... runs before the fetch in CI).
const realVocab = "../../third_party/llama/models/ggml-vocab-qwen2.gguf"

// miniVocab writes a small GPT-2-style vocabulary of n tokens, with a chat
// template, so these tests do not depend on the fetched one.
func miniVocab(t testing.TB, n int) string {
	t.Helper()
	tokens := make([]string, n)
	types := make([]int32, n)
	for i := range tokens {
		tokens[i], types[i] = fmt.Sprintf("t%d", i), 1
	}
	tokens[n-1], types[n-1] = "<|im_end|>", 3
	kv := []gguf.KV{
		{Key: "general.architecture", Value: gguf.String("qwen2")},
		{Key: "qwen2.context_length", Value: gguf.Uint32(32768)}, // not copied: only tokenizer.*
		{Key: "tokenizer.ggml.model", Value: gguf.String("gpt2")},
		{Key: "tokenizer.ggml.pre", Value: gguf.String("qwen2")},
		{Key: "tokenizer.ggml.tokens", Value: gguf.Array(tokens)},
		{Key: "tokenizer.ggml.token_type", Value: gguf.Array(types)},
		{Key: "tokenizer.ggml.merges", Value: gguf.Array([]string{"t 1"})},
		{Key: "tokenizer.ggml.eos_token_id", Value: gguf.Uint32(uint32(n - 1))},
		{Key: "tokenizer.chat_template", Value: gguf.String("{{'<|im_start|>' + message['role']}}")},
	}
	path := filepath.Join(t.TempDir(), "vocab.gguf")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := gguf.NewWriter(f, kv, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func shape(t testing.TB, name string) Shape {
	t.Helper()
	s, err := LookupShape(name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// plan is a model of that shape over the real vocabulary, seed 1.
func plan(t *testing.T, shapeName string, typ gguf.TensorType) *Model {
	t.Helper()
	m, err := New(Options{Shape: shape(t, shapeName), Type: typ, Seed: 1, Vocab: realVocab})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// write writes a model into the test's directory.
func write(t *testing.T, m *Model, name string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := m.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	return path
}

func digest(t *testing.T, opts Options) (string, int64) {
	t.Helper()
	m, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	n, err := m.WriteTo(h)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", h.Sum(nil)), n
}

func TestDeterministic(t *testing.T) {
	vocab := miniVocab(t, 1000)
	for _, name := range []string{"tiny", "qwen3-tiny"} {
		for _, typ := range []gguf.TensorType{gguf.F16, gguf.Q8_0} {
			opts := Options{Shape: shape(t, name), Type: typ, Seed: 7, Vocab: vocab}
			a, n := digest(t, opts)
			b, _ := digest(t, opts)
			if a != b {
				t.Errorf("%s %s: two runs with seed 7 differ", name, typ)
			}
			opts.Seed = 8
			if c, _ := digest(t, opts); c == a {
				t.Errorf("%s %s: seeds 7 and 8 give the same file", name, typ)
			}
			t.Logf("%s %s: %d bytes, sha256 %s", name, typ, n, a[:16])
		}
	}
	// Pinned: a change here changes every synthesized model (and any
	// benchmark baseline made from one). Update deliberately.
	got, _ := digest(t, Options{Shape: shape(t, "tiny"), Type: gguf.Q8_0, Seed: 1, Vocab: vocab})
	if want := pinnedTinyQ8; got != want {
		t.Errorf("tiny Q8_0 seed 1 = %s, pinned %s", got, want)
	}
}

// pinnedTinyQ8 is the sha256 of tiny, Q8_0, seed 1, over the 1000-token
// vocabulary of miniVocab.
const pinnedTinyQ8 = "ffb221da098cc94c2218de722a38bd85c3a761d4b551871028a2d59a662705f2"

func TestLayout(t *testing.T) {
	vocab := miniVocab(t, 1000)
	m, err := New(Options{Shape: shape(t, "qwen3-tiny"), Type: gguf.Q8_0, Seed: 1, Vocab: vocab})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "m.gguf")
	if err := m.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if f.Architecture() != "qwen3" || f.Quantization() != "Q8_0" {
		t.Errorf("architecture %q quantization %q", f.Architecture(), f.Quantization())
	}
	if c, _ := f.ContextLength(); c != 4096 {
		t.Errorf("context %d", c)
	}
	if tmpl, ok := f.ChatTemplate(); !ok || gguf.TemplateFamily(tmpl) != "chatml" {
		t.Errorf("chat template not copied: %q", tmpl)
	}
	if v, _ := f.Get("tokenizer.ggml.tokens"); v.Len() != 1000 {
		t.Errorf("%d tokens", v.Len())
	}
	if _, ok := f.Get("qwen2.context_length"); ok {
		t.Error("non-tokenizer metadata of the vocabulary file was copied")
	}
	if v, _ := f.Get("qwen3.attention.key_length"); fmt.Sprint(v.Any()) != "32" {
		t.Errorf("key_length %v", v)
	}
	for _, name := range []string{"blk.1.attn_q_norm.weight", "blk.1.attn_k_norm.weight", "token_embd.weight", "output_norm.weight"} {
		if _, ok := f.Tensor(name); !ok {
			t.Errorf("no %s", name)
		}
	}
	for _, name := range []string{"output.weight", "blk.0.attn_q.bias"} {
		if _, ok := f.Tensor(name); ok {
			t.Errorf("qwen3-tiny has %s", name)
		}
	}
	q, _ := f.Tensor("blk.0.attn_q.weight")
	o, _ := f.Tensor("blk.0.attn_output.weight")
	if fmt.Sprint(q.Dims, o.Dims) != "[64 128] [128 64]" || q.Type != gguf.Q8_0 {
		t.Errorf("attn_q %v %s, attn_output %v", q.Dims, q.Type, o.Dims)
	}

	// The data: norms are ones, matrices N(0, 0.02) after quantization.
	raw, _ := os.ReadFile(path)
	data := func(ti gguf.TensorInfo) []byte {
		start := f.DataOffset + int64(ti.Offset)
		return raw[start : start+int64(ti.Bytes())]
	}
	norm, _ := f.Tensor("blk.0.attn_k_norm.weight")
	if norm.Type != gguf.F32 || !bytes.Equal(data(norm)[:4], []byte{0, 0, 0x80, 0x3f}) {
		t.Errorf("norm %s starts %x, want F32 ones", norm.Type, data(norm)[:4])
	}
	emb, _ := f.Tensor("token_embd.weight")
	x := make([]float32, emb.Elements())
	gguf.Q8_0Floats(x, data(emb))
	var sum, sq float64
	for _, v := range x {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) || math.Abs(float64(v)) > 4*Std {
			t.Fatalf("weight %v", v)
		}
		sum += float64(v)
		sq += float64(v) * float64(v)
	}
	mean, std := sum/float64(len(x)), math.Sqrt(sq/float64(len(x)))
	if math.Abs(mean) > 0.001 || math.Abs(std-Std) > 0.001 {
		t.Errorf("embedding mean %.5f std %.5f, want 0 and %v", mean, std, Std)
	}
}

func TestShapes(t *testing.T) {
	vocab := miniVocab(t, 151936)
	// The real Qwen2.5-0.5B has 494,032,768 parameters.
	m, err := New(Options{Shape: shape(t, "qwen2.5-0.5b"), Type: gguf.F16, Vocab: vocab})
	if err != nil {
		t.Fatal(err)
	}
	var n uint64
	for _, ti := range m.Tensors {
		n += ti.Elements()
		if ti.Name == "output.weight" {
			t.Error("qwen2.5-0.5b is tied: no output.weight")
		}
	}
	if n != 494032768 || len(m.Tensors) != 2+24*12 {
		t.Errorf("qwen2.5-0.5b: %d parameters in %d tensors, want 494032768 in %d", n, len(m.Tensors), 2+24*12)
	}
	if _, err := LookupShape("qwen9"); err == nil || !strings.Contains(err.Error(), "tiny, qwen3-tiny, qwen2.5-0.5b") {
		t.Errorf("unknown shape: %v", err)
	}
	if _, err := New(Options{Shape: shape(t, "tiny"), Type: gguf.Q4_K, Vocab: vocab}); err == nil {
		t.Error("Q4_K accepted")
	}
	if _, err := New(Options{Shape: shape(t, "tiny"), Type: gguf.F16, Vocab: "/nonexistent.gguf"}); err == nil || !strings.Contains(err.Error(), "/nonexistent.gguf") {
		t.Errorf("missing vocabulary: %v", err)
	}
	bad := shape(t, "tiny")
	bad.KVHeads = 3
	if _, err := New(Options{Shape: bad, Type: gguf.F16, Vocab: vocab}); err == nil {
		t.Error("4 heads over 3 KV heads accepted")
	}
	// A vocabulary file without tokens.
	empty := filepath.Join(t.TempDir(), "empty.gguf")
	ef, _ := os.Create(empty)
	w, _ := gguf.NewWriter(ef, nil, nil)
	w.Close()
	ef.Close()
	if _, err := New(Options{Shape: shape(t, "tiny"), Type: gguf.F16, Vocab: empty}); err == nil || !strings.Contains(err.Error(), "tokenizer.ggml.tokens") {
		t.Errorf("vocabulary without tokens: %v", err)
	}
}

// TestStreams checks that writing does not hold the model in memory.
func TestStreams(t *testing.T) {
	s := Shape{Name: "wide", Arch: "qwen2", Layers: 2, Width: 512, Heads: 8, KVHeads: 2, FFN: 2048, Context: 512, Tied: true, RopeBase: 1e4, RMSEps: 1e-6}
	m, err := New(Options{Shape: s, Type: gguf.F16, Seed: 3, Vocab: miniVocab(t, 1000)})
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	n, err := m.WriteTo(io.Discard)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(n)/4 || alloc > 4<<20 {
		t.Errorf("writing %d bytes allocated %d", n, alloc)
	}
}

func TestWriteErrors(t *testing.T) {
	vocab := miniVocab(t, 100)
	m, err := New(Options{Shape: shape(t, "tiny"), Type: gguf.F16, Vocab: vocab})
	if err != nil {
		t.Fatal(err)
	}
	m.Tensors[1].Type = gguf.Q4_K
	m.Tensors[1].Dims = []uint64{256}
	if _, err := m.WriteTo(io.Discard); err == nil || !strings.Contains(err.Error(), "cannot generate Q4_K") {
		t.Errorf("Q4_K tensor: %v", err)
	}
	dir := t.TempDir()
	if err := m.WriteFile(filepath.Join(dir, "x.gguf")); err == nil {
		t.Error("WriteFile succeeded")
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("a failed write left %v", left)
	}
}

// TestRealVocabulary plans tiny over the fetched Qwen2 vocabulary: every
// tokenizer key and the chat template come across.
func TestRealVocabulary(t *testing.T) {
	if _, err := os.Stat(realVocab); err != nil {
		t.Skipf("%v: run scripts/fetch-llama.sh", err)
	}
	src, err := gguf.Open(realVocab)
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(Options{Shape: shape(t, "tiny"), Type: gguf.F16, Vocab: realVocab})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]gguf.Value{}
	for _, kv := range m.KV {
		got[kv.Key] = kv.Value
	}
	n := 0
	for _, kv := range src.KV {
		if strings.HasPrefix(kv.Key, "tokenizer.") {
			n++
			if v, ok := got[kv.Key]; !ok || !reflect.DeepEqual(v.Any(), kv.Value.Any()) {
				t.Errorf("%s not copied: %v", kv.Key, v)
			}
		}
	}
	if n < 8 {
		t.Errorf("only %d tokenizer keys in the vocabulary", n)
	}
	if v := got["qwen2.block_count"]; fmt.Sprint(v.Any()) != "2" {
		t.Errorf("qwen2.block_count %v: the vocabulary's hyperparameters leaked in", v)
	}
	emb := m.Tensors[0]
	if emb.Name != "token_embd.weight" || emb.Dims[1] != 151936 {
		t.Errorf("embedding %+v", emb)
	}
}
