package goals_test

import (
	"testing"
	"time"

	"github.com/clawedge/clawedge/goals"
)

// TestChangedFollowsTheGoals: Changed is closed by setting a goal and by
// each move after it, so a watcher that takes Changed, reads List and waits
// follows a goal to done with no polling, seeing its step running or done
// on the way; once nothing moves, nothing is signalled.
func TestChangedFollowsTheGoals(t *testing.T) {
	e := newEnv(t, nil, goals.Options{EvaluateEvery: time.Hour})
	e.srv.Push(plan(`@gpio/write{pin="led";value=1}`), score(9, "the led is on"))
	before := e.rt.Changed()
	g, err := e.rt.Add(goals.NewGoal{Objective: "switch the led on", Owner: owner})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-before:
	default:
		t.Fatal("setting a goal did not close Changed")
	}
	wakes, sawStep := 0, false
	timeout := time.After(20 * time.Second)
	for {
		ch := e.rt.Changed()
		got, err := e.rt.Get(g.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Steps) > 0 {
			sawStep = true
		}
		if got.State == goals.Done {
			break
		}
		select {
		case <-ch:
			wakes++
		case <-timeout:
			t.Fatalf("no change signalled; the goal is %s after %d wakes\n%s", got.State, wakes, goals.Show(got))
		}
	}
	if !sawStep || wakes < 2 {
		t.Errorf("the watcher woke %d times, saw a step: %v", wakes, sawStep)
	}
	quiet := e.rt.Changed()
	select {
	case <-quiet:
		t.Error("Changed closed with nothing moving")
	case <-time.After(200 * time.Millisecond):
	}
}
