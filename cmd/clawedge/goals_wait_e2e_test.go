package main

import (
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clawedge/clawedge/goals"
	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/hal/sim"
	"github.com/clawedge/clawedge/llm/openai/openaitest"
)

// doorBoard is a board with the door: an LED and an input that reads
// low until something drives it high, watched for its edges.
const doorBoard = `board:
  pins:
    led:    {gpio: 17, mode: out}
    button: {gpio: 27, mode: in, pull: down, edge: both}
`

// doorPlanner is a planner that always writes the obvious one-step plan, and
// counts the plans it was asked for.
func doorPlanner(srv *openaitest.Server, plans *atomic.Int32) {
	srv.Default(func(r openaitest.Request) openaitest.Reply {
		plans.Add(1)
		return openaitest.Text(`@gpio/write{pin="led";value=1}`)
	})
}

// TestGoalWaitsForTheDoorUntilItsDeadline is the first goal of issue 38
// through the built daemon: "turn the led on and leave it on until the door
// opens" with a planner that writes the one-step plan. The plan runs once,
// the goal waits for the world (not 8 plans in 0.1 s), `goal show` says what
// it waits for and what the check last read, and at its deadline it fails
// saying what the check read then. The flags of holding goals and deadlines
// given as a time are checked on the way.
func TestGoalWaitsForTheDoorUntilItsDeadline(t *testing.T) {
	srv := openaitest.New(t)
	var plans atomic.Int32
	doorPlanner(srv, &plans)
	cfgPath, dataDir := writeConfig(t, "console: {stdin: false}\ntimezone: Asia/Tokyo\ngoals: {poll: 50ms}\n"+doorBoard+remoteConfig(srv, ""))

	// Refused before anything is asked of a daemon.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--until", `@gpio/read{pin="button"} is high`, "--hold", `@gpio/read{pin="button"} is high`, "--deadline", "1h"}, "--until and --hold"},
		{[]string{"--hold", `@gpio/read{pin="button"} is high`, "--deadline", "1h", "--until-time", "07:00"}, "--deadline and --until-time"},
		{[]string{"--hold", `@gpio/read{pin="button"} is high`}, "--hold needs a deadline"},
		{[]string{"--hold", `@gpio/read{pin="button"} is warm`, "--deadline", "1h"}, "--hold: "},
		{[]string{"--until-time", "7 in the morning"}, `--until-time: "7 in the morning" is not a time of day such as 07:00`},
		{[]string{"--until-time", "2001-01-01 07:00"}, "--until-time: 2001-01-01 07:00 is in the past"},
	} {
		args := append([]string{"goal", "add", "x", "--config", cfgPath}, c.args...)
		if out := runCLI(t, 1, "", args...); !strings.Contains(out, c.want) {
			t.Errorf("goal add %s: %s; want %q", strings.Join(c.args, " "), out, c.want)
		}
	}

	startGoalDaemon(t, cfgPath, dataDir)
	out := runCLI(t, 0, "", "goal", "add", "turn the led on and leave it on until the door opens",
		"--until", `@gpio/read{pin="button"} is high`, "--deadline", "5s", "--config", cfgPath)
	if !strings.Contains(out, "goal 1 set: turn the led on and leave it on until the door opens; until @gpio/read{pin=\"button\"} is high") {
		t.Fatalf("goal add: %s", out)
	}

	// Waiting for the world, watched at each change of the button.
	var show string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		show = runCLI(t, 0, "", "goal", "show", "1", "--config", cfgPath)
		if strings.Contains(show, "; waiting (") || !strings.Contains(show, "; active") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("goal 1 never waited:\n%s", show)
		}
	}
	for _, want := range []string{
		"; waiting (the plan is over; the button reads low (", "), not yet is high)",
		"\nlast reading ", ": low (does not hold)\n",
		"\nwaiting since ", "; judged next by ", ", and at each change of the reading\n",
		`1. [done] @gpio/write{pin="led";value=1}`,
	} {
		if !strings.Contains(show, want) {
			t.Errorf("goal show while it waits lacks %q:\n%s", want, show)
		}
	}

	// At its deadline: failed, saying what the check read, one plan.
	g := pollGoal(t, cfgPath, "1", 60*time.Second, func(g goals.Goal) bool { return g.State.Finished() })
	if g.State != goals.Failed || !strings.Contains(g.Reason, "the button still reads low at the deadline (5s), read at ") ||
		!strings.HasSuffix(g.Reason, "; 1 plan, 1 call") {
		t.Errorf("goal 1 ended %s (%s); want failed: the button still reads low at the deadline (5s), read at ...; 1 plan, 1 call", g.State, g.Reason)
	}
	if g.Updated.Before(g.Deadline) {
		t.Errorf("goal 1 ended at %s, before its deadline %s", g.Updated, g.Deadline)
	}
	if len(g.Steps) != 1 || g.Spent.Plans != 1 || plans.Load() != 1 {
		t.Errorf("goal 1: %d steps, %d plans counted, %d asked of the model; want 1 of each\n%s", len(g.Steps), g.Spent.Plans, plans.Load(), goals.Show(g))
	}
	if out := runCLI(t, 0, "", "exec", "--config", cfgPath, `@gpio/read{pin="led"}`); !strings.Contains(out, "led = 1") {
		t.Errorf("the led was left off: %s", out)
	}

	// A holding goal until 07:00, read in the config's timezone.
	out = runCLI(t, 0, "", "goal", "add", "keep the door open", "--hold", `@gpio/read{pin="button"} is high`, "--until-time", "07:00", "--config", cfgPath)
	if !strings.Contains(out, `goal 2 set: keep the door open; holds @gpio/read{pin="button"} is high; deadline `) || !strings.Contains(out, " 07:00") {
		t.Fatalf("goal add --hold --until-time: %s", out)
	}
	g = pollGoal(t, cfgPath, "2", 30*time.Second, func(goals.Goal) bool { return true })
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	if err != nil {
		t.Fatal(err)
	}
	if at := g.Deadline.In(tokyo); at.Hour() != 7 || at.Minute() != 0 || g.Hold == nil || g.DeadlineAsSet != "07:00" {
		t.Errorf("goal 2: deadline %s (%q), hold %v; want 07:00 in Asia/Tokyo, holding", at, g.DeadlineAsSet, g.Hold)
	}
	if out := runCLI(t, 0, "", "goal", "cancel", "2", "--config", cfgPath); !strings.Contains(out, "cancelled goal 2") {
		t.Errorf("goal cancel: %s", out)
	}
}

