package synth

import (
	"os"
	"testing"

	"github.com/clawedge/clawedge/localmodel/chat"
	"github.com/clawedge/clawedge/localmodel/gguf"
)

// The qwen3 shapes carry Qwen3's added tokens in the reserved slots of the
// real vocabulary, as user-defined text tokens, and a Qwen3 chat template
// that chat.Detect reads as qwen3; the qwen2 shapes keep the vocabulary's own.
func TestQwen3VocabularyAndTemplate(t *testing.T) {
	if _, err := os.Stat(realVocab); err != nil {
		t.Skip("no real vocabulary (scripts/fetch-llama.sh)")
	}
	for _, c := range []struct {
		shape, family, token string
		typ                  int32
	}{{"qwen3-tiny", "qwen3", "<think>", tokenUserDefined}, {"tiny", "qwen2", "[PAD151667]", 0}} {
		f, err := gguf.Open(write(t, plan(t, c.shape, gguf.Q8_0), "m.gguf"))
		if err != nil {
			t.Fatal(err)
		}
		v, _ := f.Get(gguf.KeyTokens)
		tokens, _ := v.Strings()
		tv, _ := f.Get(keyTokenType)
		types, _ := tv.Any().([]int32)
		if len(tokens) != 151936 || len(types) != len(tokens) || tokens[151667] != c.token || (c.typ != 0 && types[151667] != c.typ) {
			t.Errorf("%s: %d tokens, %d types, token 151667 %q", c.shape, len(tokens), len(types), tokens[151667])
		}
		tmpl, _ := f.ChatTemplate()
		if got, err := chat.Detect(f.Architecture(), tmpl); err != nil || string(got.Family) != c.family {
			t.Errorf("%s: template read as %q (%v), want %s", c.shape, got.Family, err, c.family)
		}
	}
}
