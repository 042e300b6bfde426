//go:build llamacpp

package agent

import (
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/clawedge/clawedge/localmodel/llama"
)

// Under the llamacpp tag, TestPromptLayoutForTheCache compares the prompts'
// tokens with the real Qwen tokenizer, as the runner does: the kept part is
// tokenized alone, and must be the first tokens of the next prompt.
func init() {
	var once sync.Once
	var vocab *llama.Model
	var loadErr error
	layoutUnits = func(t *testing.T, text string) ([]string, string) {
		t.Helper()
		once.Do(func() {
			arch := map[string]string{"amd64": "linux-x64", "arm64": "linux-arm64"}[runtime.GOARCH]
			root := filepath.Join("..", "third_party", "llama")
			path := filepath.Join(root, "models", "ggml-vocab-qwen2.gguf")
			if _, loadErr = os.Stat(path); loadErr != nil {
				return
			}
			llama.Init(filepath.Join(root, arch, "lib"), false)
			vocab, loadErr = llama.LoadModel(path, llama.LoadOptions{VocabOnly: true})
		})
		if loadErr != nil {
			t.Skipf("%v: run scripts/fetch-llama.sh first", loadErr)
		}
		toks, err := vocab.Tokenize(text, false, true)
		if err != nil {
			t.Fatal(err)
		}
		units := make([]string, len(toks))
		for i, tok := range toks {
			units[i] = string(vocab.Piece(tok, true))
		}
		return units, "token"
	}
}
