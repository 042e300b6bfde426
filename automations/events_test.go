package automations

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/tools"
	"github.com/creack/pty"
)

// eventRig runs one event automation's watcher on a fake clock and collects the
// values its runs were fired with (through notify "{value}").
type eventRig struct {
	*rig
	s     *Scheduler
	fired chan string
}

func newEventRig(t *testing.T, sp Spec, e Effects) *eventRig {
	r := newRig(t, time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
	r.clock.armed = make(chan time.Duration, 64)
	er := &eventRig{rig: r, fired: make(chan string, 16)}
	e.Notify = func(_ context.Context, text string) { er.fired <- text }
	sp.Notify = "{value}"
	s, err := New([]Spec{sp}, Options{Store: r.st, Clock: r.clock, Effects: e, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	s.watching = true
	s.watch(s.jobs[sp.Name])
	s.mu.Unlock()
	t.Cleanup(func() { cancel(); s.watchers.Wait(); s.Wait() })
	er.s = s
	return er
}

// armed waits until the watcher has set its next timer (it has taken in the
// last event).
func (er *eventRig) armed(t *testing.T) time.Duration {
	t.Helper()
	select {
	case d := <-er.clock.armed:
		return d
	case <-time.After(5 * time.Second):
		t.Fatal("the watcher did not take the event in")
	}
	return 0
}

func (er *eventRig) next(t *testing.T) string {
	t.Helper()
	select {
	case v := <-er.fired:
		er.s.Wait()
		return v
	case <-time.After(5 * time.Second):
		t.Fatal("the automation did not fire")
	}
	return ""
}

func (er *eventRig) none(t *testing.T) {
	t.Helper()
	er.s.Wait()
	select {
	case v := <-er.fired:
		t.Fatalf("fired unexpectedly with %q", v)
	default:
	}
}

func edgesFrom(ch chan bool) func(string) (func(context.Context) (bool, error), error) {
	return func(string) (func(context.Context) (bool, error), error) {
		return func(ctx context.Context) (bool, error) {
			select {
			case h := <-ch:
				return h, nil
			case <-ctx.Done():
				return false, ctx.Err()
			}
		}, nil
	}
}

// A press that bounces (low, high, low within 50 ms) fires once; the release
// does not fire a falling trigger.
func TestPinDebounce(t *testing.T) {
	ch := make(chan bool)
	er := newEventRig(t, Spec{Name: "bell", Pin: "button", Edge: "falling", Debounce: 50 * time.Millisecond},
		Effects{Edges: edgesFrom(ch)})
	press := func() {
		for _, l := range []bool{false, true, false} { // contact bounce
			ch <- l
			er.armed(t)
			er.clock.advance(10 * time.Millisecond)
		}
		er.clock.advance(50 * time.Millisecond)
	}
	press()
	if v := er.next(t); v != "low" {
		t.Fatalf("fired with %q", v)
	}
	er.none(t)
	ch <- true // release
	er.armed(t)
	er.clock.advance(time.Second)
	er.none(t)
	press()
	if v := er.next(t); v != "low" {
		t.Fatalf("second press: %q", v)
	}
	er.none(t)
}

// With for: 2s, a press released after 1 s does not fire; one held 2 s does.
func TestPinHold(t *testing.T) {
	ch := make(chan bool)
	er := newEventRig(t, Spec{Name: "hold", Pin: "button", Edge: "rising", For: 2 * time.Second},
		Effects{Edges: edgesFrom(ch)})
	ch <- true
	er.armed(t)
	er.clock.advance(time.Second)
	ch <- false
	er.armed(t)
	er.clock.advance(3 * time.Second)
	er.none(t)
	ch <- true
	er.armed(t)
	er.clock.advance(1999 * time.Millisecond)
	er.none(t)
	er.clock.advance(time.Millisecond)
	if v := er.next(t); v != "high" {
		t.Fatalf("fired with %q", v)
	}
}

// Lines from a serial device (the test plays it on a PTY) fire on a match.
func TestSerialLines(t *testing.T) {
	dev, tty, err := pty.Open()
	if err != nil {
		t.Skip("no pty:", err)
	}
	defer dev.Close()
	defer tty.Close()
	lines := func(string) (func(context.Context) (string, error), error) {
		sc := bufio.NewScanner(tty)
		return func(ctx context.Context) (string, error) {
			if !sc.Scan() {
				if sc.Err() == nil {
					return "", io.EOF
				}
				return "", sc.Err()
			}
			return strings.TrimRight(sc.Text(), "\r"), nil
		}, nil
	}
	er := newEventRig(t, Spec{Name: "modem", Serial: "modem", Match: "^RING"}, Effects{Lines: lines})
	for _, l := range []string{"OK", "RING 1", "NO CARRIER", "xRING", "RING 2"} {
		if _, err := io.WriteString(dev, l+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	if v := er.next(t); v != "RING 1" {
		t.Fatalf("first: %q", v)
	}
	if v := er.next(t); v != "RING 2" {
		t.Fatalf("second: %q", v)
	}
	er.none(t)
}

// seqTool returns the next reading of a sensor each call.
type seqTool struct{ vals chan float64 }

func (seqTool) Spec() grammar.ToolSpec { return grammar.ToolSpec{Name: "test/temp", Doc: "a reading"} }
func (t seqTool) Run(ctx context.Context, _ grammar.Args) (tools.Result, error) {
	var v float64
	select {
	case v = <-t.vals:
	case <-ctx.Done():
		return tools.Result{}, ctx.Err()
	}
	return tools.Result{Text: "t", Fields: map[string]grammar.Value{"value": grammar.FloatValue(v)}}, nil
}

// above 10 for 2m with hysteresis 1, polled every minute: fires once per
// excursion, re-armed only below 9.
func TestReadThreshold(t *testing.T) {
	above := 10.0
	temp := seqTool{vals: make(chan float64)}
	reg := tools.NewRegistry()
	reg.Register(temp)
	r := newRig(t, time.Now())
	er := newEventRig(t, Spec{Name: "freezer", Read: "@test/temp{}", Every: time.Minute, Above: &above, Hysteresis: 1, For: 2 * time.Minute},
		Effects{Runner: &tools.Runner{Registry: reg, Audit: r.st}})
	fires := 0
	// 9.5 at 2 restarts the for: count; 8.9 at 9 re-arms it (below 10-1).
	for i, v := range []float64{5, 11, 9.5, 11, 12, 11, 10.5, 11, 9.5, 8.9, 11, 11, 11} {
		temp.vals <- v
		er.armed(t)
		er.s.Wait() // a run the reading started has finished
		select {
		case got := <-er.fired:
			fires++
			if i != 5 && i != 12 {
				t.Errorf("fired at reading %d (%v) with %s", i, v, got)
			}
		default:
		}
		er.clock.advance(time.Minute)
	}
	if fires != 2 {
		t.Errorf("%d fires, want 2", fires)
	}
}
