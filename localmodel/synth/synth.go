// Package synth writes random-weight models in the Qwen2 and Qwen3 shapes
// that llama.cpp loads and runs: the real tokenizer (copied from a
// vocabulary GGUF), real tensor names, shapes and metadata, and weights drawn
// from a seeded generator. No trained weights can be downloaded on the build
// machines; these stand in for them in tests (tiny shapes) and speed
// benchmarks (the real Qwen2.5-0.5B shape). What they say is noise.
//
// Output is deterministic: the same options give the same bytes, on every
// architecture (the generator uses integer arithmetic and one exact
// multiplication per weight).
package synth

import (
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"strings"

	"github.com/clawedge/clawedge/internal/atomicfile"
	"github.com/clawedge/clawedge/localmodel/gguf"
)

// Shape is a model's architecture and sizes.
type Shape struct {
	Name    string
	Arch    string // general.architecture: "qwen2" or "qwen3"
	Layers  int
	Width   int // n_embd
	Heads   int
	KVHeads int
	HeadDim int // 0: Width/Heads (Qwen2); Qwen3 sets it independently
	FFN     int // feed-forward width
	Context int // trained context length
	// Tied models have no output.weight: the output layer reuses
	// token_embd.weight, as Qwen2.5-0.5B and Qwen3-0.6B do.
	Tied     bool
	RopeBase float32
	RMSEps   float32
}

var shapes = []Shape{
	// Untied, to cover output.weight; 64 wide because the embedding and
	// output matrices are vocabulary (151,936) × width.
	{Name: "tiny", Arch: "qwen2", Layers: 2, Width: 64, Heads: 4, KVHeads: 2, FFN: 128,
		Context: 4096, RopeBase: 1e6, RMSEps: 1e-6},
	// Tied, with a head size that is not Width/Heads, and the q/k norms.
	{Name: "qwen3-tiny", Arch: "qwen3", Layers: 2, Width: 64, Heads: 4, KVHeads: 2, HeadDim: 32, FFN: 128,
		Context: 4096, Tied: true, RopeBase: 1e6, RMSEps: 1e-6},
	// The shape of Qwen2.5-0.5B-Instruct.
	{Name: "qwen2.5-0.5b", Arch: "qwen2", Layers: 24, Width: 896, Heads: 14, KVHeads: 2, FFN: 4864,
		Context: 32768, Tied: true, RopeBase: 1e6, RMSEps: 1e-6},
	// The least that llama.cpp runs with the real vocabulary, for tests that
	// make thousands of generations: decode reads every weight once per
	// token, and the 151,936 × 32 output matrix is nearly all of them.
	{Name: "micro", Arch: "qwen2", Layers: 1, Width: 32, Heads: 2, KVHeads: 1, FFN: 64,
		Context: 4096, Tied: true, RopeBase: 1e6, RMSEps: 1e-6},
}

// Shapes lists the built-in shapes.
func Shapes() []Shape { return append([]Shape(nil), shapes...) }

// ShapeNames lists the built-in shapes' names.
func ShapeNames() []string {
	var names []string
	for _, s := range shapes {
		names = append(names, s.Name)
	}
	return names
}

// LookupShape returns the built-in shape of that name.
func LookupShape(name string) (Shape, error) {
	for _, s := range shapes {
		if s.Name == name {
			return s, nil
		}
	}
	return Shape{}, fmt.Errorf("unknown shape %q (have %s)", name, strings.Join(ShapeNames(), ", "))
}

func (s Shape) headDim() int {
	if s.HeadDim > 0 {
		return s.HeadDim
	}
	return s.Width / s.Heads
}

