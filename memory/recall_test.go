package memory

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
)

// readHeldOut reads the held-out set: 201 home-life facts, and questions
// about them worded as a person would ask, each naming the line of its fact.
func readHeldOut(t testing.TB) (facts []string, questions []struct {
	fact int
	q    string
}) {
	f, err := os.Open("testdata/facts.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for sc := bufio.NewScanner(f); sc.Scan(); {
		facts = append(facts, sc.Text())
	}
	q, err := os.ReadFile("testdata/questions.txt")
	if err != nil {
		t.Fatal(err)
	}
	for i, ln := range strings.Split(strings.TrimSpace(string(q)), "\n") {
		n, text, ok := strings.Cut(ln, "|")
		id, err := strconv.Atoi(n)
		if !ok || err != nil || id < 1 || id > len(facts) {
			t.Fatalf("questions.txt:%d: want FACT-LINE|question, got %q", i+1, ln)
		}
		questions = append(questions, struct {
			fact int
			q    string
		}{id, text})
	}
	return facts, questions
}

// TestRecallAt5: memory/search finds the fact a question is about among its
// first five results, by keywords alone (BM25 over stems), for at least 90% of
// the held-out questions. The figure is in docs/BENCHMARKS.md.
func TestRecallAt5(t *testing.T) {
	facts, questions := readHeldOut(t)
	if len(facts) < 200 || len(questions) < 100 {
		t.Fatalf("the held-out set has %d facts and %d questions, want at least 200 and 100", len(facts), len(questions))
	}
	w, err := Open(t.TempDir(), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString(Header)
	for _, f := range facts {
		b.WriteString("- " + f + "\n")
	}
	if err := os.WriteFile(w.path(MemoryFile), []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, q := range questions {
		es, err := w.Search(q.q, 5)
		if err != nil {
			t.Fatal(err)
		}
		hit := false
		for _, e := range es {
			// Hand-written entries get ids in file order: the fact's line.
			hit = hit || e.ID == q.fact
		}
		if hit {
			found++
		} else if testing.Verbose() {
			t.Logf("missed %d %q: %q", q.fact, q.q, facts[q.fact-1])
		}
	}
	recall := float64(found) / float64(len(questions))
	t.Logf("recall@5 = %.3f (%d of %d questions, %d facts)", recall, found, len(questions), len(facts))
	if recall < 0.9 {
		t.Errorf("recall@5 = %.3f, want at least 0.9", recall)
	}
}
