package goals_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/clawedge/clawedge/agent/agenttest"
	"github.com/clawedge/clawedge/goals"
	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/llm"
	"github.com/clawedge/clawedge/llm/openai"
	"github.com/clawedge/clawedge/llm/openai/openaitest"
	"github.com/clawedge/clawedge/llm/remote"
	"github.com/clawedge/clawedge/policy"
	"github.com/clawedge/clawedge/tools"
)

func system(r openaitest.Request) string {
	if len(r.Body.Messages) == 0 || r.Body.Messages[0].Content == nil {
		return ""
	}
	return *r.Body.Messages[0].Content
}

func user(r openaitest.Request) string {
	if len(r.Body.Messages) < 2 || r.Body.Messages[1].Content == nil {
		return ""
	}
	return *r.Body.Messages[1].Content
}

// TestGoalTwoStepPlanToDone: the scripted model writes a two-step plan, the
// steps run on the call path as the goal for its owner, the model judges
// after each, and the goal is done at the second judgement.
func TestGoalTwoStepPlanToDone(t *testing.T) {
	e := newEnv(t, nil, goals.Options{EvaluateEvery: time.Hour})
	e.srv.Push(
		plan(`@gpio/write{pin="led";value=1} -> @gpio/write{pin="relay";value=1}`),
		score(4, "the led is on"),
		score(9, "both are on"),
	)
	g, err := e.rt.Add(goals.NewGoal{Objective: "switch the led and the relay on", Owner: owner})
	if err != nil {
		t.Fatal(err)
	}
	g = e.until(g.ID, goals.Done)
	if e.level("led") != hal.High || e.level("relay") != hal.High {
		t.Errorf("led %s, relay %s: both should be on", e.level("led"), e.level("relay"))
	}
	if len(g.Steps) != 2 || g.Steps[0].State != goals.StepDone || g.Steps[1].State != goals.StepDone {
		t.Fatalf("steps:\n%s", goals.Show(g))
	}
	if len(g.Steps[1].After) != 1 || g.Steps[1].After[0] != 1 {
		t.Errorf("step 2 comes after %v, want [1]", g.Steps[1].After)
	}
	// Each step moved through the states in order, each move recorded.
	var moved []string
	for _, m := range g.Steps[0].Moves {
		moved = append(moved, string(m.To))
	}
	if got := strings.Join(moved, ","); got != "ready,running,done" {
		t.Errorf("step 1 moved %s, want ready,running,done", got)
	}
	if len(g.Evaluations) != 2 || g.Evaluations[1].Score != 0.9 || !strings.HasPrefix(g.Evaluations[1].By, "model") {
		t.Errorf("evaluations %+v", g.Evaluations)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3 (plan, judge, judge)", len(reqs))
	}
	if !strings.Contains(system(reqs[0]), "@goal/wait") || !strings.Contains(user(reqs[0]), "switch the led and the relay on") {
		t.Errorf("the plan request: %q / %q", system(reqs[0]), user(reqs[0]))
	}
	if !strings.Contains(user(reqs[2]), `@gpio/write{pin="led";value=1}: done`) {
		t.Errorf("the judge is not shown what was done: %q", user(reqs[2]))
	}
	// The audit has each call's intent and outcome, made as the goal's step.
	var who []string
	for _, a := range e.audited() {
		if strings.HasPrefix(a.Who, "goal:") {
			who = append(who, a.Who+" "+a.Command)
		}
	}
	if got := strings.Join(who, "\n"); !strings.Contains(got, `goal:1 step 1 @gpio/write{pin="led";value=1}`) ||
		!strings.Contains(got, `goal:1 step 2 @gpio/write{pin="relay";value=1}`) {
		t.Errorf("audit:\n%s", got)
	}
	if told := e.toldWith("goal 1 done"); !strings.Contains(told, "telegram:42: goal 1 done") || !strings.Contains(told, "2 of 2 steps done") {
		t.Errorf("the owner was told:\n%s", told)
	}
	show := goals.Show(g)
	for _, want := range []string{"1. [done] @gpio/write{pin=\"led\";value=1}", "2. [done]", "evaluations:", "90% by model lan", "spent: 1 plans, 2 steps"} {
		if !strings.Contains(show, want) {
			t.Errorf("goal show lacks %q:\n%s", want, show)
		}
	}
}

