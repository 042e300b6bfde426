package goals_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/clawedge/clawedge/goals"
	"github.com/clawedge/clawedge/llm/openai/openaitest"
	"github.com/clawedge/clawedge/tools"
)

// planner counts the plans asked for; every goal's plan is plan, every
// judgement a flat score.
func planner(srv *openaitest.Server, plan func(objective string) string) {
	srv.Default(func(r openaitest.Request) openaitest.Reply {
		if strings.HasPrefix(system(r), "You judge") {
			return score(2, "nothing changes")
		}
		_, rest, _ := strings.Cut(user(r), "\nGoal: ")
		obj, _, _ := strings.Cut(rest, "\n")
		return openaitest.Text(plan(obj))
	})
}

func planCalls(srv *openaitest.Server) int {
	n := 0
	for _, r := range srv.Requests() {
		if strings.HasPrefix(system(r), "You plan") {
			n++
		}
	}
	return n
}

// reach waits until goal id exists and is in state.
func (e *env) reach(id string, state goals.State) goals.Goal {
	e.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := e.rt.Get(id); err == nil {
			return e.until(id, state)
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("goal %s was never made:\n%s", id, goals.FormatList(e.rt.List()))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// settled waits until every goal is finished, and returns them.
func (e *env) settled() []goals.Goal {
	e.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		all := e.rt.List()
		alive := 0
		for _, g := range all {
			if !g.State.Finished() {
				alive++
			}
		}
		if alive == 0 {
			return all
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("%d of %d goals still pursued after 20 s:\n%s", alive, len(all), goals.FormatList(all))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestGoalSubGoalFanOutSpendsOneBudget: a planner that always writes two
// goal/sub steps (chained, or in one block) made 609 goals and 516 planner
// calls in 20 s from one goal with --tokens 3000 --steps 2, each sub-goal
// copying its parent's budget. Now the tree spends one budget: the root's.
func TestGoalSubGoalFanOutSpendsOneBudget(t *testing.T) {
	for name, plan := range map[string]string{
		"chain": `@goal/sub{objective="half a"} -> @goal/sub{objective="half b"}`,
		"block": `[@goal/sub{objective="half a"}, @goal/sub{objective="half b"}]`,
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, nil, goals.Options{EvaluateEvery: time.Hour})
			planner(e.srv, func(string) string { return plan })
			g, err := e.rt.Add(goals.NewGoal{Objective: "everything", Owner: owner, Budget: goals.Budget{Tokens: 3000, Steps: 2}})
			if err != nil {
				t.Fatal(err)
			}
			all := e.settled()
			time.Sleep(100 * time.Millisecond) // nothing more is planned once all ended
			g, _ = e.rt.Get(g.ID)
			t.Logf("%s: %d planner calls, %d goals, the tree spent %+v", name, planCalls(e.srv), len(all), g.Tree)
			if n := planCalls(e.srv); n > 10 {
				t.Errorf("%d planner calls, want at most 10", n)
			}
			if len(all) > 4 {
				t.Errorf("%d goals:\n%s", len(all), goals.FormatList(all))
			}
			if g.State != goals.Stopped || !strings.Contains(g.Reason, "step budget is spent (2 of 2)") {
				t.Errorf("the root ended %s (%s), want stopped by its step budget", g.State, g.Reason)
			}
			if g.Tree == nil || g.Tree.Steps > 2 || g.Tree.Plans != planCalls(e.srv) {
				t.Errorf("the tree's ledger %+v, %d planner calls", g.Tree, planCalls(e.srv))
			}
			// The reason is in goal show and in the goal's JSON.
			if show := goals.Show(g); !strings.Contains(show, "stopped (its step budget is spent (2 of 2))") {
				t.Errorf("goal show:\n%s", show)
			}
			raw, _ := json.Marshal(g)
			if !strings.Contains(string(raw), `"reason":"its step budget is spent (2 of 2)"`) || !strings.Contains(string(raw), `"tree":{`) {
				t.Errorf("the goal's JSON: %s", raw)
			}
			for _, c := range all {
				if c.Parent != "" && c.Budget != g.Budget {
					t.Errorf("sub-goal %s has a budget of its own: %+v", c.ID, c.Budget)
				}
			}
		})
	}
}

// TestGoalTreeLedgerSurvivesRestart: what a sub-goal spent is charged to
// its root's record in the store, and a restart keeps it.
func TestGoalTreeLedgerSurvivesRestart(t *testing.T) {
	e := newEnv(t, nil, goals.Options{EvaluateEvery: time.Hour})
	planner(e.srv, func(obj string) string {
		if obj == "child" {
			return `@gpio/toggle{pin="led"} -> @goal/wait{seconds=3600}`
		}
		return `@goal/sub{objective="child"}`
	})
	g, err := e.rt.Add(goals.NewGoal{Objective: "parent", Owner: owner, Deadline: time.Hour, Budget: goals.Budget{Steps: 3}})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := e.rt.Get("1.1")
		if err == nil && len(c.Steps) == 2 && c.Steps[1].State == goals.Waiting {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sub-goal never waited: %v", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	e.stop()
	raw, ok, err := e.st.Get("goals", "1")
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	var kept goals.Goal
	if err := json.Unmarshal(raw, &kept); err != nil {
		t.Fatal(err)
	}
	// The sub-goal step and the toggle: two steps, the root's own ledger one.
	if kept.Tree == nil || kept.Tree.Steps != 2 || kept.Spent.Steps != 1 || kept.Tree.Plans != 2 {
		t.Fatalf("the root's record: spent %+v, tree %+v", kept.Spent, kept.Tree)
	}
	e.start(goals.Options{Store: e.st, Runner: e.runner, Model: e.model, Poll: 10 * time.Millisecond, EvaluateEvery: time.Hour})
	c, _ := e.rt.Get("1.1")
	if !c.Deadline.Equal(g.Deadline) {
		t.Errorf("the sub-goal ends %v, its root %v: it must not get time of its own", c.Deadline, g.Deadline)
	}
	if got, _ := e.rt.Get("1"); got.Tree == nil || got.Tree.Steps != 2 {
		t.Errorf("after the restart: %+v", got.Tree)
	}
}

// TestGoalSubGoalDepthBound: a planner that always writes a sub-goal gets
// sub-goals MaxDepth deep, no deeper: the deepest is not offered goal/sub,
// its plan is refused, and it ends saying why.
func TestGoalSubGoalDepthBound(t *testing.T) {
	e := newEnv(t, nil, goals.Options{EvaluateEvery: time.Hour, MaxPlans: 2, MaxDepth: 2})
	planner(e.srv, func(string) string { return `@goal/sub{objective="deeper"}` })
	if _, err := e.rt.Add(goals.NewGoal{Objective: "dig", Owner: owner}); err != nil {
		t.Fatal(err)
	}
	deepest := e.reach("1.1.1", goals.Failed)
	if !strings.Contains(deepest.Reason, "no plan reached it after 2 plans; the last: the plan's step 1 (line 1, column 1): goal/sub: goal 1.1.1 is 2 below its root") ||
		!strings.Contains(deepest.Reason, "goals.max_depth") {
		t.Errorf("the deepest goal ended: %s", deepest.Reason)
	}
	told := 0
	for _, r := range e.srv.Requests() {
		if !strings.Contains(user(r), "No @goal/sub: ") {
			continue
		}
		told++
		if strings.Contains(user(r), "- @goal/sub{") {
			t.Errorf("goal/sub offered where it is refused:\n%s", user(r))
		}
	}
	if told == 0 {
		t.Error("no planner was told that it may not make sub-goals")
	}
	all := e.settled()
	for _, g := range all {
		if strings.Count(g.ID, ".") > 2 {
			t.Errorf("goal %s is deeper than 2", g.ID)
		}
	}
}

// TestGoalAliveBounds: an owner may have MaxAlivePerOwner goals pursued and
// the board MaxAlive, sub-goals included: a goal past them is refused, a
// plan whose sub-goals would pass them is planned again, and a sub-goal that
// no longer fits when its step starts fails the step, saying why.
func TestGoalAliveBounds(t *testing.T) {
	e := newEnv(t, nil, goals.Options{EvaluateEvery: time.Hour, MaxPlans: 2, MaxAlivePerOwner: 3, MaxAlive: 5})
	planner(e.srv, func(obj string) string {
		switch obj {
		case "fan out":
			return `[@goal/sub{objective="a"}, @goal/sub{objective="b"}, @goal/sub{objective="c"}]`
		case "later":
			return `@goal/wait{seconds=1} -> @goal/sub{objective="a"}`
		}
		return `@goal/wait{seconds=3600}`
	})
	g, err := e.rt.Add(goals.NewGoal{Objective: "fan out", Owner: owner})
	if err != nil {
		t.Fatal(err)
	}
	g = e.until(g.ID, goals.Failed)
	if !strings.Contains(g.Reason, "it would pursue 3 sub-goals at once, and 2 more may be") || !strings.Contains(g.Reason, "goals.max_alive_per_owner") {
		t.Errorf("a plan past the owner's bound: %s", g.Reason)
	}
	if n := len(e.rt.List()); n != 1 {
		t.Errorf("%d goals: a refused plan made sub-goals", n)
	}

	// A sub-goal that fitted when planned and no longer does when its
	// step starts.
	later, err := e.rt.Add(goals.NewGoal{Objective: "later", Owner: owner})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		l, _ := e.rt.Get(later.ID)
		if len(l.Steps) > 0 && l.Steps[0].State == goals.Waiting {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("never waited:\n%s", goals.Show(l))
		}
		time.Sleep(5 * time.Millisecond)
	}
	for range 2 {
		if _, err := e.rt.Add(goals.NewGoal{Objective: "wait", Owner: owner}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.rt.Add(goals.NewGoal{Objective: "wait", Owner: owner}); err == nil || !strings.Contains(err.Error(), "telegram:42 has 3 goals being pursued") || !strings.Contains(err.Error(), "goals.max_alive_per_owner") {
		t.Errorf("a fourth goal of one owner: %v", err)
	}
	later = e.until(later.ID, goals.Failed)
	if later.Steps[1].State != goals.StepFailed || !strings.Contains(later.Steps[1].Result, "no sub-goal: telegram:42 has 3 goals") {
		t.Errorf("the sub-goal step that no longer fits:\n%s", goals.Show(later))
	}
	if !strings.Contains(later.Reason, "goals.max_alive_per_owner") {
		t.Errorf("reason %q", later.Reason)
	}

	// The board's bound holds across owners.
	other := tools.Principal{Channel: "telegram", User: "telegram:7", Actor: tools.Person}
	third := tools.Principal{Channel: "telegram", User: "telegram:8", Actor: tools.Person}
	for range 3 { // with the first owner's two: 5
		if _, err := e.rt.Add(goals.NewGoal{Objective: "wait", Owner: other}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.rt.Add(goals.NewGoal{Objective: "wait", Owner: third}); err == nil || !strings.Contains(err.Error(), "5 goals are being pursued") ||
		!strings.Contains(err.Error(), "goals.max_alive)") {
		t.Errorf("past the board's bound: %v", err)
	}
}
