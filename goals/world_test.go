package goals_test

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawedge/clawedge/goals"
	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/llm/openai"
	"github.com/clawedge/clawedge/llm/openai/openaitest"
	"github.com/clawedge/clawedge/llm/remote"
	"github.com/clawedge/clawedge/policy"
	"github.com/clawedge/clawedge/tools"
)

// Goals that wait for the world (issue 38): a plan over with the check not
// holding waits, watched by the pins' events, polled otherwise, judged at
// intervals; stalls re-plan once, then go to the owner; holding goals keep a
// band until their deadline. Every test runs on a fake clock, moved from one
// timer of the runtime to the next once it sleeps: no test waits on the
// machine's speed.

var noon = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

// worldEnv is an env on a fake clock at noon, with a feed of the door pin's
// events when watch is set.
func worldEnv(t *testing.T, watch bool, pol *policy.Policy, opt goals.Options) (*env, *fakeClock, *goals.Feed) {
	t.Helper()
	clock := newFakeClock(noon)
	opt.Clock, opt.Location = clock, time.UTC
	if opt.Poll == 0 {
		opt.Poll = 10 * time.Second
	}
	var feed *goals.Feed
	if watch {
		feed = &goals.Feed{}
		if err := feed.Provide(goals.PinRead("door")); err != nil {
			t.Fatal(err)
		}
		opt.Watch = feed
	}
	return newEnv(t, pol, opt), clock, feed
}

func doorCheck(t *testing.T) *tools.ReadCheck {
	t.Helper()
	c, err := tools.ParseReadCheck(`@gpio/read{pin="door"} is high`)
	if err != nil {
		t.Fatal(err)
	}
	return &c
}

func finished(e *env, id string) func() bool {
	return func() bool { g, err := e.rt.Get(id); return err == nil && g.State.Finished() }
}

// writes counts the calls of the goal's steps that wrote pin in the audit
// (each call's intent, once).
func (e *env) writes(pin string) int {
	n := 0
	for _, a := range e.audited() {
		if strings.HasPrefix(a.Who, "goal:") && strings.Contains(a.Command, `@gpio/write{pin="`+pin+`"`) && a.OK {
			n++
		}
	}
	return n
}

