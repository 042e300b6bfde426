package main

import (
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clawedge/clawedge/goals"
	"github.com/clawedge/clawedge/llm/openai/openaitest"
	"github.com/clawedge/clawedge/store"
)

// doorSensorBoard is doorBoard with a simulated sensor, so that the
// simulated board's world tools (sim/set, sim/drive) are there: the test
// opens the door from outside the daemon with @sim/drive.
const doorSensorBoard = doorBoard + `  buses: {sensors: {i2c: "1"}}
  sensors:
    greenhouse: {driver: bme280, bus: sensors, every: 1m, sim: {temperature: 20}}
`

// TestGoalDoorAcrossASIGKILL is the door goal of issue 38 through the
// built daemon, SIGKILLed while the goal waits for the door and started
// again: the goal is found waiting, writes no new plan and does not write
// the led again (the audit has one write by the goal), and when the door
// opens (the simulated button driven high with @sim/drive, from outside the
// daemon) it is done within a second, by the daemon's own clock: the
// button's change is fed to it (polls are an hour apart).
func TestGoalDoorAcrossASIGKILL(t *testing.T) {
	srv := openaitest.New(t)
	var plans atomic.Int32
	doorPlanner(srv, &plans)
	cfgPath, dataDir := writeConfig(t, "console: {stdin: false}\ngoals: {poll: 1h}\n"+doorSensorBoard+remoteConfig(srv, ""))
	sock := filepath.Join(dataDir, "clawedge.sock")
	var log1 lockedBuffer
	d := startDaemon(t, cfgPath, &log1)
	waitForSocket(t, sock)

	out := runCLI(t, 0, "", "goal", "add", "turn the led on and leave it on until the door opens",
		"--until", `@gpio/read{pin="button"} is high`, "--deadline", "10m", "--config", cfgPath)
	if !strings.Contains(out, "goal 1 set") {
		t.Fatalf("goal add: %s", out)
	}
	g := pollGoal(t, cfgPath, "1", 30*time.Second, func(g goals.Goal) bool { return g.State == goals.Awaiting || g.State.Finished() })
	if g.State != goals.Awaiting || g.Spent.Plans != 1 {
		t.Fatalf("before the kill, want waiting after one plan:\n%s\n%s", goals.Show(g), log1.String())
	}

	// SIGKILL while it waits, then start again.
	d.kill()
	var log2 lockedBuffer
	d2 := startDaemon(t, cfgPath, &log2)
	waitForSocket(t, sock)
	g = pollGoal(t, cfgPath, "1", 30*time.Second, func(g goals.Goal) bool {
		return g.State.Finished() || g.State == goals.Awaiting && len(g.Evaluations) > 0 && g.Evaluations[len(g.Evaluations)-1].At.After(g.WaitingSince)
	})
	// Judged once after the restart, and waiting again, with no new plan.
	time.Sleep(500 * time.Millisecond)
	g = pollGoal(t, cfgPath, "1", 5*time.Second, func(goals.Goal) bool { return true })
	if g.State != goals.Awaiting || g.Spent.Plans != 1 || plans.Load() != 1 || len(g.Steps) != 1 {
		t.Fatalf("after the restart, want waiting with the one plan (%d asked of the model):\n%s\n%s", plans.Load(), goals.Show(g), log2.String())
	}
	if show := runCLI(t, 0, "", "goal", "show", "1", "--config", cfgPath); !strings.Contains(show, "; waiting (") || !strings.Contains(show, "at each change of the reading") {
		t.Errorf("goal show after the restart:\n%s", show)
	}

	// A restarted daemon drives its outputs to their initial level: the led
	// the goal switched on reads off now, and the goal does not write it again.
	t.Logf("the led after the restart: %s", strings.TrimSpace(runCLI(t, 0, "", "exec", "--config", cfgPath, `@gpio/read{pin="led"}`)))

	// The door opens.
	if out := runCLI(t, 0, "", "exec", "--config", cfgPath, `@sim/drive{pin="button";value=1}`); !strings.Contains(out, "button driven high (simulated)") {
		t.Fatalf("sim/drive: %s", out)
	}
	g = pollGoal(t, cfgPath, "1", 30*time.Second, func(g goals.Goal) bool { return g.State.Finished() })
	if g.State != goals.Done || !strings.Contains(g.Reason, `@gpio/read{pin="button"} read 1: is high`) {
		t.Fatalf("goal 1 ended %s (%s), want done when the button read high:\n%s", g.State, g.Reason, goals.Show(g))
	}
	if g.Spent.Plans != 1 || plans.Load() != 1 {
		t.Errorf("%d plans counted, %d asked of the model: want 1", g.Spent.Plans, plans.Load())
	}

	// The audit, once the daemon is stopped: the led written once by the
	// goal, across both runs; done within a second of the door opening.
	var opened time.Time
	if err := d2.term(t); err != nil {
		t.Errorf("the daemon's stop: %v\n%s", err, log2.String())
	}
	st, err := store.Open(dataDir, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	entries, err := st.Tail(100000)
	if err != nil {
		t.Fatal(err)
	}
	writes := 0
	for _, e := range entries {
		if strings.HasPrefix(e.Who, "goal:1") && strings.Contains(e.Command, `@gpio/write{pin="led"`) {
			writes++
		}
		if strings.Contains(e.Command, "@sim/drive{") {
			opened = e.Time
		}
	}
	if writes != 1 {
		t.Errorf("the goal wrote the led %d times across the SIGKILL, want once", writes)
	}
	if opened.IsZero() {
		t.Fatal("the door's opening (sim/drive) is not in the audit")
	}
	if took := g.Updated.Sub(opened); took < 0 || took > time.Second {
		t.Errorf("done %s after the door opened, want within a second", took)
	} else {
		t.Logf("done %s after the door opened", took)
	}
}
