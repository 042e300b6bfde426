//go:build llamacpp

package llama

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// testdata paths: scripts/fetch-llama.sh puts the libraries and the
// vocabulary-only Qwen2 model here.
func devPaths(t *testing.T) (libDir, vocab string) {
	t.Helper()
	arch := map[string]string{"amd64": "linux-x64", "arm64": "linux-arm64"}[runtime.GOARCH]
	root := filepath.Join("..", "..", "third_party", "llama")
	libDir, vocab = filepath.Join(root, arch, "lib"), filepath.Join(root, "models", "ggml-vocab-qwen2.gguf")
	if _, err := os.Stat(vocab); err != nil {
		t.Fatalf("%v: run scripts/fetch-llama.sh first", err)
	}
	return libDir, vocab
}

func TestTokenizeRoundTrip(t *testing.T) {
	libDir, vocab := devPaths(t)
	Init(libDir, false)
	m, err := LoadModel(vocab, LoadOptions{VocabOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if n := m.VocabSize(); n != 151936 && n != 151665 && n < 151000 {
		t.Errorf("Qwen2 vocabulary has %d tokens", n)
	}
	for _, text := range []string{
		"Hello, world!",
		"Schalte das Relais ein — bitte.",
		"把继电器打开",
		"リレーをオンにして",
		"Включи свет 💡",
		"@gpio/write{pin=\"led\";value=1}",
		"  leading and trailing spaces  ",
		"",
	} {
		toks, err := m.Tokenize(text, false, false)
		if err != nil {
			t.Fatal(err)
		}
		back, err := m.Detokenize(toks, false)
		if err != nil {
			t.Fatal(err)
		}
		if back != text {
			t.Errorf("round trip %q -> %v -> %q", text, toks, back)
		}
		var pieces []byte
		for _, tok := range toks {
			pieces = append(pieces, m.Piece(tok, false)...)
		}
		if string(pieces) != text {
			t.Errorf("pieces of %q join to %q", text, pieces)
		}
	}
}

func TestSpecialTokens(t *testing.T) {
	libDir, vocab := devPaths(t)
	Init(libDir, false)
	m, err := LoadModel(vocab, LoadOptions{VocabOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	text := "<|im_start|>user\nhi<|im_end|>"
	special, _ := m.Tokenize(text, false, true)
	plain, _ := m.Tokenize(text, false, false)
	if len(special) >= len(plain) {
		t.Errorf("with special parsing %d tokens, without %d: <|im_start|> should be one token", len(special), len(plain))
	}
	if got := string(m.Piece(special[0], true)); got != "<|im_start|>" {
		t.Errorf("first special token renders as %q", got)
	}
	if got := string(m.Piece(special[0], false)); got != "" {
		t.Errorf("special token without special rendering = %q, want empty", got)
	}
	back, _ := m.Detokenize(special, true)
	if back != text {
		t.Errorf("special round trip = %q", back)
	}
}

func TestLoadErrors(t *testing.T) {
	libDir, _ := devPaths(t)
	Init(libDir, false)
	if _, err := LoadModel("/does/not/exist.gguf", LoadOptions{VocabOnly: true}); err == nil {
		t.Error("missing file loaded")
	}
	junk := filepath.Join(t.TempDir(), "junk.gguf")
	os.WriteFile(junk, []byte("this is not a gguf file at all"), 0o600)
	if _, err := LoadModel(junk, LoadOptions{VocabOnly: true}); err == nil {
		t.Error("junk file loaded")
	} else if !strings.Contains(err.Error(), "invalid magic characters") {
		t.Errorf("junk file: %v; want llama.cpp's reason (invalid magic)", err)
	}
	// A vocabulary-only file has no weights: the reason names the missing tensor.
	_, vocab := devPaths(t)
	if _, err := LoadModel(vocab, LoadOptions{}); err == nil || !strings.Contains(err.Error(), "tensor 'token_embd.weight' not found") {
		t.Errorf("weights of a vocabulary-only file: %v", err)
	}
	// The library folder is found from where libllama was loaded.
	if m, _ := filepath.Glob(filepath.Join(LibDir(), "libggml-cpu-*.so")); len(m) == 0 {
		t.Errorf("LibDir() = %s holds no ggml CPU variants", LibDir())
	}
}

func TestGrammarSampler(t *testing.T) {
	libDir, vocab := devPaths(t)
	Init(libDir, false)
	m, err := LoadModel(vocab, LoadOptions{VocabOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if _, err := m.NewGrammarSampler(`root ::= "ab" [0-9`, "root"); err == nil {
		t.Error("a broken grammar was accepted")
	}
	g, err := m.NewGrammarSampler(`root ::= "ab" [0-9]+`, "root")
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	logits := make([]float32, m.VocabSize())
	for i := range logits {
		logits[i] = float32(i%97) / 10
	}
	if best, n := g.Apply(logits[:10]); best != -1 || n != 0 {
		t.Errorf("short logits: %d, %d", best, n)
	}
	best, n := g.Apply(logits)
	if p := string(m.Piece(best, true)); n == 0 || (p != "a" && p != "ab") {
		t.Fatalf("start: best %d %q of %d allowed", best, p, n)
	}
	ab, _ := m.Tokenize("ab", false, false)
	if len(ab) != 1 {
		t.Fatalf("ab is %v", ab)
	}
	g.Accept(ab[0])
	best, n = g.Apply(logits)
	if p := m.Piece(best, true); n == 0 || len(p) == 0 || p[0] < '0' || p[0] > '9' {
		t.Errorf("after ab: best %d %q of %d allowed", best, p, n)
	}
	g.Reset()
	if best, _ := g.Apply(logits); m.Piece(best, true)[0] != 'a' {
		t.Errorf("after reset: %q", m.Piece(best, true))
	}
}

func TestTokensTable(t *testing.T) {
	libDir, vocab := devPaths(t)
	Init(libDir, false)
	m, err := LoadModel(vocab, LoadOptions{VocabOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for _, special := range []bool{true, false} {
		tt, err := m.Tokens(special)
		if err != nil {
			t.Fatal(err)
		}
		if len(tt.Off) != m.VocabSize()+1 || len(tt.Attr) != m.VocabSize() || len(tt.EOG) != m.VocabSize() {
			t.Fatalf("table sizes %d %d %d for %d tokens", len(tt.Off), len(tt.Attr), len(tt.EOG), m.VocabSize())
		}
		for i := range m.VocabSize() {
			tok := Token(i)
			if got := tt.Data[tt.Off[i]:tt.Off[i+1]]; string(got) != string(m.Piece(tok, special)) {
				t.Fatalf("token %d: %q, Piece %q", i, got, m.Piece(tok, special))
			}
			if tt.Attr[i] != m.Attr(tok) || tt.EOG[i] != m.IsEndOfGeneration(tok) {
				t.Fatalf("token %d: attr %d eog %v, want %d %v", i, tt.Attr[i], tt.EOG[i], m.Attr(tok), m.IsEndOfGeneration(tok))
			}
		}
	}
}