func (s Shape) check() error {
	switch {
	case s.Arch != "qwen2" && s.Arch != "qwen3":
		return fmt.Errorf("shape %s: architecture %q, want qwen2 or qwen3", s.Name, s.Arch)
	case s.Layers < 1 || s.Width < 1 || s.Heads < 1 || s.KVHeads < 1 || s.FFN < 1 || s.Context < 1:
		return fmt.Errorf("shape %s: sizes must be positive", s.Name)
	case s.Heads%s.KVHeads != 0:
		return fmt.Errorf("shape %s: %d heads do not divide into %d KV heads", s.Name, s.Heads, s.KVHeads)
	case s.HeadDim == 0 && s.Width%s.Heads != 0:
		return fmt.Errorf("shape %s: width %d is not a multiple of %d heads", s.Name, s.Width, s.Heads)
	case s.headDim()%2 != 0:
		return fmt.Errorf("shape %s: head size %d must be even for RoPE", s.Name, s.headDim())
	}
	return nil
}

// Options say what to synthesize.
type Options struct {
	Shape Shape
	// Type of the weight matrices: gguf.F16 or gguf.Q8_0 (gguf.F32 works
	// too). Matrices whose rows are not a multiple of 32 fall back to F16
	// under Q8_0, and vectors (norms, biases) are always F32, as llama.cpp's
	// own quantizer does.
	Type gguf.TensorType
	Seed uint64
	// Vocab is a GGUF file whose tokenizer.* metadata (tokens, types,
	// merges, special ids, chat template) is copied: the Qwen2 vocabulary,
	// third_party/llama/models/ggml-vocab-qwen2.gguf. A qwen3 shape gets
	// Qwen3's added tokens and chat template on top (qwen3.go).
	Vocab string
}

// Std is the standard deviation of the random weights: small enough that
// activations and logits stay finite through any number of layers of RMS
// norms and residual additions.
const Std = 0.02

// Metadata keys that mark a file as synthetic.
const (
	KeySynthetic = "clawedge.synthetic"
	KeyShape     = "clawedge.synth.shape"
	KeySeed      = "clawedge.synth.seed"
)

// Model is a planned model: its metadata and tensor table. Both may be
// edited before WriteTo (tests damage them on purpose); tensor data is made
// from the seed and each tensor's name, so it does not depend on what else
// the table holds.
type Model struct {
	KV      []gguf.KV
	Tensors []gguf.TensorInfo
	Seed    uint64
}