// TestGoalPinRuleFinishes: a goal whose success rule is a pin level is done
// when the pin reads so; the rule decides, no model judges.
func TestGoalPinRuleFinishes(t *testing.T) {
	e := newEnv(t, nil, goals.Options{EvaluateEvery: 20 * time.Millisecond})
	check, err := tools.ParseReadCheck(`@gpio/read{pin="soil"} is high`)
	if err != nil {
		t.Fatal(err)
	}
	e.srv.Push(plan(`@gpio/write{pin="led";value=1} -> @goal/until{read='@gpio/read{pin="soil"}';cond="is_high";value=0;seconds=60}`))
	g, err := e.rt.Add(goals.NewGoal{Objective: "wait for the soil sensor", Owner: owner, Check: &check})
	if err != nil {
		t.Fatal(err)
	}
	// The plan runs its first step and waits on the condition.
	deadline := time.Now().Add(10 * time.Second)
	for {
		g, _ = e.rt.Get(g.ID)
		if len(g.Steps) == 2 && g.Steps[1].State == goals.Waiting && g.Steps[1].Waiting == "condition" {
			break
		}
		if time.Now().After(deadline) || g.State.Finished() {
			t.Fatalf("never waited on the condition:\n%s", goals.Show(g))
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	if g, _ = e.rt.Get(g.ID); g.State != goals.Active {
		t.Fatalf("done before the pin is high:\n%s", goals.Show(g))
	}
	e.sim.Drive(27, hal.High)
	g = e.until(g.ID, goals.Done)
	last := g.Evaluations[len(g.Evaluations)-1]
	if last.By != "rule" || last.Score != 1 || !strings.Contains(g.Reason, `@gpio/read{pin="soil"} read 1: is high`) {
		t.Errorf("finished by %+v, reason %q", last, g.Reason)
	}
	if n := len(e.srv.Requests()); n != 1 {
		t.Errorf("%d model requests, want only the plan: the rule judges", n)
	}
}

// judgeOrPlan answers judgements with a flat score and plans with planText.
func judgeOrPlan(planText string) func(openaitest.Request) openaitest.Reply {
	return func(r openaitest.Request) openaitest.Reply {
		if strings.HasPrefix(system(r), "You judge") {
			return score(2, "nothing changes")
		}
		return plan(planText)
	}
}

// TestGoalStallReplansOnceThenEscalates: a goal that makes no progress
// stalls, is re-planned once, and then goes to its owner.
func TestGoalStallReplansOnceThenEscalates(t *testing.T) {
	clock := newFakeClock(time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC))
	e := newEnv(t, nil, goals.Options{Clock: clock, Poll: 10 * time.Second, EvaluateEvery: time.Hour, StallAfter: 2, MaxPlans: 20})
	e.srv.Default(judgeOrPlan(`@goal/wait{seconds=1}`))
	g, err := e.rt.Add(goals.NewGoal{Objective: "make the weather nicer", Owner: owner})
	if err != nil {
		t.Fatal(err)
	}
	e.run(clock, clock.Now().Add(24*time.Hour), func() bool { g, _ := e.rt.Get("1"); return g.State.Finished() })
	g = e.until(g.ID, goals.Stalled)
	stalledPlans := 0
	for _, r := range e.srv.Requests() {
		if strings.Contains(user(r), "it stalled") {
			stalledPlans++
		}
	}
	if stalledPlans != 1 {
		t.Errorf("%d re-plans after a stall, want exactly 1", stalledPlans)
	}
	if g.Stalls != 1 || !strings.Contains(g.Reason, "needs you") {
		t.Errorf("stalls %d, reason %q", g.Stalls, g.Reason)
	}
	if told := e.toldWith("goal 1 stalled"); !strings.Contains(told, "telegram:42: goal 1 stalled") {
		t.Errorf("the owner was not told:\n%s", told)
	}
}

// TestGoalStallEscalatesToRemoteModel: with an escalation model, the second
// stall hands the planning to it before the owner is bothered.
func TestGoalStallEscalatesToRemoteModel(t *testing.T) {
	big := openaitest.New(t)
	bigModel, err := openai.New(openai.Options{Options: remote.Options{Name: "big", BaseURL: big.URL, Model: "big"}})
	if err != nil {
		t.Fatal(err)
	}
	big.Default(judgeOrPlan(`@goal/wait{seconds=1}`))
	clock := newFakeClock(time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC))
	e := newEnv(t, nil, goals.Options{Clock: clock, Poll: 10 * time.Second, EvaluateEvery: time.Hour, StallAfter: 1, MaxPlans: 20, Escalation: bigModel})
	e.srv.Default(judgeOrPlan(`@goal/wait{seconds=1}`))
	g, err := e.rt.Add(goals.NewGoal{Objective: "make the weather nicer", Owner: owner})
	if err != nil {
		t.Fatal(err)
	}
	e.run(clock, clock.Now().Add(24*time.Hour), func() bool { g, _ := e.rt.Get("1"); return g.State.Finished() })
	g = e.until(g.ID, goals.Stalled)
	if !g.Escalated || g.Stalls != 2 {
		t.Errorf("escalated %v, stalls %d", g.Escalated, g.Stalls)
	}
	if n := len(big.Requests()); n == 0 || !strings.Contains(user(big.Requests()[0]), "it stalled") {
		t.Errorf("the escalation model got %d requests", n)
	}
	if told := e.toldWith("goal 1 stalled"); !strings.Contains(told, "the plan goes to big") || !strings.Contains(told, "goal 1 stalled") {
		t.Errorf("the owner was told:\n%s", told)
	}
}

