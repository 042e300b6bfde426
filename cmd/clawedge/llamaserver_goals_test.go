package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/clawedge/clawedge/goals"
)

// TestLlamaServerGoalPlans: the built daemon's goal runtime has its plans
// written by the real llama-server serving the tiny random-weight model, with
// the plan's constraint sent as a grammar (gbnf) and as a JSON Schema of calls
// (json_schema, read back as calls and written in the command language).
// Every request is accepted and each goal's one plan (goals.max_plans 1) is
// one goals.ParsePlan accepts: a plan that fails the check leaves the goal
// failed with no steps and the reason "planning: ...".
func TestLlamaServerGoalPlans(t *testing.T) {
	url := llamaServer(t)
	for _, constraint := range []string{"gbnf", "json_schema"} {
		t.Run(constraint, func(t *testing.T) {
			cfgPath, dataDir := writeConfig(t, fmt.Sprintf(`console: {stdin: false}
goals: {poll: 50ms, max_plans: 1}
models:
  remote:
    - {name: box, kind: openai, base_url: %q, model: tiny, constraint: %s, context: 2048, seed: 7}
`, url, constraint))
			log := startGoalDaemon(t, cfgPath, dataDir)
			// Three prompts (the seed is fixed: one would give one plan).
			// A rule judges, so no model judgement ends a goal before its
			// plan; a random plan may make it hold, or not.
			objectives := []string{"keep the led on", "switch the relay on and tell me", "light the led when the button is pressed"}
			n := len(objectives)
			for _, o := range objectives {
				runCLI(t, 0, "", "goal", "add", o, "--until", `@gpio/read{pin="led"} is high`, "--deadline", "10m", "--config", cfgPath)
			}
			for i := 1; i <= n; i++ {
				g := pollGoal(t, cfgPath, fmt.Sprint(i), 3*time.Minute, func(g goals.Goal) bool { return len(g.Steps) > 0 || g.State.Finished() })
				if len(g.Steps) == 0 || strings.HasPrefix(g.Reason, "planning: ") {
					t.Errorf("goal %d's plan was not accepted: %s\ndaemon log:\n%s", i, g.Reason, tail(log.String(), 4096))
					continue
				}
				t.Logf("goal %d: %d steps, %s\n%s", i, len(g.Steps), g.State, goals.Show(g))
			}
			if strings.Contains(log.String(), "HTTP 4") {
				t.Errorf("a request was refused:\n%s", tail(log.String(), 4096))
			}
		})
	}
}