// New plans a model: reads the vocabulary and lays out metadata and tensors.
func New(opts Options) (*Model, error) {
	s := opts.Shape
	if err := s.check(); err != nil {
		return nil, err
	}
	var ftype gguf.FileType
	switch opts.Type {
	case gguf.F32:
		ftype = gguf.FileTypeF32
	case gguf.F16:
		ftype = gguf.FileTypeF16
	case gguf.Q8_0:
		ftype = gguf.FileTypeQ8_0
	default:
		return nil, fmt.Errorf("type %s: want F16 or Q8_0 (or F32)", opts.Type)
	}
	vocab, nVocab, err := readVocab(opts.Vocab)
	if err != nil {
		return nil, err
	}
	if s.Arch == "qwen3" {
		if vocab, err = asQwen3(vocab); err != nil {
			return nil, err
		}
	}

	a := s.Arch + "."
	u32 := func(n int) gguf.Value { return gguf.Uint32(uint32(n)) }
	kv := []gguf.KV{
		{Key: gguf.KeyArchitecture, Value: gguf.String(s.Arch)},
		{Key: "general.type", Value: gguf.String("model")},
		{Key: gguf.KeyName, Value: gguf.String("clawedge synthetic " + s.Name + " (random weights)")},
		{Key: gguf.KeyFileType, Value: gguf.Uint32(uint32(ftype))},
	}
	if opts.Type == gguf.Q8_0 {
		kv = append(kv, gguf.KV{Key: gguf.KeyQuantVersion, Value: gguf.Uint32(2)})
	}
	kv = append(kv,
		gguf.KV{Key: a + "block_count", Value: u32(s.Layers)},
		gguf.KV{Key: a + "context_length", Value: u32(s.Context)},
		gguf.KV{Key: a + "embedding_length", Value: u32(s.Width)},
		gguf.KV{Key: a + "feed_forward_length", Value: u32(s.FFN)},
		gguf.KV{Key: a + "attention.head_count", Value: u32(s.Heads)},
		gguf.KV{Key: a + "attention.head_count_kv", Value: u32(s.KVHeads)},
		gguf.KV{Key: a + "rope.freq_base", Value: gguf.Float32(s.RopeBase)},
		gguf.KV{Key: a + "attention.layer_norm_rms_epsilon", Value: gguf.Float32(s.RMSEps)},
	)
	if s.HeadDim > 0 {
		kv = append(kv,
			gguf.KV{Key: a + "attention.key_length", Value: u32(s.HeadDim)},
			gguf.KV{Key: a + "attention.value_length", Value: u32(s.HeadDim)})
	}
	kv = append(kv,
		gguf.KV{Key: KeySynthetic, Value: gguf.Bool(true)},
		gguf.KV{Key: KeyShape, Value: gguf.String(s.Name)},
		gguf.KV{Key: KeySeed, Value: gguf.Uint64(opts.Seed)},
	)
	kv = append(kv, vocab...)

	hd := uint64(s.headDim())
	w, ff, v := uint64(s.Width), uint64(s.FFN), uint64(nVocab)
	q, kvw := uint64(s.Heads)*hd, uint64(s.KVHeads)*hd
	var tensors []gguf.TensorInfo
	add := func(name string, dims ...uint64) {
		t := gguf.F32
		if len(dims) >= 2 {
			t = opts.Type
			if t == gguf.Q8_0 && dims[0]%uint64(gguf.Q8_0.BlockSize()) != 0 {
				t = gguf.F16
			}
		}
		tensors = append(tensors, gguf.TensorInfo{Name: name, Dims: dims, Type: t})
	}
	add("token_embd.weight", w, v)
	for i := range s.Layers {
		b := fmt.Sprintf("blk.%d.", i)
		add(b+"attn_norm.weight", w)
		add(b+"attn_q.weight", w, q)
		add(b+"attn_k.weight", w, kvw)
		add(b+"attn_v.weight", w, kvw)
		if s.Arch == "qwen2" {
			add(b+"attn_q.bias", q)
			add(b+"attn_k.bias", kvw)
			add(b+"attn_v.bias", kvw)
		} else {
			add(b+"attn_q_norm.weight", hd)
			add(b+"attn_k_norm.weight", hd)
		}
		add(b+"attn_output.weight", q, w)
		add(b+"ffn_norm.weight", w)
		add(b+"ffn_gate.weight", w, ff)
		add(b+"ffn_up.weight", w, ff)
		add(b+"ffn_down.weight", ff, w)
	}
	add("output_norm.weight", w)
	if !s.Tied {
		add("output.weight", w, v)
	}
	return &Model{KV: kv, Tensors: tensors, Seed: opts.Seed}, nil
}

// readVocab returns the tokenizer.* metadata of a vocabulary file and the
// number of tokens.
func readVocab(path string) ([]gguf.KV, int, error) {
	if path == "" {
		return nil, 0, errors.New("no vocabulary file given")
	}
	f, err := gguf.Open(path)
	if err != nil {
		return nil, 0, fmt.Errorf("vocabulary: %w", err)
	}
	var kv []gguf.KV
	for _, e := range f.KV {
		if strings.HasPrefix(e.Key, "tokenizer.") {
			kv = append(kv, e)
		}
	}
	v, _ := f.Get(gguf.KeyTokens)
	tokens, ok := v.Strings()
	if !ok || len(tokens) == 0 {
		return nil, 0, fmt.Errorf("vocabulary %s: no %s string array", path, gguf.KeyTokens)
	}
	return kv, len(tokens), nil
}

