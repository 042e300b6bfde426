package config

import (
	"strconv"
	"time"

	"github.com/goccy/go-yaml/ast"
)

// Goals: how the daemon pursues goals (docs/goals.md).
//
//	goals:
//	  poll: 10s             # how often waits and conditions are looked at
//	  evaluate_every: 5m    # how often a goal is judged besides after each step
//	  stall_after: 3        # judgements without progress before a stall
//	  stall_time: 1h        # or this long without progress
//	  max_plans: 8          # plans one goal may have written
//	  max_depth: 3          # how far below its goal a sub-goal may be
//	  max_alive_per_owner: 20   # goals one owner may have pursued, sub-goals included
//	  max_alive: 100        # goals pursued on the board, sub-goals included
//	  budget: {tokens: 20000, steps: 50, wall: 0s, approvals: 20, reads: 10000}   # each goal tree's, 0: no bound
//
// Decoding and the Redacted writer are here.

// Goals configures the goal runtime.
type Goals struct {
	Poll          Duration `yaml:"poll"`
	EvaluateEvery Duration `yaml:"evaluate_every"`
	StallAfter    int      `yaml:"stall_after"`
	StallTime     Duration `yaml:"stall_time"`
	MaxPlans      int      `yaml:"max_plans"`
	// MaxDepth bounds how far below its root a sub-goal may be;
	// MaxAlivePerOwner and MaxAlive how many goals, sub-goals included, one
	// owner and the board may have being pursued.
	MaxDepth         int        `yaml:"max_depth"`
	MaxAlivePerOwner int        `yaml:"max_alive_per_owner"`
	MaxAlive         int        `yaml:"max_alive"`
	Budget           GoalBudget `yaml:"budget"`
}

// GoalBudget is what one goal tree (a goal and its sub-goals) may spend; 0
// is no bound.
type GoalBudget struct {
	Tokens    int      `yaml:"tokens"`
	Steps     int      `yaml:"steps"`
	Wall      Duration `yaml:"wall"`
	Approvals int      `yaml:"approvals"`
	Reads     int      `yaml:"reads"` // the reads of its checks (until, goal/until)
}

func defaultGoals() Goals {
	return Goals{Poll: Duration(10 * time.Second), EvaluateEvery: Duration(5 * time.Minute), StallAfter: 3,
		StallTime: Duration(time.Hour), MaxPlans: 8, MaxDepth: 3, MaxAlivePerOwner: 20, MaxAlive: 100,
		Budget: GoalBudget{Tokens: 20000, Steps: 50, Approvals: 20, Reads: 10000}}
}

var (
	goalsKeys      = []string{"poll", "evaluate_every", "stall_after", "stall_time", "max_plans", "max_depth", "max_alive_per_owner", "max_alive", "budget"}
	goalBudgetKeys = []string{"tokens", "steps", "wall", "approvals", "reads"}
)

func (d *decoder) goals(n ast.Node, g *Goals) {
	d.fields(n, "goals", goalsKeys, func(k string, v ast.Node) {
		kp := "goals." + k
		switch k {
		case "poll":
			d.duration(v, kp, &g.Poll)
		case "evaluate_every":
			d.duration(v, kp, &g.EvaluateEvery)
		case "stall_after":
			d.intIn(v, kp, &g.StallAfter, 1, 1000)
		case "stall_time":
			d.duration(v, kp, &g.StallTime)
		case "max_plans":
			d.intIn(v, kp, &g.MaxPlans, 1, 1000)
		case "max_depth":
			d.intIn(v, kp, &g.MaxDepth, 1, 10)
		case "max_alive_per_owner":
			d.intIn(v, kp, &g.MaxAlivePerOwner, 1, 10000)
		case "max_alive":
			d.intIn(v, kp, &g.MaxAlive, 1, 100000)
		case "budget":
			d.fields(v, kp, goalBudgetKeys, func(k string, v ast.Node) {
				kp := "goals.budget." + k
				switch k {
				case "tokens":
					d.intIn(v, kp, &g.Budget.Tokens, 0, 1<<30)
				case "steps":
					d.intIn(v, kp, &g.Budget.Steps, 0, 1<<20)
				case "wall":
					d.duration(v, kp, &g.Budget.Wall)
				case "approvals":
					d.intIn(v, kp, &g.Budget.Approvals, 0, 1<<20)
				case "reads":
					d.intIn(v, kp, &g.Budget.Reads, 0, 1<<30)
				}
			})
		}
	})
	if g.MaxAlivePerOwner > g.MaxAlive {
		path := "goals.max_alive_per_owner"
		if !d.has(path) {
			path = "goals.max_alive"
		}
		d.errf(path, "%d goals alive for one owner is more than the %d of goals.max_alive, which bounds all owners together", g.MaxAlivePerOwner, g.MaxAlive)
	}
}

func (c *Config) writeGoals(w *writer) {
	if c.Goals == defaultGoals() {
		return
	}
	g := c.Goals
	dur := func(d Duration) string { return time.Duration(d).String() }
	w.key(0, "goals")
	w.kv(1, "poll", dur(g.Poll))
	w.kv(1, "evaluate_every", dur(g.EvaluateEvery))
	w.kv(1, "stall_after", strconv.Itoa(g.StallAfter))
	w.kv(1, "stall_time", dur(g.StallTime))
	w.kv(1, "max_plans", strconv.Itoa(g.MaxPlans))
	w.kv(1, "max_depth", strconv.Itoa(g.MaxDepth))
	w.kv(1, "max_alive_per_owner", strconv.Itoa(g.MaxAlivePerOwner))
	w.kv(1, "max_alive", strconv.Itoa(g.MaxAlive))
	w.key(1, "budget")
	w.kv(2, "tokens", strconv.Itoa(g.Budget.Tokens))
	w.kv(2, "steps", strconv.Itoa(g.Budget.Steps))
	w.kv(2, "wall", dur(g.Budget.Wall))
	w.kv(2, "approvals", strconv.Itoa(g.Budget.Approvals))
	w.kv(2, "reads", strconv.Itoa(g.Budget.Reads))
}
