package localmodel

import (
	"os"
	"runtime"
	"testing"
)

// TestNewSkipsTheVocabulary: opening a model reads its small metadata, not
// the tokenizer's arrays (152k tokens and merges in the Qwen vocabulary,
// 17.5 MB allocated and 14 MB live when decoded). The template and the
// memory estimate come out as before. Figures in docs/BENCHMARKS.md:
//
//	go test -run TestNewSkipsTheVocabulary -v ./localmodel/
func TestNewSkipsTheVocabulary(t *testing.T) {
	if _, err := os.Stat(vocabPath); err != nil {
		t.Skipf("%v: run scripts/fetch-llama.sh", err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	c, err := New(Options{Model: vocabPath, MemInfo: "/nonexistent"})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	total := after.TotalAlloc - before.TotalAlloc
	t.Logf("localmodel.New of %s: %d bytes allocated, %d objects", vocabPath, total, after.Mallocs-before.Mallocs)
	if total > 1<<20 {
		t.Errorf("New allocated %d bytes: is it decoding the vocabulary again?", total)
	}
	if c.Template().Family == "" || c.Caps().Context <= 0 || c.needErr != nil || c.need.KV == 0 {
		t.Errorf("template %+v, context %d, memory %+v (%v)", c.Template(), c.Caps().Context, c.need, c.needErr)
	}
}