// WriteTo writes the model as GGUF to w, generating the weights as it goes:
// memory use is a few hundred kilobytes whatever the model's size.
func (m *Model) WriteTo(w io.Writer) (int64, error) {
	cw := &countingWriter{w: w}
	gw, err := gguf.NewWriter(cw, m.KV, m.Tensors)
	if err != nil {
		return cw.n, err
	}
	const chunk = 1 << 16 // elements generated and encoded at a time
	floats := make([]float32, chunk)
	out := make([]byte, 4*chunk)
	for _, t := range gw.Tensors() {
		if len(t.Dims) == 0 {
			return cw.n, fmt.Errorf("tensor %s has no dimensions", t.Name)
		}
		g := newGen(m.Seed, t.Name)
		fill := g.normal
		if strings.HasSuffix(t.Name, "_norm.weight") {
			fill = ones // RMS norm scales start at 1, as in a trained model
		}
		row := int(t.Dims[0])
		step := max(row, chunk/max(row, 1)*row) // whole rows, for block types
		for left := int(t.Elements()); left > 0; left -= step {
			n := min(step, left)
			if n > len(floats) {
				floats = make([]float32, n)
				out = make([]byte, 4*n)
			}
			fill(floats[:n])
			b, err := encode(out, floats[:n], t.Type)
			if err != nil {
				return cw.n, fmt.Errorf("tensor %s: %w", t.Name, err)
			}
			if _, err := gw.Write(b); err != nil {
				return cw.n, err
			}
		}
	}
	return cw.n, gw.Close()
}

// WriteFile writes the model to path through a temporary file in the same
// folder, so path is either complete or absent.
func (m *Model) WriteFile(path string) error {
	return atomicfile.WriteFunc(path, 0o644, func(w io.Writer) error {
		_, err := m.WriteTo(w)
		return err
	})
}

func encode(out []byte, x []float32, t gguf.TensorType) ([]byte, error) {
	switch t {
	case gguf.F32:
		out = out[:4*len(x)]
		for i, f := range x {
			bits := math.Float32bits(f)
			out[4*i], out[4*i+1], out[4*i+2], out[4*i+3] = byte(bits), byte(bits>>8), byte(bits>>16), byte(bits>>24)
		}
		return out, nil
	case gguf.F16:
		out = out[:2*len(x)]
		gguf.PutF16(out, x)
		return out, nil
	case gguf.Q8_0:
		out = out[:len(x)/32*34]
		return out, gguf.PutQ8_0(out, x)
	}
	return nil, fmt.Errorf("cannot generate %s data", t)
}

func ones(x []float32) {
	for i := range x {
		x[i] = 1
	}
}

// gen is a splitmix64 generator seeded from the model seed and a tensor name.
type gen struct {
	state uint64
	scale float32
}

func newGen(seed uint64, name string) *gen {
	h := fnv.New64a()
	h.Write([]byte(name))
	// √3/65536 turns the centred sum of four 16-bit uniforms (variance
	// 65536²/3) into unit variance.
	return &gen{state: seed ^ h.Sum64(), scale: float32(Std * math.Sqrt(3) / 65536)}
}

// splitmix64 advances the state and returns the next output.
func splitmix64(state *uint64) uint64 {
	*state += 0x9e3779b97f4a7c15
	z := *state
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// normal fills x with approximately normal values of standard deviation Std:
// each is the sum of four uniform 16-bit integers (Irwin-Hall), centred and
// scaled. Integer sums and one float multiplication make it bit-exact on
// every platform, which math.Log-based methods are not; the tails stop at
// 3.5σ, which weights do not miss.
func (g *gen) normal(x []float32) {
	state, scale := g.state, g.scale
	var blk [64]float32
	for len(x) > 0 {
		n := min(len(x), len(blk))
		for i := range blk[:n] {
			r := splitmix64(&state)
			s := int32(r&0xffff) + int32(r>>16&0xffff) + int32(r>>32&0xffff) + int32(r>>48) - 2*65535
			blk[i] = float32(s) * scale
		}
		copy(x, blk[:n])
		x = x[n:]
	}
	g.state = state
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
