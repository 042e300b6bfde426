package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/clawedge/clawedge/goals"
	"github.com/clawedge/clawedge/llm/openai/openaitest"
)

// TestGoalConfineCLI: the built daemon, its model a planner that always
// writes two sub-goals. `goal add --tokens 3000 --steps 2` made 609 goals
// and 516 planner calls in 20 s; now the tree spends its root's one budget
// and stops, the reason in `goal show` and its JSON. `--until` takes only a
// read: gpio/toggle and memory/save are refused, naming the tool. The
// config's bound on goals alive per owner refuses one more.
func TestGoalConfineCLI(t *testing.T) {
	srv := openaitest.New(t)
	srv.Default(func(r openaitest.Request) openaitest.Reply {
		if len(r.Body.Messages) > 0 && r.Body.Messages[0].Content != nil && strings.HasPrefix(*r.Body.Messages[0].Content, "You judge") {
			return openaitest.Text(`@goal/score{score=1;reason="not yet"}`)
		}
		return openaitest.Text(`@goal/sub{objective="one half"} -> @goal/sub{objective="the other half"}`)
	})
	cfgPath, dataDir := writeConfig(t, "console: {stdin: false}\ngoals: {poll: 20ms, max_alive_per_owner: 3}\n"+remoteConfig(srv, ""))
	startGoalDaemon(t, cfgPath, dataDir)

	out := runCLI(t, 0, "", "goal", "add", "everything", "--tokens", "3000", "--steps", "2", "--config", cfgPath)
	if !strings.Contains(out, "goal 1 set: everything") {
		t.Fatalf("goal add: %s", out)
	}
	g := waitGoal(t, cfgPath, "1", goals.Stopped)
	time.Sleep(300 * time.Millisecond) // a tree still growing would plan on
	plans := 0
	for _, r := range srv.Requests() {
		if len(r.Body.Messages) > 0 && r.Body.Messages[0].Content != nil && strings.HasPrefix(*r.Body.Messages[0].Content, "You plan") {
			plans++
		}
	}
	var all []goals.Goal
	if err := json.Unmarshal([]byte(runCLI(t, 0, "", "goal", "list", "--json", "--config", cfgPath)), &all); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d planner calls, %d goals; the tree spent %+v", plans, len(all), g.Tree)
	if plans > 10 || len(all) > 4 {
		t.Errorf("%d planner calls, %d goals: want at most 10 calls", plans, len(all))
	}
	if !strings.Contains(g.Reason, "step budget is spent (2 of 2)") || g.Tree == nil || g.Tree.Steps != 2 {
		t.Errorf("goal 1: %s, tree %+v", g.Reason, g.Tree)
	}
	if show := runCLI(t, 0, "", "goal", "show", "1", "--config", cfgPath); !strings.Contains(show, "stopped (its step budget is spent (2 of 2))") {
		t.Errorf("goal show:\n%s", show)
	}

	for _, tc := range []struct{ until, tool string }{
		{`@gpio/toggle{pin="led"} above 5`, "gpio/toggle"},
		{`@memory/save{text="the led is on"} above 0`, "memory/save"},
	} {
		out := runCLI(t, 1, "", "goal", "add", "x", "--until", tc.until, "--config", cfgPath)
		if !strings.Contains(out, tc.tool+" is not a read: it has effects") {
			t.Errorf("--until %s: %s", tc.until, out)
		}
	}
	if out := runCLI(t, 0, "", "exec", "--config", cfgPath, `@gpio/read{pin="led"}`); !strings.Contains(out, "led = 0") {
		t.Errorf("the led after the refused checks: %s", out)
	}
	if out := runCLI(t, 0, "", "exec", "--config", cfgPath, `@memory/search{}`); strings.Contains(out, "the led is on") {
		t.Errorf("memory after the refused checks: %s", out)
	}

	// A check that only reads is taken; three goals alive, a fourth is not.
	srv.Default(func(openaitest.Request) openaitest.Reply { return openaitest.Text(`@goal/wait{seconds=3600}`) })
	for i := range 3 {
		out := runCLI(t, 0, "", "goal", "add", "wait", "--until", `@gpio/read{pin="led"} is high`, "--config", cfgPath)
		if !strings.Contains(out, "set: wait; until @gpio/read{pin=\"led\"} is high") {
			t.Errorf("goal %d: %s", i, out)
		}
	}
	if out := runCLI(t, 1, "", "goal", "add", "one too many", "--config", cfgPath); !strings.Contains(out, "has 3 goals being pursued, sub-goals included; at most 3 (goals.max_alive_per_owner)") {
		t.Errorf("a fourth goal: %s", out)
	}
}
