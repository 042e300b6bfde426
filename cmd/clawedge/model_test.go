package main

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawedge/clawedge/localmodel/gguf"
)

// testVocab writes a small GPT-2-style vocabulary with a ChatML template, so
// these tests do not need scripts/fetch-llama.sh.
func testVocab(t *testing.T) string {
	t.Helper()
	tokens := make([]string, 500)
	for i := range tokens {
		tokens[i] = fmt.Sprintf("t%d", i)
	}
	kv := []gguf.KV{
		{Key: "tokenizer.ggml.model", Value: gguf.String("gpt2")},
		{Key: "tokenizer.ggml.pre", Value: gguf.String("qwen2")},
		{Key: "tokenizer.ggml.tokens", Value: gguf.Array(tokens)},
		{Key: "tokenizer.chat_template", Value: gguf.String("{% for message in messages %}{{'<|im_start|>' + message['role']}}{% endfor %}")},
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

func fileSum(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", sha256.Sum256(b))
}

func TestModelSynthAndInfo(t *testing.T) {
	vocab := testVocab(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "tiny.gguf")
	got := runCLI(t, 0, "", "model", "synth", "--shape", "tiny", "--type", "q8_0", "--out", out, "--seed", "3", "--vocab", vocab)
	if !strings.Contains(got, "wrote "+out+": tiny (qwen2) Q8_0") || !strings.Contains(got, "seed 3") {
		t.Errorf("synth said %q", got)
	}

	info := runCLI(t, 0, "", "model", "info", out)
	for _, want := range []string{
		"architecture   qwen2", "quantization   Q8_0", "context        4096 tokens",
		"chat template  chatml (", "vocabulary     500 tokens (gpt2/qwen2)", "tensors        27",
		"RANDOM WEIGHTS (clawedge model synth --shape tiny --seed 3)",
	} {
		if !strings.Contains(info, want) {
			t.Errorf("info lacks %q:\n%s", want, info)
		}
	}
	var js modelInfo
	if err := json.Unmarshal([]byte(runCLI(t, 0, "", "model", "info", "--json", out)), &js); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(out)
	// 2 layers of 64-wide attention and a 128-wide FFN, embedding and output 500×64.
	wantParams := uint64(2*(64*64+64+2*(64*32+32)+64*64+3*64*128+2*64) + 2*500*64 + 64)
	if js.Architecture != "qwen2" || js.Parameters != wantParams || js.Size != st.Size() || js.Tensors != 27 ||
		js.Synthetic == nil || js.Synthetic.Seed != 3 || js.ContextLength != 4096 || js.ChatTemplate != "chatml" {
		t.Errorf("--json: %+v (want %d parameters, %d bytes)", js, wantParams, st.Size())
	}

	// Deterministic through the CLI too; a different seed differs.
	again := filepath.Join(dir, "again.gguf")
	runCLI(t, 0, "", "model", "synth", "--shape", "tiny", "--type", "q8_0", "--out", again, "--seed", "3", "--vocab", vocab)
	if fileSum(t, out) != fileSum(t, again) {
		t.Error("the same seed gave different files")
	}
	runCLI(t, 0, "", "model", "synth", "--shape", "tiny", "--type", "q8_0", "--out", again, "--seed", "4", "--vocab", vocab, "--force")
	if fileSum(t, out) == fileSum(t, again) {
		t.Error("seeds 3 and 4 gave the same file")
	}

	qwen3 := filepath.Join(dir, "qwen3.gguf")
	runCLI(t, 0, "", "model", "synth", "--shape", "qwen3-tiny", "--type", "f16", "--out", qwen3, "--vocab", vocab)
	if info := runCLI(t, 0, "", "model", "info", qwen3); !strings.Contains(info, "architecture   qwen3") || !strings.Contains(info, "quantization   F16") {
		t.Errorf("qwen3-tiny info:\n%s", info)
	}
}

func TestModelErrors(t *testing.T) {
	vocab := testVocab(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "m.gguf")

	if got := runCLI(t, 2, "", "model", "synth", "--shape", "huge", "--type", "f16", "--out", out, "--vocab", vocab); !strings.Contains(got, "tiny, qwen3-tiny, qwen2.5-0.5b") {
		t.Errorf("unknown shape: %q", got)
	}
	if got := runCLI(t, 2, "", "model", "synth", "--shape", "tiny", "--type", "q4_k", "--out", out, "--vocab", vocab); !strings.Contains(got, "want f16 or q8_0") {
		t.Errorf("unknown type: %q", got)
	}
	if got := runCLI(t, 1, "", "model", "synth", "--shape", "tiny", "--type", "f16"); !strings.Contains(got, `"out" not set`) {
		t.Errorf("no --out: %q", got)
	}
	// runCLI runs in an empty folder and the test binary is in a temporary
	// one: there is no vocabulary to find.
	if got := runCLI(t, 1, "", "model", "synth", "--shape", "tiny", "--type", "f16", "--out", out); !strings.Contains(got, "no Qwen2 vocabulary found") || !strings.Contains(got, "--vocab") {
		t.Errorf("no vocabulary: %q", got)
	}
	if got := runCLI(t, 1, "", "model", "synth", "--shape", "tiny", "--type", "f16", "--out", out, "--vocab", filepath.Join(dir, "nope.gguf")); !strings.Contains(got, "nope.gguf") {
		t.Errorf("missing vocabulary: %q", got)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a failed synth left a file")
	}
	runCLI(t, 0, "", "model", "synth", "--shape", "tiny", "--type", "f16", "--out", out, "--vocab", vocab)
	if got := runCLI(t, 1, "", "model", "synth", "--shape", "tiny", "--type", "f16", "--out", out, "--vocab", vocab); !strings.Contains(got, "--force") {
		t.Errorf("overwrite without --force: %q", got)
	}

	junk := filepath.Join(dir, "junk.gguf")
	os.WriteFile(junk, []byte("#!/bin/sh\necho not a model\n"), 0o600)
	if got := runCLI(t, 1, "", "model", "info", junk); !strings.Contains(got, junk) || !strings.Contains(got, "not a GGUF file") {
		t.Errorf("info on junk: %q", got)
	}
	whole, _ := os.ReadFile(out)
	cut := filepath.Join(dir, "cut.gguf")
	os.WriteFile(cut, whole[:len(whole)/2], 0o600)
	if got := runCLI(t, 1, "", "model", "info", cut); !strings.Contains(got, cut) || !strings.Contains(got, "outside the file") {
		t.Errorf("info on a cut file: %q", got)
	}
	os.WriteFile(cut, whole[:300], 0o600)
	if got := runCLI(t, 1, "", "model", "info", cut); !strings.Contains(got, "truncated") {
		t.Errorf("info on a file cut in its header: %q", got)
	}
	if got := runCLI(t, 1, "", "model", "info"); !strings.Contains(got, "accepts 1 arg") {
		t.Errorf("info without a file: %q", got)
	}
}

func TestFindVocab(t *testing.T) {
	root := t.TempDir()
	// A source checkout: found from a folder inside it.
	src := filepath.Join(root, "src")
	models := filepath.Join(src, "third_party", "llama", "models")
	os.MkdirAll(models, 0o755)
	os.MkdirAll(filepath.Join(src, "cmd", "clawedge"), 0o755)
	os.WriteFile(filepath.Join(models, vocabName), []byte("x"), 0o644)
	if got, _ := findVocab(filepath.Join(src, "cmd", "clawedge"), ""); got != filepath.Join(models, vocabName) {
		t.Errorf("from inside the checkout: %q", got)
	}
	// bin/clawedge of `make`, run from elsewhere: the tree it was built in.
	if got, _ := findVocab(t.TempDir(), filepath.Join(src, "bin", "clawedge")); got != filepath.Join(models, vocabName) {
		t.Errorf("bin/clawedge run from outside its checkout: %q", got)
	}
	// An installed layout: PREFIX/bin/clawedge and PREFIX/share/clawedge/.
	prefix := filepath.Join(root, "usr")
	os.MkdirAll(filepath.Join(prefix, "share", "clawedge"), 0o755)
	os.WriteFile(filepath.Join(prefix, "share", "clawedge", vocabName), []byte("x"), 0o644)
	if got, _ := findVocab(root, filepath.Join(prefix, "bin", "clawedge")); got != filepath.Join(prefix, "share", "clawedge", vocabName) {
		t.Errorf("installed: %q", got)
	}
	got, tried := findVocab(root, filepath.Join(root, "bin", "clawedge"))
	if got != "" || len(tried) < 2 || !strings.HasSuffix(tried[len(tried)-1], filepath.Join("share", "clawedge", vocabName)) {
		t.Errorf("nowhere: %q, tried %v", got, tried)
	}
}

// TestModelSynthRealVocabulary runs synth from the repository root with the
// default vocabulary, the way a developer does after scripts/fetch-llama.sh.
func TestModelSynthRealVocabulary(t *testing.T) {
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	if _, err := os.Stat(filepath.Join(root, "third_party", "llama", "models", vocabName)); err != nil {
		t.Skipf("%v: run scripts/fetch-llama.sh", err)
	}
	out := filepath.Join(t.TempDir(), "tiny.gguf")
	cmd := exec.Command(binPath, "model", "synth", "--shape", "qwen3-tiny", "--type", "q8_0", "--out", out)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	info := runCLI(t, 0, "", "model", "info", out)
	if !strings.Contains(info, "vocabulary     151936 tokens (gpt2/qwen2)") || !strings.Contains(info, "chat template  chatml") {
		t.Errorf("info:\n%s", info)
	}
}