// TestGoalWaitsForTheDoorUntilItsDeadline: "turn the led on and leave it on
// until the door opens" with a planner that writes the obvious one-step
// plan. Before, the plan ran, the door still read low, and 8 plans were
// written in 0.1 s. Now the goal waits (state waiting, the door watched by
// its events), and at its deadline fails saying what the door read and when.
func TestGoalWaitsForTheDoorUntilItsDeadline(t *testing.T) {
	e, clock, _ := worldEnv(t, true, nil, goals.Options{})
	e.srv.Default(judgeOrPlan(`@gpio/write{pin="led";value=1}`))
	g, err := e.rt.Add(goals.NewGoal{Objective: "turn the led on and leave it on until the door opens", Owner: owner, Check: doorCheck(t), Deadline: 5 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	e.waitFor(g.ID, "waited", func(g goals.Goal) bool { return g.State == goals.Awaiting })
	e.run(clock, noon.Add(2*time.Minute), nil)
	g, _ = e.rt.Get(g.ID)
	if g.State != goals.Awaiting || g.Reading == nil || g.Reading.Holds || g.Reading.Value != 0 || g.Watched != "events" ||
		!g.Next.Equal(noon.Add(5*time.Minute)) || g.Spent.Plans != 1 {
		t.Fatalf("two minutes in, want waiting on the door's events, judged next at the deadline:\n%s\n%+v next %v", goals.Show(g), g.Reading, g.Next)
	}
	show := goals.Show(g)
	for _, want := range []string{"waiting (the plan is over; the door reads low (12:00:00), not yet is high)", "last reading 2026-06-01T12:00:00Z: low (does not hold)",
		"judged next by 2026-06-01T12:05:00Z, and at each change of the reading"} {
		if !strings.Contains(show, want) {
			t.Errorf("goal show lacks %q:\n%s", want, show)
		}
	}
	e.run(clock, noon.Add(time.Hour), finished(e, g.ID))
	g = e.until(g.ID, goals.Failed)
	if want := "the door still reads low at the deadline (5m), read at 12:05:00; 1 plan, 1 call"; g.Reason != want {
		t.Errorf("reason %q, want %q", g.Reason, want)
	}
	if n := planCalls(e.srv); n != 1 || g.Spent.Plans != 1 || e.writes("led") != 1 {
		t.Errorf("%d planner calls, %d plans, %d writes of the led: want one of each", n, g.Spent.Plans, e.writes("led"))
	}
	if told := e.toldWith("goal 1 failed"); !strings.Contains(told, "the door still reads low at the deadline (5m)") || !strings.Contains(told, "1 plan, 1 call") {
		t.Errorf("the owner was told:\n%s", told)
	}
}

// TestGoalDoneWhenTheDoorOpens: the same goal is done as soon as the door
// opens mid-wait (its event judges it, not the next interval), across a
// restart of the runtime while it waits, and the led is written once.
func TestGoalDoneWhenTheDoorOpens(t *testing.T) {
	e, clock, feed := worldEnv(t, true, nil, goals.Options{EvaluateEvery: 5 * time.Minute})
	e.srv.Default(judgeOrPlan(`@gpio/write{pin="led";value=1}`))
	g, err := e.rt.Add(goals.NewGoal{Objective: "turn the led on and leave it on until the door opens", Owner: owner, Check: doorCheck(t), Deadline: 5 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	e.waitFor(g.ID, "waited", func(g goals.Goal) bool { return g.State == goals.Awaiting })
	e.run(clock, noon.Add(time.Minute), nil)

	// A restart while it waits: it waits again, with no new plan.
	e.stop()
	e.start(goals.Options{Store: e.st, Runner: e.runner, Model: e.model, Clock: clock, Location: time.UTC, Watch: feed, Poll: 10 * time.Second})
	e.run(clock, noon.Add(2*time.Minute), nil)
	if g, _ = e.rt.Get(g.ID); g.State != goals.Awaiting || g.Spent.Plans != 1 {
		t.Fatalf("after the restart:\n%s", goals.Show(g))
	}

	// The door opens at 12:02: its event is judged at once.
	e.sim.Drive(23, hal.High)
	feed.Pin("door", true, clock.Now())
	g = e.until(g.ID, goals.Done)
	last := g.Evaluations[len(g.Evaluations)-1]
	if !last.At.Equal(noon.Add(2*time.Minute)) || !strings.Contains(g.Reason, `@gpio/read{pin="door"} read 1: is high`) {
		t.Errorf("done at %v because %q, want at the door's event (12:02)", last.At, g.Reason)
	}
	if g.Spent.Plans != 1 || e.writes("led") != 1 || e.level("led") != hal.High {
		t.Errorf("%d plans, %d writes of the led (%s): want one plan and one write", g.Spent.Plans, e.writes("led"), e.level("led"))
	}
}

// TestGoalPollsAReadNobodyWatches: without a source for its read, a waiting
// goal's check is polled every goals.poll: the door opening is seen at the
// next poll.
func TestGoalPollsAReadNobodyWatches(t *testing.T) {
	e, clock, _ := worldEnv(t, false, nil, goals.Options{Poll: 10 * time.Second, EvaluateEvery: 5 * time.Minute})
	e.srv.Default(judgeOrPlan(`@gpio/write{pin="led";value=1}`))
	g, err := e.rt.Add(goals.NewGoal{Objective: "wait for the door", Owner: owner, Check: doorCheck(t), Deadline: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	e.waitFor(g.ID, "waited", func(g goals.Goal) bool { return g.State == goals.Awaiting })
	e.run(clock, noon.Add(time.Minute+5*time.Second), nil)
	e.sim.Drive(23, hal.High)
	e.run(clock, noon.Add(time.Hour), finished(e, g.ID))
	g = e.until(g.ID, goals.Done)
	last := g.Evaluations[len(g.Evaluations)-1]
	if at := last.At.Sub(noon); at < time.Minute+5*time.Second || at > time.Minute+15*time.Second || g.Watched != "poll" {
		t.Errorf("done %s after noon (watched by %q), want at the first poll after the door opened (1m10s)", at, g.Watched)
	}
	// Polls that read what was read before are no judgements: the
	// evaluations are the ones that count and the change.
	if n := len(g.Evaluations); n > 4 {
		t.Errorf("%d evaluations for one change:\n%s", n, goals.Show(g))
	}
}

// TestGoalWithoutCheckWaitsUntilItsDeadline: "make the button read low"
// with a deadline of 20 s and no check ended in 0.1 s, 8 plans written. Now
// a model judges it after its plan, it waits, and it stops at its deadline,
// saying so.
func TestGoalWithoutCheckWaitsUntilItsDeadline(t *testing.T) {
	e, clock, _ := worldEnv(t, false, nil, goals.Options{})
	e.srv.Default(judgeOrPlan(`@gpio/write{pin="led";value=1}`))
	g, err := e.rt.Add(goals.NewGoal{Objective: "make the button read low", Owner: owner, Deadline: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	e.run(clock, noon.Add(time.Hour), finished(e, g.ID))
	g = e.until(g.ID, goals.Stopped)
	if !strings.HasPrefix(g.Reason, "its deadline passed (20s) before it was reached: judged 20% at 12:00:00 (nothing changes)") || g.Spent.Plans > 2 {
		t.Errorf("reason %q, %d plans", g.Reason, g.Spent.Plans)
	}
	if g.Updated.Before(noon.Add(20 * time.Second)) {
		t.Errorf("ended at %v, before its deadline", g.Updated)
	}
}

// TestGoalReplanWaitsAPoll: a plan whose step is refused is written again,
// but a poll after the last at the soonest: within a deadline of 25 s and a
// poll of 10 s, three plans, not max_plans in a moment.
func TestGoalReplanWaitsAPoll(t *testing.T) {
	pol := &policy.Policy{Users: map[string]map[string]policy.Action{"telegram:42": {"gpio/write": policy.Deny}}}
	e, clock, _ := worldEnv(t, false, pol, goals.Options{Poll: 10 * time.Second, MaxPlans: 8})
	e.srv.Default(judgeOrPlan(`@gpio/write{pin="led";value=1}`))
	g, err := e.rt.Add(goals.NewGoal{Objective: "led on", Owner: owner, Check: doorCheck(t), Deadline: 25 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	e.run(clock, noon.Add(time.Hour), finished(e, g.ID))
	g = e.until(g.ID, goals.Failed)
	if g.Spent.Plans != 3 || planCalls(e.srv) != 3 {
		t.Errorf("%d plans (%d planner calls) in 25 s with a poll of 10 s, want 3:\n%s", g.Spent.Plans, planCalls(e.srv), goals.Show(g))
	}
	var starts []time.Time
	for _, s := range g.Steps {
		starts = append(starts, s.Moves[0].At)
	}
	for i := 1; i < len(starts); i++ {
		if d := starts[i].Sub(starts[i-1]); d < 10*time.Second {
			t.Errorf("plan %d came %s after the one before: less than a poll", i+1, d)
		}
	}
}

// TestGoalStallReplansOnceThenTellsTheOwner: the door never opens. No
// progress for stall_after judgements is a stall: one new plan, its prompt
// saying what the plan did and what the check reads now; at the second
// stall the owner is told, no plan is written any more, and the goal waits
// until its deadline, which it fails with its figures.
func TestGoalStallReplansOnceThenTellsTheOwner(t *testing.T) {
	e, clock, _ := worldEnv(t, true, nil, goals.Options{EvaluateEvery: time.Minute, StallAfter: 2, MaxPlans: 8})
	e.srv.Default(judgeOrPlan(`@gpio/write{pin="led";value=1}`))
	g, err := e.rt.Add(goals.NewGoal{Objective: "open the door", Owner: owner, Check: doorCheck(t), Deadline: 30 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	e.run(clock, noon.Add(10*time.Minute), nil)
	g, _ = e.rt.Get(g.ID)
	if g.State != goals.Awaiting || !g.NeedsOwner || g.Stalls != 2 || g.Spent.Plans != 2 {
		t.Fatalf("ten minutes in, want waiting, its owner told, after 2 plans:\n%s", goals.Show(g))
	}
	told := e.toldWith("it needs you")
	if !strings.Contains(told, "goal 1 (open the door) stalled again") || !strings.Contains(told, "the door reads low") || !strings.Contains(told, "waits until its deadline") {
		t.Errorf("the owner was told:\n%s", told)
	}
	var replan string
	for _, r := range e.srv.Requests() {
		if strings.Contains(user(r), "Write a new plan: it stalled") {
			replan = user(r)
		}
	}
	if !strings.Contains(replan, `@gpio/write{pin="led";value=1}: done`) || !strings.Contains(replan, "The check reads now: low") {
		t.Errorf("the re-plan's prompt does not say what the plan did and what the check reads:\n%s", replan)
	}
	e.run(clock, noon.Add(time.Hour), finished(e, g.ID))
	g = e.until(g.ID, goals.Failed)
	if planCalls(e.srv) != 2 || g.Spent.Plans != 2 ||
		g.Reason != "the door still reads low at the deadline (30m), read at 12:30:00; 2 plans, 2 calls; it stalled and its owner was told" {
		t.Errorf("%d planner calls; reason %q", planCalls(e.srv), g.Reason)
	}
	if r := goals.Report(g); !strings.Contains(r, "2 plans, 2 calls") || !strings.Contains(r, "model tokens") {
		t.Errorf("the report lacks the plans, calls and tokens:\n%s", r)
	}
}

// greenhouse is a simulated greenhouse on the fake clock: the heater (the
// relay) warms it by 0.5 °C a minute, and without it the night cools it by
// 0.2 °C a minute, toward 30 and 5. Its temperature is read by test/temp, a
// read-only tool; integrated lazily from the last read.
type greenhouse struct {
	e            *env
	clock        *fakeClock
	disconnected bool // the heater is not wired: the relay warms nothing

	mu   sync.Mutex
	at   time.Time
	temp float64
}

func (*greenhouse) ReadOnly() {}

func (*greenhouse) Spec() grammar.ToolSpec {
	return grammar.ToolSpec{Name: "test/temp", Doc: "The greenhouse's temperature in °C."}
}

func (h *greenhouse) Run(context.Context, grammar.Args) (tools.Result, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.clock.Now()
	minutes := now.Sub(h.at).Minutes()
	h.at = now
	if h.e.sim.Level(22) == hal.High && !h.disconnected {
		h.temp = math.Min(30, h.temp+0.5*minutes)
	} else {
		h.temp = math.Max(5, h.temp-0.2*minutes)
	}
	v := math.Round(h.temp*10) / 10
	return tools.Result{Text: strconv.FormatFloat(v, 'f', 1, 64), Fields: map[string]grammar.Value{"value": grammar.FloatValue(v)}}, nil
}

// TestGoalHoldsTheGreenhouseThroughTheNight: "keep the greenhouse between 18
// and 24 until 07:00", set at 19:00 with the greenhouse at 15 °C. The goal
// switches the heater on and off through the night (a model writes the
// first plan for each side; afterwards the plan that brought it back runs
// again, without the model), the band holds but for bounded excursions, and
// at 07:00 it ends done with the figures: minimum, maximum, time outside,
// what it did. The tokens spent are bounded by the sides of the band, not by
// the hours.
func TestGoalHoldsTheGreenhouseThroughTheNight(t *testing.T) {
	t.Parallel() // hours on a fake clock, each its own board and runtime
	evening := time.Date(2026, 6, 1, 19, 0, 0, 0, time.UTC)
	clock := newFakeClock(evening)
	e := newEnv(t, nil, goals.Options{Clock: clock, Location: time.UTC, Poll: 2 * time.Minute, EvaluateEvery: 10 * time.Minute, MaxPlans: 4})
	gh := &greenhouse{e: e, clock: clock, at: evening, temp: 15}
	if err := e.reg.Register(gh); err != nil {
		t.Fatal(err)
	}
	below := regexp.MustCompile(`The check reads now: ([0-9.]+)`)
	e.srv.Default(func(r openaitest.Request) openaitest.Reply {
		m := below.FindStringSubmatch(user(r))
		if m != nil {
			if v, _ := strconv.ParseFloat(m[1], 64); v < 18 {
				return plan(`@gpio/write{pin="relay";value=1}`)
			}
		}
		return plan(`@gpio/write{pin="relay";value=0}`)
	})
	var h goals.Handle
	h.Set(e.rt)
	if err := goals.RegisterTools(e.reg, &h); err != nil {
		t.Fatal(err)
	}
	line := tools.CommandText("goal/add", []grammar.Param{
		{Key: "objective", Value: grammar.StringValue("keep the greenhouse between 18 and 24 until 07:00")},
		{Key: "hold", Value: grammar.StringValue(`@test/temp{} between 18 and 24`)},
		{Key: "until_time", Value: grammar.StringValue("07:00")}})
	cmd, err := grammar.Parse(line, grammar.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := e.runner.Run(context.Background(), tools.Caller{Channel: owner.Channel, User: owner.User, Actor: tools.Person}, cmd)
	if err != nil || !strings.Contains(rep.Text(), "goal 1 set: keep the greenhouse between 18 and 24 until 07:00; holds @test/temp{} between 18 and 24; deadline 2026-06-02 07:00") {
		t.Fatalf("goal/add: %s %v", rep.Text(), err)
	}
	morning := time.Date(2026, 6, 2, 7, 0, 0, 0, time.UTC)
	e.run(clock, morning.Add(time.Hour), finished(e, "1"))
	g := e.until("1", goals.Done)
	hd := g.Hold
	t.Logf("%s\n%s", g.Reason, goals.Report(g))
	if hd == nil || hd.Min != 15 || hd.Max < 24 || hd.Max > 25.5 || hd.Excursions < 10 {
		t.Fatalf("the band's record: %+v", hd)
	}
	// Bounded excursions: each is seen within a poll (2m) and acted on at
	// once; back inside within a few minutes (the heater overshoots by at
	// most a poll's warming, 1 °C, which the night takes 5m to cool).
	if avg := hd.Outside / time.Duration(hd.Excursions); avg > 8*time.Minute || hd.Outside > 12*time.Hour/5 {
		t.Errorf("outside the band %s of 12h in %d excursions (%s each)", hd.Outside, hd.Excursions, avg)
	}
	if g.Spent.Plans != 2 || hd.Reused < 8 || planCalls(e.srv) != 2 {
		t.Errorf("%d plans written (%d planner calls), %d run again: the model should write one plan a side", g.Spent.Plans, planCalls(e.srv), hd.Reused)
	}
	if calls := e.writes("relay"); calls != g.Spent.Steps || calls < 10 {
		t.Errorf("%d writes of the heater, %d steps", calls, g.Spent.Steps)
	}
	for _, want := range []string{"held between 18 and 24 until its deadline (07:00): min 15, max ", "outside the band ", fmt.Sprintf("in %d excursions", hd.Excursions), "2 plans, ", " run again, "} {
		if !strings.Contains(g.Reason, want) {
			t.Errorf("the reason lacks %q: %s", want, g.Reason)
		}
	}
	if told := e.toldWith("goal 1 done"); !strings.Contains(told, "the band between 18 and 24: min 15") || !strings.Contains(told, `@gpio/write{pin="relay";value=0} at `) {
		t.Errorf("the owner's report at 07:00:\n%s", told)
	}
	if !g.Updated.Equal(morning) {
		t.Errorf("ended at %v, want 07:00", g.Updated)
	}
}

// TestGoalHoldNeedsACheckAndADeadline: a holding goal is refused without
// the check it keeps or a deadline to keep it until, saying what it needs;
// until_time is read as the next such time.
func TestGoalHoldNeedsACheckAndADeadline(t *testing.T) {
	e, _, _ := worldEnv(t, false, nil, goals.Options{})
	for _, tc := range []struct {
		n    goals.NewGoal
		want string
	}{
		{goals.NewGoal{Objective: "x", Owner: owner, Hold: true, Deadline: time.Hour}, "a holding goal needs the check"},
		{goals.NewGoal{Objective: "x", Owner: owner, Hold: true, Check: doorCheck(t)}, "a holding goal needs a deadline"},
		{goals.NewGoal{Objective: "x", Owner: owner, Deadline: time.Hour, At: noon.Add(time.Hour)}, "not both"},
		{goals.NewGoal{Objective: "x", Owner: owner, At: noon.Add(-time.Hour)}, "in the past"},
	} {
		if _, err := e.rt.Add(tc.n); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Add(%+v) = %v, want %q", tc.n, err, tc.want)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"07:00", "2026-06-02T07:00:00Z"},
		{"13:30", "2026-06-01T13:30:00Z"},
		{"2026-06-03 08:15", "2026-06-03T08:15:00Z"},
		{"2026-06-03T08:15:00+02:00", "2026-06-03T06:15:00Z"},
	} {
		at, err := goals.ParseUntilTime(tc.in, noon, time.UTC)
		if err != nil || at.UTC().Format(time.RFC3339) != tc.want {
			t.Errorf("ParseUntilTime(%q) = %v, %v; want %s", tc.in, at, err, tc.want)
		}
	}
	for _, in := range []string{"7 o'clock", "2026-05-01 07:00", "25:00"} {
		if _, err := goals.ParseUntilTime(in, noon, time.UTC); err == nil {
			t.Errorf("ParseUntilTime(%q) took it", in)
		}
	}
}

// TestFeed: a Feed watches the reads it is given, however their parameters
// are ordered; a watcher slower than the changes gets the newest; the end of
// a watch closes its channel; a read nobody feeds is not watched (polled).
func TestFeed(t *testing.T) {
	var f goals.Feed
	if err := f.Provide(goals.PinRead("door"), `@test/temp{zone="a";unit="c"}`); err != nil {
		t.Fatal(err)
	}
	if err := f.Provide(`@test/temp{`); err == nil {
		t.Error("a read that does not parse was taken")
	}
	ctx, cancel := context.WithCancel(context.Background())
	door, ok := f.Watch(ctx, `@gpio/read{pin="door"}`)
	temp, ok2 := f.Watch(ctx, `@test/temp{unit="c";zone="a"}`)
	if !ok || !ok2 {
		t.Fatal("a provided read is not watched")
	}
	if _, ok := f.Watch(ctx, `@gpio/read{pin="soil"}`); ok {
		t.Error("a read nobody feeds is watched")
	}
	f.Pin("door", true, noon)
	f.Pin("door", false, noon.Add(time.Second))
	f.Publish(`@test/temp{zone="a";unit="c"}`, 19.5, noon)
	if c := <-door; c.Value != 0 || !c.At.Equal(noon.Add(time.Second)) {
		t.Errorf("the door's newest change: %+v", c)
	}
	if c := <-temp; c.Value != 19.5 {
		t.Errorf("the sample: %+v", c)
	}
	cancel()
	for range door {
	}
	f.Pin("door", true, noon) // no watcher: dropped, no panic
}

// TestGoalHoldWithADeadHeaterStalls: the heater is not wired, so no plan can
// work. The goal plans, stalls (the temperature only falls), plans once
// more, stalls again and hands the plan to the escalation model, stalls a
// third time and tells its owner, and fails at its deadline with the number
// of plans, calls and tokens; never a plan a moment.
func TestGoalHoldWithADeadHeaterStalls(t *testing.T) {
	t.Parallel() // hours on a fake clock, each its own board and runtime
	big := openaitest.New(t)
	bigModel, err := openai.New(openai.Options{Options: remote.Options{Name: "big", BaseURL: big.URL, Model: "big"}})
	if err != nil {
		t.Fatal(err)
	}
	big.Default(judgeOrPlan(`@gpio/write{pin="relay";value=1}`))
	evening := time.Date(2026, 6, 1, 19, 0, 0, 0, time.UTC)
	clock := newFakeClock(evening)
	e := newEnv(t, nil, goals.Options{Clock: clock, Location: time.UTC, Poll: 2 * time.Minute, EvaluateEvery: 10 * time.Minute, StallAfter: 3, Escalation: bigModel})
	gh := &greenhouse{e: e, clock: clock, at: evening, temp: 15, disconnected: true}
	if err := e.reg.Register(gh); err != nil {
		t.Fatal(err)
	}
	e.srv.Default(judgeOrPlan(`@gpio/write{pin="relay";value=1}`))
	check, err := tools.ParseReadCheck(`@test/temp{} between 18 and 24`)
	if err != nil {
		t.Fatal(err)
	}
	g, err := e.rt.Add(goals.NewGoal{Objective: "keep the greenhouse warm", Owner: owner, Check: &check, Hold: true, At: evening.Add(12 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	e.run(clock, evening.Add(13*time.Hour), finished(e, g.ID))
	g = e.until(g.ID, goals.Failed)
	if planCalls(e.srv) != 2 || planCalls(big) != 1 || g.Spent.Plans != 3 || !g.Escalated {
		t.Errorf("%d plans by the board's model, %d by the escalation model (%d counted), escalated %v", planCalls(e.srv), planCalls(big), g.Spent.Plans, g.Escalated)
	}
	for _, want := range []string{"outside between 18 and 24 at the deadline (07:00): @test/temp{} reads 5 (07:00:00); min 5, max 15", "3 plans, 3 calls", "it stalled and its owner was told"} {
		if !strings.Contains(g.Reason, want) {
			t.Errorf("the reason lacks %q: %s", want, g.Reason)
		}
	}
	if r := goals.Report(g); !strings.Contains(r, "3 plans, 3 calls, ") || !strings.Contains(r, " model tokens") {
		t.Errorf("the report:\n%s", r)
	}
	told := e.toldText()
	if !strings.Contains(told, "the plan goes to big") || !strings.Contains(told, "it needs you") {
		t.Errorf("the owner was told:\n%s", told)
	}
}

// TestGoalWatchedOnceProvided: a read the daemon feeds only after the goal
// was set (a sensor that came up late) is polled until then, and watched
// from the next poll on: the door's event is judged at once.
func TestGoalWatchedOnceProvided(t *testing.T) {
	feed := &goals.Feed{}
	e, clock, _ := worldEnv(t, false, nil, goals.Options{Watch: feed, Poll: 10 * time.Second, EvaluateEvery: 5 * time.Minute})
	e.srv.Default(judgeOrPlan(`@gpio/write{pin="led";value=1}`))
	g, err := e.rt.Add(goals.NewGoal{Objective: "wait for the door", Owner: owner, Check: doorCheck(t), Deadline: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	e.waitFor(g.ID, "waited", func(g goals.Goal) bool { return g.State == goals.Awaiting })
	e.run(clock, noon.Add(time.Minute), nil)
	if err := feed.Provide(goals.PinRead("door")); err != nil {
		t.Fatal(err)
	}
	e.run(clock, noon.Add(2*time.Minute+3*time.Second), nil)
	e.sim.Drive(23, hal.High)
	feed.Pin("door", true, clock.Now())
	g = e.until(g.ID, goals.Done)
	if last := g.Evaluations[len(g.Evaluations)-1]; !last.At.Equal(noon.Add(2*time.Minute+3*time.Second)) || g.Watched != "events" {
		t.Errorf("done at %v, watched by %q: want at the event, 12:02:03", last.At, g.Watched)
	}
}