// TestGoalDoneWhenTheDoorOpens is the same goal on the daemon run in this
// process, so that the test opens the door on the simulated board while the
// goal waits: the daemon feeds the button's change to the goal, which is
// judged at once and done, its plan run once. Polls are an hour apart, so
// only the change can have judged it.
func TestGoalDoneWhenTheDoorOpens(t *testing.T) {
	var board *sim.Sim
	var mu sync.Mutex
	newSim = func() hal.Driver { mu.Lock(); defer mu.Unlock(); board = sim.New(); return board }
	defer func() { newSim = func() hal.Driver { return sim.New() } }()
	srv := openaitest.New(t)
	var plans atomic.Int32
	doorPlanner(srv, &plans)
	cfgPath, dataDir := writeConfig(t, "console: {stdin: false}\ngoals: {poll: 1h}\n"+doorBoard+remoteConfig(srv, ""))
	runInProcess(t, cfgPath, "warn")
	waitForSocket(t, filepath.Join(dataDir, "clawedge.sock"))
	mu.Lock()
	b := board
	mu.Unlock()

	out := runCLI(t, 0, "", "goal", "add", "turn the led on and leave it on until the door opens",
		"--until", `@gpio/read{pin="button"} is high`, "--deadline", "1h", "--config", cfgPath)
	if !strings.Contains(out, "goal 1 set") {
		t.Fatalf("goal add: %s", out)
	}
	g := pollGoal(t, cfgPath, "1", 30*time.Second, func(g goals.Goal) bool { return g.State != goals.Active })
	if g.State != goals.Awaiting || g.Watched != "events" || b.Level(17) != hal.High {
		t.Fatalf("goal 1 is %s, watched by %q, the led %s; want waiting, watched by events, the led high\n%s", g.State, g.Watched, b.Level(17), goals.Show(g))
	}

	opened := time.Now()
	b.Drive(27, hal.High) // the door opens
	g = pollGoal(t, cfgPath, "1", 30*time.Second, func(g goals.Goal) bool { return g.State.Finished() })
	took := g.Updated.Sub(opened)
	t.Logf("done %s after the door opened", took.Round(time.Millisecond))
	if g.State != goals.Done || !strings.HasPrefix(g.Reason, "reached: ") {
		t.Fatalf("goal 1 ended %s (%s); want done\n%s", g.State, g.Reason, goals.Show(g))
	}
	if len(g.Steps) != 1 || g.Spent.Plans != 1 || plans.Load() != 1 {
		t.Errorf("goal 1: %d steps, %d plans counted, %d asked of the model; want 1 of each\n%s", len(g.Steps), g.Spent.Plans, plans.Load(), goals.Show(g))
	}
	// Within a second on an idle board (a read every 100 ms, a change
	// judged at once); a loaded test machine is given ten.
	if took > 10*time.Second {
		t.Errorf("done %s after the door opened", took)
	}
	if b.Level(17) != hal.High {
		t.Errorf("the led is %s at the end", b.Level(17))
	}
}
