package config

import (
	"strings"
	"testing"
	"time"
)

func TestGoalsSection(t *testing.T) {
	c, err := Parse([]byte("goals: {poll: 1s, stall_after: 5, budget: {steps: 0, wall: 8h}}\n"), "test.yaml", envFrom(nil))
	if err != nil {
		t.Fatal(err)
	}
	g := c.Goals
	if time.Duration(g.Poll) != time.Second || g.StallAfter != 5 || g.Budget.Steps != 0 || time.Duration(g.Budget.Wall) != 8*time.Hour ||
		g.MaxPlans != 8 || g.Budget.Tokens != 20000 {
		t.Errorf("goals = %+v", g)
	}
	if g.MaxDepth != 3 || g.MaxAlivePerOwner != 20 || g.MaxAlive != 100 || g.Budget.Reads != 10000 {
		t.Errorf("the trees' bounds by default: %+v", g)
	}
	for _, tc := range []struct{ yaml, want string }{
		{"goals: {stall_after: 0}\n", "goals.stall_after"},
		{"goals: {poll: soon}\n", "goals.poll"},
		{"goals: {budget: {steps: -1}}\n", "goals.budget.steps"},
		{"goals: {budget: {money: 3}}\n", `unknown key "money"`},
		{"goals: {max_depth: 0}\n", "goals.max_depth"},
		{"goals: {max_depth: 11}\n", "goals.max_depth"},
		{"goals: {max_alive_per_owner: 0}\n", "goals.max_alive_per_owner"},
		{"goals: {max_alive: many}\n", "goals.max_alive"},
		{"goals: {budget: {reads: -1}}\n", "goals.budget.reads"},
		{"goals: {max_alive_per_owner: 200}\n", "test.yaml:1:30: goals.max_alive_per_owner: 200 goals alive for one owner is more than the 100 of goals.max_alive"},
		{"goals:\n  max_alive: 10\n", "test.yaml:2:14: goals.max_alive: 20 goals alive for one owner is more than the 10 of goals.max_alive"},
	} {
		if _, err := Parse([]byte(tc.yaml), "test.yaml", envFrom(nil)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.yaml, err, tc.want)
		}
	}
	// The bounds set are kept, and written back.
	c, err = Parse([]byte("goals: {max_depth: 1, max_alive_per_owner: 5, max_alive: 7, budget: {reads: 40}}\n"), "test.yaml", envFrom(nil))
	if err != nil {
		t.Fatal(err)
	}
	if g := c.Goals; g.MaxDepth != 1 || g.MaxAlivePerOwner != 5 || g.MaxAlive != 7 || g.Budget.Reads != 40 {
		t.Errorf("goals = %+v", g)
	}
	out, err := c.Redacted()
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse(out, "redacted.yaml", envFrom(nil))
	if err != nil || back.Goals != c.Goals {
		t.Errorf("written back: %+v (%v)\n%s", back.Goals, err, out)
	}
}
