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
	for _, tc := range []struct{ yaml, want string }{
		{"goals: {stall_after: 0}\n", "goals.stall_after"},
		{"goals: {poll: soon}\n", "goals.poll"},
		{"goals: {budget: {steps: -1}}\n", "goals.budget.steps"},
		{"goals: {budget: {money: 3}}\n", `unknown key "money"`},
	} {
		if _, err := Parse([]byte(tc.yaml), "test.yaml", envFrom(nil)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.yaml, err, tc.want)
		}
	}
}
