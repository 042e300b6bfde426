package memory

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clawedge/clawedge/tools"
)

// benchWorkspace is a MEMORY.md of n entries made from the held-out facts with
// a varying word each, so that postings are as long as in a real memory, saved
// by ten principals in turn (telegram:40 to telegram:49).
func benchWorkspace(b *testing.B, n int) (*Workspace, []string) {
	facts, questions := readHeldOut(b)
	var sb strings.Builder
	sb.WriteString(Header)
	for i := range n {
		fmt.Fprintf(&sb, "- %s (note %d, room %d) <!-- #%d 2026-11-20 person telegram:4%d @telegram -->\n", facts[i%len(facts)], i, i%37, i+1, i%10)
	}
	w, err := Open(b.TempDir(), Limits{})
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(w.path(MemoryFile), []byte(sb.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	if _, err := w.Rebuild(); err != nil {
		b.Fatal(err)
	}
	qs := make([]string, len(questions))
	for i, q := range questions {
		qs[i] = q.q
	}
	return w, qs
}

// BenchmarkSearch10k: memory/search over 10,000 entries, the held-out
// questions in turn; it reports the p95 of one search (the issue asks ≤ 5 ms).
func BenchmarkSearch10k(b *testing.B) {
	w, qs := benchWorkspace(b, 10000)
	times := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		if _, err := w.Search(qs[i%len(qs)], 5); err != nil {
			b.Fatal(err)
		}
		times = append(times, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)*95/100].Microseconds()), "p95-µs")
}

// BenchmarkSearchAs10k: memory/search as one of the ten principals over the
// same 10,000 entries: the ranking skips the nine tenths that are others'.
func BenchmarkSearchAs10k(b *testing.B) {
	w, qs := benchWorkspace(b, 10000)
	c := tools.Caller{Channel: "telegram", User: "telegram:43", Actor: tools.Person}
	times := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		es, err := w.SearchAs(c, qs[i%len(qs)], 5)
		if err != nil {
			b.Fatal(err)
		}
		for _, e := range es {
			if e.User != "telegram:43" {
				b.Fatalf("another's entry: %v", e)
			}
		}
		times = append(times, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)*95/100].Microseconds()), "p95-µs")
}

// BenchmarkRebuild10k: reading and indexing a MEMORY.md of 10,000 entries, what
// a hand edit costs the next search.
func BenchmarkRebuild10k(b *testing.B) {
	w, _ := benchWorkspace(b, 10000)
	for b.Loop() {
		if _, err := w.Rebuild(); err != nil {
			b.Fatal(err)
		}
	}
}