// TestGoalDeadlineStops: at its deadline a goal stops and reports.
func TestGoalDeadlineStops(t *testing.T) {
	e := newEnv(t, nil, goals.Options{EvaluateEvery: time.Hour})
	e.srv.Push(plan(`@gpio/write{pin="led";value=1} -> @goal/wait{seconds=3600} -> @gpio/write{pin="led";value=0}`))
	g, err := e.rt.Add(goals.NewGoal{Objective: "keep the led on for an hour", Owner: owner, Deadline: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	g = e.until(g.ID, goals.Stopped)
	if !strings.HasPrefix(g.Reason, "its deadline passed (2s) before it was reached") || !strings.HasSuffix(g.Reason, "; 1 plan, 1 call") || g.Steps[0].State != goals.StepDone || g.Steps[1].State != goals.StepCancelled || g.Steps[2].State != goals.StepCancelled {
		t.Errorf("reason %q:\n%s", g.Reason, goals.Show(g))
	}
	if e.level("led") != hal.High {
		t.Error("the step after the deadline ran")
	}
	if told := e.toldWith("goal 1 stopped"); !strings.Contains(told, "goal 1 stopped") || !strings.Contains(told, "1 of 3 steps done") {
		t.Errorf("the owner was told:\n%s", told)
	}
}

// TestGoalStepBudgetStops: a step budget ends a goal like its deadline.
func TestGoalStepBudgetStops(t *testing.T) {
	e := newEnv(t, nil, goals.Options{EvaluateEvery: time.Hour})
	e.srv.Default(judgeOrPlan(`@gpio/toggle{pin="led"} -> @gpio/toggle{pin="led"} -> @gpio/toggle{pin="led"}`))
	g, err := e.rt.Add(goals.NewGoal{Objective: "blink", Owner: owner, Budget: goals.Budget{Steps: 2}})
	if err != nil {
		t.Fatal(err)
	}
	g = e.until(g.ID, goals.Stopped)
	if g.Spent.Steps != 2 || !strings.Contains(g.Reason, "step budget") {
		t.Errorf("spent %d steps, reason %q", g.Spent.Steps, g.Reason)
	}
}

// TestGoalAddSetsItsOwnBudget: goal/add's steps bound that goal, and the
// bounds it leaves out come from the runtime's budget (goals.budget).
func TestGoalAddSetsItsOwnBudget(t *testing.T) {
	e := newEnv(t, nil, goals.Options{EvaluateEvery: time.Hour, Budget: goals.Budget{Steps: 50, Tokens: 20000, Approvals: 3}})
	e.srv.Default(judgeOrPlan(`@gpio/toggle{pin="led"} -> @gpio/toggle{pin="led"} -> @gpio/toggle{pin="led"}`))
	var h goals.Handle
	h.Set(e.rt)
	if err := goals.RegisterTools(e.reg, &h); err != nil {
		t.Fatal(err)
	}
	cmd, err := grammar.Parse(`@goal/add{objective="blink";steps=2}`, grammar.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.runner.Run(context.Background(), tools.Caller{Channel: owner.Channel, User: owner.User, Actor: tools.Person}, cmd); err != nil {
		t.Fatal(err)
	}
	g := e.until("1", goals.Stopped)
	if g.Spent.Steps != 2 || !strings.Contains(g.Reason, "step budget") {
		t.Errorf("spent %d steps, reason %q", g.Spent.Steps, g.Reason)
	}
	if want := (goals.Budget{Steps: 2, Tokens: 20000, Approvals: 3}); g.Budget != want {
		t.Errorf("budget %+v, want %+v", g.Budget, want)
	}
	cmd, err = grammar.Parse(`@goal/add{objective="blink";steps=0}`, grammar.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.runner.Run(context.Background(), tools.Caller{Channel: owner.Channel, User: owner.User, Actor: tools.Person}, cmd); err == nil || !strings.Contains(err.Error(), "steps") {
		t.Errorf("a budget of 0 steps: %v", err)
	}
}

// TestGoalNeverExceedsOwnersRights: a goal's call is decided as its owner's
// model: what the owner may not call is refused (blocked, never run), and
// what the owner's rules ask about waits for a person's approval.
func TestGoalNeverExceedsOwnersRights(t *testing.T) {
	pol := &policy.Policy{
		Users: map[string]map[string]policy.Action{"telegram:42": {"gpio/write": policy.Deny}},
		Tools: map[string]policy.Action{"gpio/toggle": policy.Ask},
	}
	// Without offering by the policy (a plan written by anyone), the call
	// path still refuses.
	e := newEnv(t, pol, goals.Options{EvaluateEvery: time.Hour, MaxPlans: 2})
	e.srv.Default(judgeOrPlan(`@gpio/write{pin="relay";value=1}`))
	g, err := e.rt.Add(goals.NewGoal{Objective: "switch the relay on", Owner: owner})
	if err != nil {
		t.Fatal(err)
	}
	g = e.until(g.ID, goals.Failed)
	if e.level("relay") != hal.Low {
		t.Error("the relay was switched by a goal whose owner may not write pins")
	}
	if g.Steps[0].State != goals.Blocked || !strings.Contains(g.Steps[0].Result, "policy.users.telegram:42") {
		t.Errorf("step 1:\n%s", goals.Show(g))
	}
	for _, a := range e.audited() {
		if strings.Contains(a.Command, "gpio/write") && a.OK {
			t.Errorf("audit has a run write: %+v", a)
		}
	}

	// Ask: the step waits for the approval, the owner is told how to give
	// it, and a person's approval runs it. The rule (the led is high) ends
	// the goal after that one step: judged by a model instead, a "not yet"
	// would re-plan, and the next toggle would ask again before the counts
	// below are read.
	e.srv.Default(judgeOrPlan(`@gpio/toggle{pin="led"}`))
	ledOn, err := tools.ParseReadCheck(`@gpio/read{pin="led"} is high`)
	if err != nil {
		t.Fatal(err)
	}
	g, err = e.rt.Add(goals.NewGoal{Objective: "toggle the led", Owner: owner, Check: &ledOn})
	if err != nil {
		t.Fatal(err)
	}
	var id string
	deadline := time.Now().Add(10 * time.Second)
	for id == "" {
		g, _ = e.rt.Get(g.ID)
		if len(g.Steps) > 0 && g.Steps[0].State == goals.Waiting && g.Steps[0].Waiting == "approval" {
			id = g.Steps[0].Approval
		}
		if time.Now().After(deadline) {
			t.Fatalf("never asked:\n%s", goals.Show(g))
		}
		time.Sleep(5 * time.Millisecond)
	}
	if e.level("led") != hal.Low {
		t.Fatal("the led toggled before the approval")
	}
	if !strings.Contains(e.toldWith("approve "+id), "approve "+id) {
		t.Errorf("the owner was not told how to approve:\n%s", e.toldText())
	}
	if _, err := e.auth.Decide(id, true, tools.Caller{Channel: "console/stdin", User: "console", Actor: tools.Person}); err != nil {
		t.Fatal(err)
	}
	g = e.until(g.ID, goals.Done)
	if g.Steps[0].State != goals.StepDone {
		t.Fatalf("not run after the approval:\n%s", goals.Show(g))
	}
	if e.level("led") != hal.High || g.Spent.Approvals != 1 {
		t.Errorf("led %s, approvals %d", e.level("led"), g.Spent.Approvals)
	}
}

// TestGoalPlanOffersOnlyOwnersTools: the plan's tools are those the
// policy would offer the owner's model; a plan naming another is refused
// before anything runs.
func TestGoalPlanOffersOnlyOwnersTools(t *testing.T) {
	pol := &policy.Policy{Users: map[string]map[string]policy.Action{"telegram:42": {"gpio/write": policy.Deny}}}
	e := newEnv(t, pol, goals.Options{EvaluateEvery: time.Hour, MaxPlans: 1, Offered: pol.Offered})
	e.srv.Default(judgeOrPlan(`@gpio/write{pin="relay";value=1}`))
	g, err := e.rt.Add(goals.NewGoal{Objective: "switch the relay on", Owner: owner})
	if err != nil {
		t.Fatal(err)
	}
	g = e.until(g.ID, goals.Failed)
	prompt := user(e.srv.Requests()[0])
	if strings.Contains(prompt, "@gpio/write{") || !strings.Contains(prompt, "@gpio/toggle{pin=led|relay}") {
		t.Errorf("the plan's tools:\n%s", prompt)
	}
	if len(g.Steps) != 0 || !strings.Contains(g.Reason, "no plan") {
		t.Errorf("reason %q, steps %d", g.Reason, len(g.Steps))
	}
	for _, a := range e.audited() {
		if strings.Contains(a.Command, "gpio/write") {
			t.Errorf("a refused plan reached the call path: %+v", a)
		}
	}
}

// TestGoalRecoversAfterCrash: a step left running by a crash is failed and
// never run again; a wait resumes with its end kept; a lost approval is
// asked again.
func TestGoalRecoversAfterCrash(t *testing.T) {
	e := newEnv(t, nil, goals.Options{EvaluateEvery: time.Hour})
	e.stop()
	now := time.Now()
	running := goals.Goal{ID: "7", Objective: "recover", Owner: owner, State: goals.Active, Created: now, Updated: now, Progress: now,
		Spent: goals.Spent{Plans: 1, Steps: 1},
		Steps: []goals.Step{{ID: 1, Kind: goals.KindCall, Command: `@gpio/write{pin="relay";value=1}`, State: goals.Running}}}
	waiting := goals.Goal{ID: "8", Objective: "wait", Owner: owner, State: goals.Active, Created: now, Updated: now, Progress: now,
		Spent: goals.Spent{Plans: 1, Steps: 1},
		Steps: []goals.Step{
			{ID: 1, Kind: goals.KindCall, Command: `@gpio/write{pin="led";value=1}`, State: goals.StepDone},
			{ID: 2, Kind: goals.KindWait, Command: `@goal/wait{seconds=3600}`, After: []int{1}, State: goals.Waiting, Waiting: "time", Seconds: 3600, Ends: now.Add(time.Hour)},
		}}
	for _, g := range []goals.Goal{running, waiting} {
		raw, _ := json.Marshal(g)
		if err := e.st.Put("goals", g.ID, raw); err != nil {
			t.Fatal(err)
		}
	}
	e.srv.Default(judgeOrPlan(`@goal/wait{seconds=3600}`))
	e.start(goals.Options{Store: e.st, Runner: e.runner, Model: e.model, Poll: 10 * time.Millisecond, EvaluateEvery: time.Hour})
	got, err := e.rt.Get("7")
	if err != nil {
		t.Fatal(err)
	}
	if got.Steps[0].State != goals.StepFailed || got.Steps[0].Result != goals.Interrupted {
		t.Errorf("the running step after a restart:\n%s", goals.Show(got))
	}
	time.Sleep(100 * time.Millisecond)
	if e.level("relay") != hal.Low {
		t.Error("the interrupted step was repeated")
	}
	for _, a := range e.audited() {
		if strings.Contains(a.Command, "relay") {
			t.Errorf("the interrupted step reached the call path: %+v", a)
		}
	}
	// The interrupted goal goes on with a new plan, told why.
	if got, _ = e.rt.Get("7"); got.State != goals.Active || len(got.Steps) != 2 || got.Steps[1].Command != `@goal/wait{seconds=3600}` {
		t.Errorf("after the interruption:\n%s", goals.Show(got))
	}
	told := false
	for _, r := range e.srv.Requests() {
		told = told || strings.Contains(user(r), "Goal: recover") && strings.Contains(user(r), "interrupted by a stop or a power cut")
	}
	if !told {
		t.Error("the planner was not told of the interruption")
	}
	// The wait resumes with its end kept.
	got, _ = e.rt.Get("8")
	if got.Steps[1].State != goals.Waiting || !got.Steps[1].Ends.Equal(waiting.Steps[1].Ends) {
		t.Errorf("the wait after a restart:\n%s (ends %v, want %v)", goals.Show(got), got.Steps[1].Ends, waiting.Steps[1].Ends)
	}
	if _, err := e.rt.Cancel("8", "test"); err != nil {
		t.Fatal(err)
	}
	if got, _ = e.rt.Get("8"); got.State != goals.Cancelled || got.Steps[1].State != goals.StepCancelled {
		t.Errorf("after cancel:\n%s", goals.Show(got))
	}
	// The record is durable: a new runtime on the same store sees it.
	e.stop()
	rt, err := goals.New(goals.Options{Store: e.st, Runner: e.runner})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := rt.Get("8"); err != nil || got.State != goals.Cancelled {
		t.Errorf("reloaded: %v %v", got.State, err)
	}
	_ = context.Background
}

// TestGoalAddRefusesBadInput: a goal without an objective, with a check on
// an unknown tool, or with a negative deadline is refused with what is wrong.
func TestGoalAddRefusesBadInput(t *testing.T) {
	e := newEnv(t, nil, goals.Options{})
	bad := tools.ReadCheck{Read: `@nope/read{}`}
	for _, tc := range []struct {
		n    goals.NewGoal
		want string
	}{
		{goals.NewGoal{Owner: owner}, "needs an objective"},
		{goals.NewGoal{Objective: "x", Owner: owner, Check: &bad}, "the check"},
		{goals.NewGoal{Objective: "x", Owner: owner, Deadline: -time.Second}, "in the past"},
		{goals.NewGoal{Objective: strings.Repeat("x", goals.MaxObjective+1), Owner: owner}, "at most"},
		{goals.NewGoal{Objective: "x"}, "owner"},
	} {
		if _, err := e.rt.Add(tc.n); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Add(%+v) = %v, want %q", tc.n, err, tc.want)
		}
	}
}

// TestGoalAskAndSubGoal: a plan that asks its owner and then pursues a
// sub-goal: the question waits for the answer, the sub-goal (id 1.2) is
// pursued for the same owner, and the parent's step ends with it.
func TestGoalAskAndSubGoal(t *testing.T) {
	e := newEnv(t, nil, goals.Options{EvaluateEvery: time.Hour})
	e.srv.Default(func(r openaitest.Request) openaitest.Reply {
		u := user(r)
		switch {
		case strings.HasPrefix(system(r), "You judge") && (strings.Contains(u, "sub-goal 1.2 done") || strings.HasPrefix(u, "Goal: switch the led on") && strings.Contains(u, ": done")):
			return score(9, "done")
		case strings.HasPrefix(system(r), "You judge"):
			return score(1, "not yet")
		case strings.Contains(u, "Goal: switch the led on"):
			return plan(`@gpio/write{pin="led";value=1}`)
		}
		return plan(`@goal/ask{question="May I switch the led on?"} -> @goal/sub{objective="switch the led on"}`)
	})
	g, err := e.rt.Add(goals.NewGoal{Objective: "light up", Owner: owner})
	if err != nil {
		t.Fatal(err)
	}
	told := e.toldWith("May I switch the led on?")
	if !strings.Contains(told, "goal 1 asks: May I switch the led on?") || !strings.Contains(told, "goal answer 1 TEXT") {
		t.Fatalf("the owner was not asked:\n%s", told)
	}
	if e.level("led") != hal.Low {
		t.Fatal("the sub-goal ran before the answer")
	}
	if _, err := e.rt.Answer("2", "yes"); err == nil {
		t.Error("answered a goal that asks nothing")
	}
	if _, err := e.rt.Answer(g.ID, "yes"); err != nil {
		t.Fatal(err)
	}
	g = e.until(g.ID, goals.Done)
	child, err := e.rt.Get("1.2")
	if err != nil {
		t.Fatal(err)
	}
	if child.State != goals.Done || child.Parent != "1" || child.Owner != owner || e.level("led") != hal.High {
		t.Errorf("sub-goal:\n%s", goals.Show(child))
	}
	if g.Steps[0].Answer != "yes" || !strings.Contains(g.Steps[1].Result, "sub-goal 1.2 done") {
		t.Errorf("parent:\n%s", goals.Show(g))
	}
}

// TestGoalApprovalSurvivesStop: a call waiting for an approval when the
// daemon stops wrote no intent; it waits again, and the next start asks again.
func TestGoalApprovalSurvivesStop(t *testing.T) {
	pol := &policy.Policy{Tools: map[string]policy.Action{"gpio/toggle": policy.Ask}}
	e := newEnv(t, pol, goals.Options{EvaluateEvery: time.Hour})
	e.srv.Default(judgeOrPlan(`@gpio/toggle{pin="led"}`))
	g, err := e.rt.Add(goals.NewGoal{Objective: "toggle the led", Owner: owner})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		g, _ = e.rt.Get(g.ID)
		if len(g.Steps) > 0 && g.Steps[0].Waiting == "approval" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("never asked:\n%s", goals.Show(g))
		}
		time.Sleep(5 * time.Millisecond)
	}
	e.stop()
	rt, err := goals.New(goals.Options{Store: e.st, Runner: e.runner})
	if err != nil {
		t.Fatal(err)
	}
	g, _ = rt.Get(g.ID)
	if g.State != goals.Active || g.Steps[0].State != goals.Ready {
		t.Errorf("after a stop during an approval and a restart:\n%s", goals.Show(g))
	}
	// The audit has the refusal (cancelled while waiting), never a run.
	for _, a := range e.audited() {
		if strings.Contains(a.Command, "gpio/toggle") && (a.OK || !strings.Contains(a.Detail, "it was not run")) {
			t.Errorf("a call nobody approved ran: %+v", a)
		}
	}
	if e.level("led") != hal.Low {
		t.Error("the led toggled")
	}
}

// TestGoalAlreadyReached: a goal whose check holds when it is set is done
// at once, with no plan and no model call.
func TestGoalAlreadyReached(t *testing.T) {
	e := newEnv(t, nil, goals.Options{})
	e.sim.Drive(27, hal.High)
	check, _ := tools.ParseReadCheck(`@gpio/read{pin="soil"} is high`)
	g, err := e.rt.Add(goals.NewGoal{Objective: "the soil is wet", Owner: owner, Check: &check})
	if err != nil {
		t.Fatal(err)
	}
	g = e.until(g.ID, goals.Done)
	if len(g.Steps) != 0 || len(e.srv.Requests()) != 0 {
		t.Errorf("%d steps, %d model calls for a goal already reached", len(g.Steps), len(e.srv.Requests()))
	}
}

// TestGoalToolsOwnership: goal/add makes its caller the owner (an
// automation's creator when an automation sets it); only the owner or a
// person at the board may cancel.
func TestGoalToolsOwnership(t *testing.T) {
	e := newEnv(t, nil, goals.Options{EvaluateEvery: time.Hour})
	e.srv.Default(judgeOrPlan(`@goal/wait{seconds=3600}`))
	var h goals.Handle
	h.Set(e.rt)
	if err := goals.RegisterTools(e.reg, &h); err != nil {
		t.Fatal(err)
	}
	run := func(caller tools.Caller, line string) (string, error) {
		cmd, err := grammar.Parse(line, grammar.ParseOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rep, err := e.runner.Run(context.Background(), caller, cmd)
		return rep.Text(), err
	}
	auto := tools.Caller{Channel: "auto", User: "auto:night", Actor: tools.Automation, Creator: &owner}
	if out, err := run(auto, `@goal/add{objective="keep it dark";deadline="8h"}`); err != nil || !strings.Contains(out, "goal 1 set: keep it dark; deadline") {
		t.Fatalf("goal/add: %s %v", out, err)
	}
	g, _ := e.rt.Get("1")
	if g.Owner != owner {
		t.Errorf("owner %+v, want the automation's creator %+v", g.Owner, owner)
	}
	stranger := tools.Caller{Channel: "telegram", User: "telegram:7", Actor: tools.Person}
	if _, err := run(stranger, `@goal/cancel{id="1"}`); err == nil || !strings.Contains(err.Error(), "only its owner or a person at the board") {
		t.Errorf("a stranger cancelled: %v", err)
	}
	if _, err := run(tools.Caller{Channel: "telegram", User: "telegram:42 (@ann)", Actor: tools.Person}, `@goal/cancel{id="1"}`); err != nil {
		t.Errorf("the owner could not cancel: %v", err)
	}
	if _, err := run(stranger, `@goal/add{objective="x";until="@gpio/read{pin=\"soil\"} is damp"}`); err == nil || !strings.Contains(err.Error(), "until: ") {
		t.Errorf("a bad until: %v", err)
	}
	if out, err := run(stranger, `@goal/show{id="1"}`); err != nil || !strings.Contains(out, "cancelled (cancelled by telegram:42 (@ann))") {
		t.Errorf("goal/show: %s %v", out, err)
	}
}

// TestGoalPlanFromConstrainedCalls: a provider that constrains decoding gets
// the plan's constraint (command form, the plan's tools) and may hand the
// plan back as parsed calls, as the local runner's client does; the plan is
// the same.
func TestGoalPlanFromConstrainedCalls(t *testing.T) {
	p := agenttest.New(
		agenttest.Step{Calls: []llm.ToolCall{agenttest.Call("gpio/write", `{"pin":"led","value":1}`), agenttest.Call("goal/wait", `{"seconds":1}`)}},
		agenttest.Step{Text: `@goal/score{score=9;reason="on"}`},
	)
	p.Capabilities.Grammar = true
	e := newEnv(t, nil, goals.Options{EvaluateEvery: time.Hour, Model: p})
	g, err := e.rt.Add(goals.NewGoal{Objective: "led on", Owner: owner})
	if err != nil {
		t.Fatal(err)
	}
	g = e.until(g.ID, goals.Done)
	if len(g.Steps) != 2 || g.Steps[0].Command != `@gpio/write{pin="led";value=1}` || g.Steps[1].Command != `@goal/wait{seconds=1}` {
		t.Errorf("plan:\n%s", goals.Show(g))
	}
	reqs := p.Requests()
	c := reqs[0].Constraint
	if c == nil || c.Form != grammar.FormCommand || c.Mode != grammar.ModeCalls || c.MaxCalls != goals.MaxPlanSteps {
		t.Fatalf("the plan's constraint: %+v", c)
	}
	var names []string
	for _, s := range c.Tools {
		names = append(names, s.Name)
	}
	if got := strings.Join(names, " "); !strings.Contains(got, "gpio/write") || !strings.Contains(got, "goal/until") || strings.Contains(got, "goal/add") {
		t.Errorf("the plan's tools: %s", got)
	}
	if c := reqs[1].Constraint; c == nil || len(c.Tools) != 1 || c.Tools[0].Name != "goal/score" {
		t.Errorf("the judgement's constraint: %+v", c)
	}
}

// TestGoalUnreadablePlanCounts: a reply whose calls cannot be read (a number
// past float64, which a JSON Schema cannot bound, as a real llama-server's
// random model wrote) is a plan that failed, not a model out of reach: it
// counts against MaxPlans, and the next prompt says why, so that a seeded
// model does not write it again. A model that only writes such replies ends
// the goal failed.
func TestGoalUnreadablePlanCounts(t *testing.T) {
	huge := agenttest.Step{Calls: []llm.ToolCall{agenttest.Call("goal/until", `{"read":"@gpio/read{pin=\"soil\"}","cond":"above","value":922E2542,"seconds":5}`)}}
	p := agenttest.New(huge,
		agenttest.Step{Func: func(req llm.Request) agenttest.Step {
			if !strings.Contains(req.Messages[len(req.Messages)-1].Content, "the last attempt to plan failed: goal/until:") {
				return agenttest.Step{Text: "not told why"}
			}
			return agenttest.Step{Calls: []llm.ToolCall{agenttest.Call("gpio/write", `{"pin":"led","value":1}`)}}
		}},
		agenttest.Step{Text: `@goal/score{score=9;reason="on"}`},
	)
	p.Capabilities.Grammar = true
	e := newEnv(t, nil, goals.Options{EvaluateEvery: time.Hour, MaxPlans: 3, Model: p})
	g, err := e.rt.Add(goals.NewGoal{Objective: "led on", Owner: owner})
	if err != nil {
		t.Fatal(err)
	}
	if g = e.until(g.ID, goals.Done); g.Spent.Plans != 2 || len(g.Steps) != 1 || e.level("led") != hal.High {
		t.Errorf("after an unreadable plan:\n%s", goals.Show(g))
	}

	always := agenttest.New()
	always.Capabilities.Grammar = true
	always.Last = &huge
	e.stop()
	e.start(goals.Options{Store: e.st, Runner: e.runner, Poll: 10 * time.Millisecond, EvaluateEvery: time.Hour, MaxPlans: 2, Model: always})
	if g, err = e.rt.Add(goals.NewGoal{Objective: "led on again", Owner: owner}); err != nil {
		t.Fatal(err)
	}
	if g = e.until(g.ID, goals.Failed); g.Spent.Plans != 2 || !strings.Contains(g.Reason, "no plan reached it after 2 plans") {
		t.Errorf("a model that only writes unreadable plans:\n%s", goals.Show(g))
	}
}

// TestGoalWithoutModel: with no model to plan, a goal fails saying so.
func TestGoalWithoutModel(t *testing.T) {
	e := newEnv(t, nil, goals.Options{})
	e.stop()
	e.start(goals.Options{Store: e.st, Runner: e.runner, Poll: 10 * time.Millisecond})
	g, err := e.rt.Add(goals.NewGoal{Objective: "anything", Owner: owner})
	if err != nil {
		t.Fatal(err)
	}
	if g = e.until(g.ID, goals.Failed); !strings.Contains(g.Reason, "no model to write a plan") {
		t.Errorf("reason %q", g.Reason)
	}
}

// TestGoalSubGoalMadeAfterCrash: a crash after a sub-goal step was saved as
// waiting and before its sub-goal was: the next start makes the sub-goal,
// under the step's id, once.
func TestGoalSubGoalMadeAfterCrash(t *testing.T) {
	e := newEnv(t, nil, goals.Options{EvaluateEvery: time.Hour})
	e.stop()
	now := time.Now()
	parent := goals.Goal{ID: "9", Objective: "parent", Owner: owner, State: goals.Active, Created: now, Updated: now, Progress: now,
		Spent: goals.Spent{Plans: 1}, PlanFrom: 1,
		Steps: []goals.Step{{ID: 1, Kind: goals.KindSub, Command: `@goal/sub{objective="child"}`, Sub: "child", State: goals.Waiting, Waiting: "subgoal", Child: "9.1"}}}
	raw, _ := json.Marshal(parent)
	if err := e.st.Put("goals", "9", raw); err != nil {
		t.Fatal(err)
	}
	e.srv.Default(judgeOrPlan(`@goal/wait{seconds=3600}`))
	e.start(goals.Options{Store: e.st, Runner: e.runner, Model: e.model, Poll: 10 * time.Millisecond, EvaluateEvery: time.Hour})
	deadline := time.Now().Add(10 * time.Second)
	for {
		if c, err := e.rt.Get("9.1"); err == nil {
			if c.Parent != "9" || c.Objective != "child" || c.Owner != owner {
				t.Errorf("the sub-goal: %+v", c)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the sub-goal was never made")
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	if n := len(e.rt.List()); n != 2 {
		t.Errorf("%d goals, want the parent and one sub-goal", n)
	}
}
