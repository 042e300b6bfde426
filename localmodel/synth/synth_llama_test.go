//go:build llamacpp

package synth

import (
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/clawedge/clawedge/localmodel/gguf"
	"github.com/clawedge/clawedge/localmodel/llama"
)

// initLlama loads the llama.cpp libraries fetched by scripts/fetch-llama.sh.
func initLlama(t *testing.T) {
	t.Helper()
	arch := map[string]string{"amd64": "linux-x64", "arm64": "linux-arm64"}[runtime.GOARCH]
	if _, err := os.Stat(realVocab); err != nil {
		t.Fatalf("%v: run scripts/fetch-llama.sh first", err)
	}
	llama.Init(filepath.Join("..", "..", "third_party", "llama", arch, "lib"), false)
}

// TestLlamaLoads is the proof that matters: llama.cpp loads the synthesized
// models, weights and all, in every tested shape and type.
func TestLlamaLoads(t *testing.T) {
	initLlama(t)
	for _, shapeName := range []string{"tiny", "qwen3-tiny"} {
		for _, typ := range []gguf.TensorType{gguf.F16, gguf.Q8_0} {
			t.Run(shapeName+"-"+typ.String(), func(t *testing.T) {
				path := write(t, plan(t, shapeName, typ), "model.gguf")
				m, err := llama.LoadModel(path, llama.LoadOptions{})
				if err != nil {
					t.Fatal(err)
				}
				defer m.Close()
				if n := m.VocabSize(); n != 151936 {
					t.Errorf("vocabulary of %d tokens", n)
				}
				toks, err := m.Tokenize("<|im_start|>user\nhi<|im_end|>", false, true)
				if err != nil || len(toks) != 5 {
					t.Errorf("tokenized to %v, %v", toks, err)
				}
			})
		}
	}
}

// TestLlamaRejectsDamage checks that the load test means something: a wrong
// architecture, a missing tensor or a wrong shape fails to load. The damaged
// files are the header of a good one rewritten, its data copied.
func TestLlamaRejectsDamage(t *testing.T) {
	initLlama(t)
	good := write(t, plan(t, "tiny", gguf.Q8_0), "good.gguf")
	if lm, err := llama.LoadModel(rewrite(t, good, func(*[]gguf.KV, *[]gguf.TensorInfo) {}), llama.LoadOptions{}); err != nil {
		t.Fatalf("an undamaged rewrite does not load: %v", err)
	} else {
		lm.Close()
	}
	setArch := func(kv []gguf.KV, arch string) {
		for i := range kv {
			if kv[i].Key == gguf.KeyArchitecture {
				kv[i].Value = gguf.String(arch)
			}
		}
	}
	for _, tc := range []struct {
		name   string
		damage func(kv *[]gguf.KV, tensors *[]gguf.TensorInfo)
	}{
		{"unknown architecture", func(kv *[]gguf.KV, _ *[]gguf.TensorInfo) { setArch(*kv, "qwen9") }},
		{"missing tensor", func(_ *[]gguf.KV, tensors *[]gguf.TensorInfo) {
			ts := *tensors
			for i, ti := range ts {
				if ti.Name == "blk.1.ffn_up.weight" {
					*tensors = append(ts[:i], ts[i+1:]...)
					return
				}
			}
			t.Fatal("no blk.1.ffn_up.weight")
		}},
		{"wrong shape", func(_ *[]gguf.KV, tensors *[]gguf.TensorInfo) {
			for i, ti := range *tensors {
				if ti.Name == "blk.0.attn_k.weight" {
					(*tensors)[i].Dims = []uint64{64, 64}
				}
			}
		}},
		{"qwen2 tensors under qwen3", func(kv *[]gguf.KV, _ *[]gguf.TensorInfo) {
			// Every key says qwen3, but there are no attn_q_norm/attn_k_norm.
			setArch(*kv, "qwen3")
			for i, e := range *kv {
				if rest, ok := strings.CutPrefix(e.Key, "qwen2."); ok {
					(*kv)[i].Key = "qwen3." + rest
				}
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if lm, err := llama.LoadModel(rewrite(t, good, tc.damage), llama.LoadOptions{}); err == nil {
				lm.Close()
				t.Fatal("llama.cpp loaded a damaged model")
			}
		})
	}
}

// rewrite copies the model at src with its metadata and tensor table edited.
// Each tensor's data comes from src's tensor of the same name if the size is
// unchanged, else it is zeros.
func rewrite(t *testing.T, src string, edit func(kv *[]gguf.KV, tensors *[]gguf.TensorInfo)) string {
	t.Helper()
	f, err := gguf.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	kv := append([]gguf.KV(nil), f.KV...)
	tensors := append([]gguf.TensorInfo(nil), f.Tensors...)
	edit(&kv, &tensors)
	path := filepath.Join(t.TempDir(), "rewritten.gguf")
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	w, err := gguf.NewWriter(out, kv, tensors)
	if err != nil {
		t.Fatal(err)
	}
	for _, ti := range w.Tensors() {
		var data io.Reader = io.LimitReader(zeroReader{}, int64(ti.Bytes()))
		if old, ok := f.Tensor(ti.Name); ok && old.Bytes() == ti.Bytes() {
			data = io.NewSectionReader(in, f.DataOffset+int64(old.Offset), int64(old.Bytes()))
		}
		if _, err := io.Copy(w, data); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
