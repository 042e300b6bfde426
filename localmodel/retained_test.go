package localmodel

import (
	"context"
	"os"
	"runtime"
	"testing"
)

// heapInuse is the heap in use after a full collection: what the process
// keeps, not what it has not collected yet.
func heapInuse() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// A client keeps what its next turn needs, not the model's parsed header:
// Qwen's vocabulary alone (151,936 tokens, 151,387 merges) is some 14 MB of
// heap, held in the core for a model that runs in the runner.
func TestClientKeepsNoVocabulary(t *testing.T) {
	if _, err := os.Stat(vocabPath); err != nil {
		t.Skip("no vocabulary: run scripts/fetch-llama.sh")
	}
	before := heapInuse()
	c, err := New(Options{Model: vocabPath, Runner: "/nonexistent/clawedge-llm"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	held := int64(heapInuse()) - int64(before)
	if held > 2<<20 {
		t.Errorf("a client of %s holds %d KB of heap, want under 2 MB", vocabPath, held/1024)
	}
	runtime.KeepAlive(c)
}

// BenchmarkRetainedAfterTurn reports the heap the core keeps after one turn
// on the tiny model (the runner is a process of its own): retained-KB.
func BenchmarkRetainedAfterTurn(b *testing.B) {
	if runnerSkip != "" {
		b.Skip(runnerSkip)
	}
	var held int64
	for range b.N {
		before := heapInuse()
		c, err := New(Options{Model: tinyModel, Runner: runnerPath, Threads: 1, Context: 512})
		if err != nil {
			b.Fatal(err)
		}
		s, err := c.Chat(context.Background(), hello(8, greedy))
		if err != nil {
			b.Fatal(err)
		}
		for {
			ch, err := s.Next()
			if err != nil {
				b.Fatal(err)
			}
			if ch.Final != nil {
				break
			}
		}
		s.Close()
		held = int64(heapInuse()) - int64(before)
		runtime.KeepAlive(c)
		c.Close()
	}
	b.ReportMetric(float64(held)/1024, "retained-KB")
}
