package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clawedge/clawedge/agent"
	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/llm"
	"github.com/clawedge/clawedge/localmodel"
	"github.com/clawedge/clawedge/localmodel/gguf"
	"github.com/clawedge/clawedge/localmodel/synth"
)

// constrainedRuns is how many seeded generations TestConstrainedProperty
// makes per form, from CLAWEDGE_CONSTRAINED_RUNS. The test takes minutes (the
// model's time, 25-100 ms a generation on the micro shape), so it is a step of
// its own in scripts/test.sh, which sets 1000, rather than part of go test ./...
func constrainedRuns(t *testing.T) int {
	s := os.Getenv("CLAWEDGE_CONSTRAINED_RUNS")
	if s == "" {
		t.Skip("set CLAWEDGE_CONSTRAINED_RUNS=1000 to run it (scripts/test.sh does)")
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		t.Fatalf("CLAWEDGE_CONSTRAINED_RUNS=%q: want a count", s)
	}
	return n
}

// TestConstrainedProperty: a random-weight model, constrained, for several
// tool sets (enums, arrays, ranges, strings needing escapes, 24 tools) and
// every form: each of the seeded generations parses, names an allowed tool,
// validates and stays within max_calls. Random weights are the harshest
// test-taker.
//
// What makes 3,750 generations cheap: the micro shape (one layer, 32 wide:
// decode reads every weight once per token, and the output matrix over the
// 151,936-token vocabulary is nearly all of them), max_calls 2 (outputs half
// as long as under the default 4, still covering the join between calls and
// the bound), and one runner per form and set, two at a time, on both cores.
func TestConstrainedProperty(t *testing.T) {
	runs := constrainedRuns(t)
	needLocalModel(t) // builds the runner
	model := synthModel(t, "micro", gguf.Q8_0, vocabFile)
	runner := filepath.Join(filepath.Dir(binPath), "clawedge-llm")
	sets := map[string][]grammar.ToolSpec{}
	for _, name := range []string{"gpio10.json", "escapes.json", "ranges.json", "many24.json"} {
		specs, err := readToolsFile(filepath.Join("..", "..", "tools", "testdata", "toolsets", name))
		if err != nil {
			t.Fatal(err)
		}
		sets[name] = specs
	}
	// The first three sets together: 14 tools, every parameter kind in one
	// grammar, the full count per form; the 24-tool set a quarter of it (its
	// tools differ only in names and ranges).
	combined := append(append(append([]grammar.ToolSpec{}, sets["gpio10.json"]...), sets["escapes.json"]...), sets["ranges.json"]...)
	for _, tc := range []struct {
		name  string
		specs []grammar.ToolSpec
		runs  int
	}{{"combined14", combined, runs}, {"many24", sets["many24.json"], max(runs/4, 1)}} {
		defs := agent.ToolDefs(tc.specs, true)
		for _, form := range []grammar.Form{grammar.FormQwen, grammar.FormCommand, grammar.FormJSON} {
			t.Run(tc.name+"/"+string(form), func(t *testing.T) {
				t.Parallel()
				c, err := localmodel.New(localmodel.Options{Model: model, Threads: 1, Context: 4096, Runner: runner})
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				spec := grammar.Spec{Form: form, Mode: grammar.ModeCalls, Tools: tc.specs, MaxCalls: 2}
				start, calls := time.Now(), 0
				for i := 0; i < tc.runs; i++ {
					ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
					text, fin, err := llm.Collect(mustStream(c.Chat(ctx, llm.Request{
						Messages:  []llm.Message{{Role: llm.RoleUser, Content: "Do something with the board."}},
						Tools:     defs,
						MaxTokens: 1024, NoThink: true, Constraint: &spec,
						Sampling: &llm.Sampling{Temperature: 1, Seed: uint64(i + 1)},
					})))
					cancel()
					verdict := checkGenerated(spec, tc.specs, text, fin, err)
					if !strings.HasPrefix(verdict, "ok") {
						t.Fatalf("%s %s seed %d: %s\noutput: %q", tc.name, form, i+1, verdict, text)
					}
					calls += strings.Count(verdict, ";") + 1
				}
				t.Logf("%s %s: %d generations, %d calls, all valid, %v per generation", tc.name, form, tc.runs, calls, time.Since(start)/time.Duration(tc.runs))
			})
		}
	}
}

// synthModel writes a random-weight model of that shape for one test.
func synthModel(t *testing.T, shapeName string, typ gguf.TensorType, vocab string) string {
	t.Helper()
	shape, err := synth.LookupShape(shapeName)
	if err != nil {
		t.Fatal(err)
	}
	m, err := synth.New(synth.Options{Shape: shape, Type: typ, Seed: 1, Vocab: vocab})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), shapeName+".gguf")
	if err := m.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	return path
}
