package main

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/clawedge/clawedge/goals"
	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/hal/sim"
	"github.com/clawedge/clawedge/llm"
	"github.com/clawedge/clawedge/localmodel"
	"github.com/clawedge/clawedge/localmodel/gguf"
	"github.com/clawedge/clawedge/peripherals"
	"github.com/clawedge/clawedge/tools"
)

// TestGoalPlansConstrained: the tiny local model (random weights, the
// harshest planner there is) writes CLAWEDGE_CONSTRAINED_RUNS seeded plans
// under the plan's constraint for a board's tools, every one of which
// goals.ParsePlan accepts: the grammar alone makes a plan valid. Two
// runners of one thread each (ggml's threads busy-wait), half the seeds each:
// about 80 s for 1,000 plans on two idle cores.
func TestGoalPlansConstrained(t *testing.T) {
	runs := constrainedRuns(t)
	needLocalModel(t) // builds the runner
	model := synthModel(t, "micro", gguf.Q8_0, vocabFile)
	runner := filepath.Join(filepath.Dir(binPath), "clawedge-llm")

	board, err := hal.Open(sim.New(), hal.Config{Pins: []hal.PinConfig{
		{Name: "pump", GPIO: 17, Mode: hal.ModeOut}, {Name: "fan", GPIO: 22, Mode: hal.ModeOut},
		{Name: "soil", GPIO: 27, Mode: hal.ModeIn},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer board.Close()
	reg := tools.NewRegistry()
	if err := peripherals.Register(reg, board); err != nil {
		t.Fatal(err)
	}
	pt := goals.NewPlanTools(reg.Specs(), func(name string) bool {
		tool, err := reg.Lookup(name)
		_, ok := tool.(tools.ReadOnly)
		return err == nil && ok
	})
	spec := pt.Constraint()

	for half := range 2 {
		t.Run([]string{"odd", "even"}[half], func(t *testing.T) {
			t.Parallel()
			c, err := localmodel.New(localmodel.Options{Model: model, Threads: 1, Context: 4096, Runner: runner})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			start, n, steps := time.Now(), 0, 0
			kinds := map[goals.Kind]int{}
			for seed := half + 1; seed <= runs; seed += 2 {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				text, fin, err := llm.Collect(mustStream(c.Chat(ctx, llm.Request{
					Messages: []llm.Message{{Role: llm.RoleSystem, Content: "Plan."},
						{Role: llm.RoleUser, Content: "Water the plants when the soil is dry."}},
					MaxTokens: 2048, NoThink: true, Constraint: &spec,
					Sampling: &llm.Sampling{Temperature: 1, Seed: uint64(seed)},
				})))
				cancel()
				if err != nil {
					t.Fatalf("seed %d: %v", seed, err)
				}
				if fin.Raw != "" {
					text = fin.Raw
				}
				plan, err := goals.ParsePlan(text, pt, 1)
				if err != nil {
					t.Fatalf("seed %d: the plan is not valid: %v\n%q", seed, err, text)
				}
				n++
				steps += len(plan)
				for _, s := range plan {
					kinds[s.Kind]++
				}
			}
			t.Logf("%d plans, %d steps (%v), all valid, %v a plan", n, steps, kinds, time.Since(start)/time.Duration(max(n, 1)))
		})
	}
}
