package goals_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clawedge/clawedge/goals"
	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/llm/openai/openaitest"
	"github.com/clawedge/clawedge/memory"
	"github.com/clawedge/clawedge/policy"
	"github.com/clawedge/clawedge/tools"
)

// TestGoalUntilOnlyReads: a goal's check is made at every evaluation, so it
// may only be a read (a tool of group:readonly): `until` naming gpio/toggle
// toggled the led at every evaluation, and memory/save asked for an approval
// again after every timeout. Both are refused, naming the tool; gpio/read is
// taken.
func TestGoalUntilOnlyReads(t *testing.T) {
	e := newEnv(t, nil, goals.Options{EvaluateEvery: 20 * time.Millisecond})
	e.srv.Default(judgeOrPlan(`@goal/wait{seconds=3600}`))
	ws, err := memory.Open(t.TempDir(), memory.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if err := memory.Register(e.reg, ws); err != nil {
		t.Fatal(err)
	}
	var h goals.Handle
	h.Set(e.rt)
	if err := goals.RegisterTools(e.reg, &h); err != nil {
		t.Fatal(err)
	}
	person := tools.Caller{Channel: owner.Channel, User: owner.User, Actor: tools.Person}
	add := func(until string) (string, error) {
		line := tools.CommandText("goal/add", []grammar.Param{
			{Key: "objective", Value: grammar.StringValue("check it")}, {Key: "until", Value: grammar.StringValue(until)}})
		cmd, err := grammar.Parse(line, grammar.ParseOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rep, err := e.runner.Run(context.Background(), person, cmd)
		return rep.Text(), err
	}
	for _, tc := range []struct{ until, tool string }{
		{`@gpio/toggle{pin="led"} above 5`, "gpio/toggle"},
		{`@memory/save{text="the led is on"} above 0`, "memory/save"},
	} {
		_, err := add(tc.until)
		if err == nil || !strings.Contains(err.Error(), "until") || !strings.Contains(err.Error(), tc.tool+" is not a read: it has effects") {
			t.Errorf("until %s: %v", tc.until, err)
		}
		check, err := tools.ParseReadCheck(tc.until)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.rt.Add(goals.NewGoal{Objective: "x", Owner: owner, Check: &check}); err == nil || !strings.Contains(err.Error(), tc.tool+" is not a read") {
			t.Errorf("Add with the check %s: %v", tc.until, err)
		}
	}
	time.Sleep(100 * time.Millisecond)
	if n := len(e.rt.List()); n != 0 {
		t.Errorf("%d goals set with a check that is not a read", n)
	}
	if e.level("led") != hal.Low {
		t.Error("the led toggled")
	}
	if es, err := ws.Search("", 5); err != nil || len(es) != 0 {
		t.Errorf("memory holds %v (%v)", es, err)
	}
	if out, err := add(`@gpio/read{pin="soil"} is high`); err != nil || !strings.Contains(out, "goal 1 set: check it; until @gpio/read{pin=\"soil\"} is high") {
		t.Errorf("until gpio/read: %s %v", out, err)
	}
	e.sim.Drive(27, hal.High)
	e.until("1", goals.Done)
}

// TestGoalCheckReadsCounted: every read of a check (the goal's until and a
// goal/until step's) is charged to the tree's read budget before it is
// made; past it the goal stops, saying so.
func TestGoalCheckReadsCounted(t *testing.T) {
	e := newEnv(t, nil, goals.Options{EvaluateEvery: 10 * time.Millisecond})
	e.srv.Default(judgeOrPlan(`@goal/wait{seconds=3600}`))
	check, err := tools.ParseReadCheck(`@gpio/read{pin="soil"} is high`)
	if err != nil {
		t.Fatal(err)
	}
	g, err := e.rt.Add(goals.NewGoal{Objective: "the soil is wet", Owner: owner, Check: &check, Budget: goals.Budget{Reads: 4}})
	if err != nil {
		t.Fatal(err)
	}
	g = e.until(g.ID, goals.Stopped)
	if g.Spent.Reads != 4 || !strings.Contains(g.Reason, "read budget is spent (4 checks' reads of 4)") {
		t.Errorf("spent %+v, reason %q", g.Spent, g.Reason)
	}
	reads := 0
	for _, a := range e.audited() {
		if a.Who == "goal:1" && strings.Contains(a.Command, "gpio/read") {
			reads++
		}
	}
	if reads != 4 {
		t.Errorf("%d reads in the audit, want the 4 charged", reads)
	}

	// A goal/until step's reads, in a sub-goal: charged to the root.
	e.srv.Default(func(r openaitest.Request) openaitest.Reply {
		if strings.Contains(user(r), "Goal: wait for the soil") {
			return plan(`@goal/until{read='@gpio/read{pin="soil"}';cond="is_high";value=0;seconds=3600}`)
		}
		return judgeOrPlan(`@goal/sub{objective="wait for the soil"}`)(r)
	})
	g, err = e.rt.Add(goals.NewGoal{Objective: "soil", Owner: owner, Budget: goals.Budget{Reads: 5}})
	if err != nil {
		t.Fatal(err)
	}
	g = e.until(g.ID, goals.Stopped)
	e.settled()
	sub, err := e.rt.Get(g.ID + ".1")
	if err != nil {
		t.Fatal(err)
	}
	if g.Tree == nil || g.Tree.Reads != 5 || sub.Spent.Reads != 5 || !strings.Contains(g.Reason, "its read budget is spent (5 checks' reads of 5)") || !sub.State.Finished() {
		t.Errorf("root %+v (%s), sub-goal spent %+v (%s)", g.Tree, g.Reason, sub.Spent, sub.Reason)
	}
}

// TestGoalCheckNeverAsks: a check whose read the owner's policy asks about
// would ask a person at every evaluation (and again after every timeout):
// it is refused without asking, and the goal ends saying why.
func TestGoalCheckNeverAsks(t *testing.T) {
	pol := &policy.Policy{Tools: map[string]policy.Action{"gpio/read": policy.Ask}}
	e := newEnv(t, pol, goals.Options{EvaluateEvery: 10 * time.Millisecond})
	e.srv.Default(judgeOrPlan(`@goal/wait{seconds=3600}`))
	check, err := tools.ParseReadCheck(`@gpio/read{pin="soil"} is high`)
	if err != nil {
		t.Fatal(err)
	}
	g, err := e.rt.Add(goals.NewGoal{Objective: "the soil is wet", Owner: owner, Check: &check})
	if err != nil {
		t.Fatal(err)
	}
	g = e.until(g.ID, goals.Failed)
	if !strings.Contains(g.Reason, "its check @gpio/read{pin=\"soil\"} is high cannot be read: its owner's policy asks before gpio/read, and a goal's check is read without asking") {
		t.Errorf("reason %q", g.Reason)
	}
	if len(e.auth.Approvals.List()) != 0 || strings.Contains(e.toldText(), "approve") || g.Spent.Reads != 1 {
		t.Errorf("a check asked: pending %v, told %q, reads %d", e.auth.Approvals.List(), e.toldText(), g.Spent.Reads)
	}
}

// TestGoalApprovalCountsOncePerStep: a step asked again (its approval lost
// to a restart) costs one approval and one step, not one per asking.
func TestGoalApprovalCountsOncePerStep(t *testing.T) {
	pol := &policy.Policy{Tools: map[string]policy.Action{"gpio/toggle": policy.Ask}}
	e := newEnv(t, pol, goals.Options{EvaluateEvery: time.Hour})
	e.srv.Default(judgeOrPlan(`@gpio/toggle{pin="led"}`))
	ledOn, err := tools.ParseReadCheck(`@gpio/read{pin="led"} is high`)
	if err != nil {
		t.Fatal(err)
	}
	g, err := e.rt.Add(goals.NewGoal{Objective: "toggle the led", Owner: owner, Check: &ledOn})
	if err != nil {
		t.Fatal(err)
	}
	asked := func() string {
		deadline := time.Now().Add(10 * time.Second)
		for {
			g, _ = e.rt.Get(g.ID)
			if len(g.Steps) > 0 && g.Steps[0].Waiting == "approval" && g.Steps[0].Approval != "" {
				return g.Steps[0].Approval
			}
			if time.Now().After(deadline) {
				t.Fatalf("never asked:\n%s", goals.Show(g))
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	first := asked()
	for range 2 {
		e.stop()
		e.start(goals.Options{Store: e.st, Runner: e.runner, Model: e.model, Poll: 10 * time.Millisecond, EvaluateEvery: time.Hour})
		if id := asked(); id == first {
			t.Fatalf("not asked again after the restart")
		}
	}
	if g.Spent.Approvals != 1 || g.Spent.Steps != 1 || g.Tree.Approvals != 1 {
		t.Errorf("asked three times for one step: spent %+v, tree %+v", g.Spent, g.Tree)
	}
	// The step records the request before it can be decided: wait until it can.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if slices.ContainsFunc(e.auth.Approvals.List(), func(p policy.Pending) bool { return p.ID == g.Steps[0].Approval }) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("approval %s never pending", g.Steps[0].Approval)
		}
	}
	if _, err := e.auth.Decide(g.Steps[0].Approval, true, tools.Caller{Channel: "console/stdin", User: "console", Actor: tools.Person}); err != nil {
		t.Fatal(err)
	}
	if g = e.until(g.ID, goals.Done); g.Spent.Approvals != 1 || e.level("led") != hal.High {
		t.Errorf("after the approval: spent %+v, led %s", g.Spent, e.level("led"))
	}
}
