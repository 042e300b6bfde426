package automations

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/store"
	"github.com/clawedge/clawedge/tools"

	// The zones the DST tests use, whether or not the machine has zoneinfo
	// (the daemon embeds them through config).
	_ "time/tzdata"
)

// fakeClock is moved by the test. Its timers fire when the test moves it past
// their deadline; armed (when set) receives each new timer's duration, so a
// test knows a watcher has taken in an event before it moves the clock.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
	armed  chan time.Duration
}

type fakeTimer struct {
	at      time.Time
	c       chan time.Time
	stopped bool
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *fakeClock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
	kept := c.timers[:0]
	for _, tm := range c.timers {
		switch {
		case tm.stopped:
		case !tm.at.After(t):
			tm.c <- t
		default:
			kept = append(kept, tm)
		}
	}
	c.timers = kept
}

func (c *fakeClock) advance(d time.Duration) { c.set(c.Now().Add(d)) }

func (c *fakeClock) NewTimer(d time.Duration) (<-chan time.Time, func() bool) {
	c.mu.Lock()
	tm := &fakeTimer{at: c.now.Add(d), c: make(chan time.Time, 1)}
	c.timers = append(c.timers, tm)
	armed := c.armed
	c.mu.Unlock()
	if armed != nil {
		armed <- d
	}
	return tm.c, func() bool { c.mu.Lock(); defer c.mu.Unlock(); tm.stopped = true; return true }
}

// hitTool counts its runs: the effect whose repetition the tests look for.
type hitTool struct {
	mu   sync.Mutex
	hits []string
	// block, when set, holds a run until closed (a run in progress at a "power cut").
	block chan struct{}
}

func (*hitTool) Spec() grammar.ToolSpec {
	return grammar.ToolSpec{Name: "test/hit", Doc: "count", Params: []grammar.ArgSpec{{Name: "tag", Type: grammar.TypeString}}}
}

func (h *hitTool) Run(ctx context.Context, a grammar.Args) (tools.Result, error) {
	if h.block != nil {
		<-h.block
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.hits = append(h.hits, a.String("tag"))
	return tools.Result{Text: "hit " + a.String("tag")}, nil
}

func (h *hitTool) count() int { h.mu.Lock(); defer h.mu.Unlock(); return len(h.hits) }

type rig struct {
	t     *testing.T
	dir   string
	st    *store.Store
	clock *fakeClock
	hit   *hitTool
	notes []string
	nmu   sync.Mutex
}

func newRig(t *testing.T, now time.Time) *rig {
	r := &rig{t: t, dir: t.TempDir(), clock: &fakeClock{now: now}, hit: &hitTool{}}
	r.open()
	return r
}

func (r *rig) open() {
	st, err := store.Open(r.dir, store.Options{})
	if err != nil {
		r.t.Fatal(err)
	}
	r.st = st
	r.t.Cleanup(func() { st.Close() })
}

func (r *rig) sched(loc *time.Location, specs ...Spec) *Scheduler {
	r.t.Helper()
	reg := tools.NewRegistry()
	if err := reg.Register(r.hit); err != nil {
		r.t.Fatal(err)
	}
	s, err := New(specs, Options{
		Store: r.st, Clock: r.clock, Loc: loc, AsksPerDay: 100,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Effects: Effects{
			Runner: &tools.Runner{Registry: reg, Audit: r.st, Self: map[string]grammar.Value{}},
			Notify: func(_ context.Context, text string) { r.nmu.Lock(); r.notes = append(r.notes, text); r.nmu.Unlock() },
		},
	})
	if err != nil {
		r.t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		r.t.Fatal(err)
	}
	return s
}

// at steps the scheduler at t and waits for the runs it started.
func (r *rig) at(s *Scheduler, t time.Time) {
	r.clock.set(t)
	s.step(t)
	s.Wait()
}

func hit(tag string) string { return `@test/hit{tag="` + tag + `"}` }

func TestEveryAuditedAsAuto(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	r := newRig(t, t0)
	s := r.sched(time.UTC, Spec{Name: "blink", Every: time.Second, Do: hit("b")})
	r.at(s, t0)
	if r.hit.count() != 0 {
		t.Fatal("ran at start")
	}
	for i := 1; i <= 3; i++ {
		r.at(s, t0.Add(time.Duration(i)*time.Second))
	}
	if r.hit.count() != 3 {
		t.Fatalf("%d runs in 3 s, want 3", r.hit.count())
	}
	entries, err := r.st.Tail(10)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 3 || entries[0].Who != "auto:blink" || entries[0].Channel != "auto" || !entries[0].OK {
		t.Fatalf("audit: %+v", entries)
	}
	// The loop sleeps until the next due time: 1 s, not a polling tick.
	if d := s.step(t0.Add(3*time.Second + 200*time.Millisecond)); d != 800*time.Millisecond {
		t.Errorf("sleep %v, want 800ms", d)
	}
}

// cronRuns steps a cron automation minute by minute across [from, to) and
// returns when it ran.
func cronRuns(t *testing.T, loc *time.Location, expr string, from, to time.Time) []time.Time {
	r := newRig(t, from)
	s := r.sched(loc, Spec{Name: "c", Cron: expr, Do: hit("c")})
	var runs []time.Time
	for now := from; now.Before(to); now = now.Add(time.Minute) {
		before := r.hit.count()
		r.at(s, now)
		if r.hit.count() != before {
			runs = append(runs, now)
		}
	}
	return runs
}

// DST, both ways, in two zones: a wall time that does not exist runs once (an
// hour later, when the clock has jumped past it); one that happens twice runs once.
func TestCronDST(t *testing.T) {
	for _, tc := range []struct {
		zone           string
		spring, autumn time.Time // midnight UTC of the change days
	}{
		{"Europe/Berlin", time.Date(2026, 3, 29, 0, 0, 0, 0, time.UTC), time.Date(2026, 10, 25, 0, 0, 0, 0, time.UTC)},
		{"America/New_York", time.Date(2026, 3, 8, 4, 0, 0, 0, time.UTC), time.Date(2026, 11, 1, 4, 0, 0, 0, time.UTC)},
	} {
		loc, err := time.LoadLocation(tc.zone)
		if err != nil {
			t.Fatal(err)
		}
		runs := cronRuns(t, loc, "30 2 * * *", tc.spring.Add(-time.Hour), tc.spring.Add(8*time.Hour))
		if len(runs) != 1 || runs[0].In(loc).Format("15:04") != "03:30" {
			t.Errorf("%s spring: runs %v, want one at 03:30", tc.zone, runs)
		}
		runs = cronRuns(t, loc, "30 1 * * *", tc.autumn.Add(-time.Hour), tc.autumn.Add(8*time.Hour))
		if len(runs) != 1 || runs[0].In(loc).Format("15:04") != "01:30" {
			t.Errorf("%s autumn: runs %v, want one at 01:30", tc.zone, runs)
		}
		if tc.zone == "Europe/Berlin" {
			// 02:30 is the repeated hour in Berlin.
			runs = cronRuns(t, loc, "30 2 * * *", tc.autumn.Add(-time.Hour), tc.autumn.Add(8*time.Hour))
			if len(runs) != 1 {
				t.Errorf("Berlin 02:30 on the fall-back night: runs %v, want one", runs)
			}
		}
	}
}

// In UTC (no DST) the schedule is exactly robfig/cron's.
func TestCronMatchesLibrary(t *testing.T) {
	for _, expr := range []string{"0 23 * * *", "*/7 * * * *", "0 7 * * mon-fri", "@hourly", "@weekly", "15 3 1 jan,jul *", "@monthly"} {
		lib, err := cronParser.Parse(expr)
		if err != nil {
			t.Fatal(err)
		}
		j := &job{spec: Spec{Name: "c", Cron: expr}, loc: time.UTC}
		j.cron, _ = parseCron(expr)
		at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		for range 50 {
			want := lib.Next(at)
			got := j.nextTime(at)
			if !got.Equal(want) {
				t.Fatalf("%s after %v: %v, library says %v", expr, at, got, want)
			}
			at = got
		}
	}
}

func TestUntrustedClock(t *testing.T) {
	build := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	boot := time.Date(1970, 1, 1, 0, 0, 10, 0, time.UTC) // a Pi without RTC
	r := newRig(t, boot)
	reg := tools.NewRegistry()
	reg.Register(r.hit)
	s, _ := New([]Spec{{Name: "e", Every: time.Second, Do: hit("e")}, {Name: "c", Cron: "* * * * *", Do: hit("c")}},
		Options{Store: r.st, Clock: r.clock, TrustedAfter: build, AsksPerDay: 1, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
			Effects: Effects{Runner: &tools.Runner{Registry: reg, Audit: r.st}}})
	s.Start(context.Background())
	for i := range 120 {
		r.at(s, boot.Add(time.Duration(i)*time.Second))
	}
	if r.hit.count() != 0 {
		t.Fatalf("%d runs on a clock in 1970", r.hit.count())
	}
	if s.ClockTrusted() || !strings.Contains(s.List()[0].Held, "not trusted") {
		t.Errorf("status does not say the clock is untrusted: %+v", s.List())
	}
	// NTP sets the clock: the schedule is computed from the real time, and what
	// "was due" in 1970 is not run (catch_up: skip).
	now := build.Add(time.Hour + 30*time.Second)
	r.at(s, now)
	if r.hit.count() != 0 {
		t.Fatal("ran at once when the clock became trusted")
	}
	r.at(s, now.Add(time.Second))
	if r.hit.count() != 1 {
		t.Fatalf("%d runs one second after, want 1 (every 1s)", r.hit.count())
	}
	r.at(s, now.Add(30*time.Second)) // the minute: cron too; every once for the 29 s skipped
	if r.hit.count() != 3 {
		t.Fatalf("%d runs, want 3", r.hit.count())
	}
}

func TestCatchUp(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 6, 0, 0, 0, time.UTC)
	for _, mode := range []string{"skip", "once"} {
		r := newRig(t, t0)
		s := r.sched(time.UTC, Spec{Name: "m", Cron: "0 7 * * *", Do: hit("m"), CatchUp: mode})
		r.at(s, t0)
		r.at(s, t0.Add(time.Hour)) // 07:00 day 1
		if r.hit.count() != 1 {
			t.Fatalf("%s: %d runs at 07:00", mode, r.hit.count())
		}
		// Off for three days, back at 12:00 on day 4.
		back := t0.Add(3*24*time.Hour + 6*time.Hour)
		r.clock.set(back)
		s2 := r.sched(time.UTC, Spec{Name: "m", Cron: "0 7 * * *", Do: hit("m"), CatchUp: mode})
		r.at(s2, back)
		want := map[string]int{"skip": 1, "once": 2}[mode]
		if r.hit.count() != want {
			t.Errorf("catch_up %s: %d runs after the downtime, want %d", mode, r.hit.count(), want)
		}
		r.at(s2, back.Add(time.Hour)) // 13:00: nothing more until tomorrow 07:00
		r.at(s2, back.Add(19*time.Hour))
		if r.hit.count() != want+1 {
			t.Errorf("catch_up %s: %d runs by the next 07:00, want %d", mode, r.hit.count(), want+1)
		}
	}
}

// A run in progress when the power goes is never repeated, and is reported.
func TestInterruptedRunNotRepeated(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 6, 0, 0, 0, time.UTC)
	r := newRig(t, t0)
	r.hit.block = make(chan struct{})
	s := r.sched(time.UTC, Spec{Name: "pump", Cron: "0 7 * * *", Do: hit("p"), CatchUp: "once"})
	r.clock.set(t0)
	s.step(t0)
	r.clock.set(t0.Add(time.Hour))
	s.step(t0.Add(time.Hour)) // the run starts and blocks inside the tool
	// "Power cut": the store is closed under the blocked run (a copy of the file
	// is what a restart would find).
	r.st.Close()
	close(r.hit.block)
	s.Wait()
	r.hit.block = nil
	before := r.hit.count()
	r.open()
	r.clock.set(t0.Add(2 * time.Hour))
	s2 := r.sched(time.UTC, Spec{Name: "pump", Cron: "0 7 * * *", Do: hit("p"), CatchUp: "once"})
	r.at(s2, t0.Add(2*time.Hour))
	if r.hit.count() != before {
		t.Fatalf("the interrupted 07:00 run was repeated (catch_up once must not apply to it)")
	}
	if len(r.notes) != 1 || !strings.Contains(r.notes[0], "pump") || !strings.Contains(r.notes[0], "not repeated") {
		t.Errorf("owner not told: %q", r.notes)
	}
	l := s2.List()
	if !strings.HasPrefix(l[0].Outcome, "interrupted") {
		t.Errorf("outcome %q", l[0].Outcome)
	}
}

func TestAskBudget(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	r := newRig(t, t0)
	reg := tools.NewRegistry()
	var asks atomic.Int32
	var logs strings.Builder
	s, _ := New([]Spec{{Name: "hb", Every: time.Hour, Ask: "anything off?", AsksPerDay: 3}, {Name: "hb2", Every: time.Hour, Ask: "x", AsksPerDay: 100}},
		Options{Store: r.st, Clock: r.clock, AsksPerDay: 5, Log: slog.New(slog.NewTextHandler(&logs, nil)),
			Effects: Effects{Runner: &tools.Runner{Registry: reg, Audit: r.st},
				Ask: func(context.Context, tools.Caller, string) (string, error) { asks.Add(1); return "fine", nil }}})
	s.Start(context.Background())
	for h := 0; h <= 23; h++ {
		r.at(s, t0.Add(time.Duration(h)*time.Hour))
	}
	// hb: 3 (its own limit); hb2: 2 more (the global 5).
	if asks.Load() != 5 {
		t.Errorf("%d model calls in a day, want 5", asks.Load())
	}
	if n := strings.Count(logs.String(), "over budget"); n != 2 {
		t.Errorf("over-budget logged %d times, want once per automation:\n%s", n, logs.String())
	}
	r.at(s, t0.Add(24*time.Hour)) // a new day
	if asks.Load() != 7 {
		t.Errorf("%d calls after midnight, want 7", asks.Load())
	}
}

func TestConditions(t *testing.T) {
	loc, _ := time.LoadLocation("Europe/Berlin")
	// Saturday 2026-05-02 23:00 Berlin.
	sat := time.Date(2026, 5, 2, 23, 0, 0, 0, loc)
	s := &Scheduler{opt: Options{Loc: loc}}
	for _, tc := range []struct {
		c    Condition
		at   time.Time
		want bool
	}{
		{Condition{Window: true, From: 22 * 60, To: 6 * 60}, sat, true},
		{Condition{Window: true, From: 22 * 60, To: 6 * 60}, sat.Add(-2 * time.Hour), false},
		{Condition{Window: true, From: 22 * 60, To: 6 * 60}, sat.Add(6 * time.Hour), true},
		{Condition{Window: true, From: 8 * 60, To: 18 * 60}, sat, false},
		{Condition{Weekdays: []time.Weekday{time.Saturday, time.Sunday}}, sat, true},
		{Condition{Weekdays: []time.Weekday{time.Monday}}, sat, false},
	} {
		if got, why := s.holds(tc.c, tc.at); got != tc.want {
			t.Errorf("%+v at %v: %v (%s)", tc.c, tc.at, got, why)
		}
	}
}

func TestAddPersistsAndRemove(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	r := newRig(t, t0)
	s := r.sched(time.UTC)
	if err := s.Add(Spec{Name: "x", Every: time.Minute, Do: hit("x")}); err != nil {
		t.Fatal(err)
	}
	if err := s.Add(Spec{Name: "bad", Every: time.Minute, Do: "@nope/x{}"}); err == nil {
		t.Error("a do: with an unknown tool was accepted")
	}
	s2 := r.sched(time.UTC) // restart
	if l := s2.List(); len(l) != 1 || l[0].Name != "x" || !l[0].Added {
		t.Fatalf("after restart: %+v", l)
	}
	if err := s2.SetPaused("x", true); err != nil {
		t.Fatal(err)
	}
	r.at(s2, t0)
	r.at(s2, t0.Add(time.Minute))
	if r.hit.count() != 0 {
		t.Error("a paused automation ran")
	}
	if err := s2.RunNow("x"); err != nil {
		t.Fatal(err)
	}
	s2.Wait()
	if r.hit.count() != 1 {
		t.Error("auto/run did not run it")
	}
	if err := s2.Remove("x"); err != nil {
		t.Fatal(err)
	}
	if l := r.sched(time.UTC).List(); len(l) != 0 {
		t.Errorf("removed automation back after restart: %+v", l)
	}
}

// A clock after the build date but not yet set by NTP (a Pi booted at its last
// shutdown time) holds time triggers too, until Trusted says it is set.
func TestUnsyncedClock(t *testing.T) {
	t0 := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	r := newRig(t, t0)
	reg := tools.NewRegistry()
	reg.Register(r.hit)
	var synced atomic.Bool
	s, _ := New([]Spec{{Name: "e", Every: time.Second, Do: hit("e")}},
		Options{Store: r.st, Clock: r.clock, Trusted: synced.Load, AsksPerDay: 1, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
			Effects: Effects{Runner: &tools.Runner{Registry: reg, Audit: r.st}}})
	s.Start(context.Background())
	for i := range 5 {
		r.at(s, t0.Add(time.Duration(i)*time.Second))
	}
	if r.hit.count() != 0 || s.ClockTrusted() {
		t.Fatalf("%d runs on an unsynced clock", r.hit.count())
	}
	synced.Store(true) // NTP set the clock, an hour later than it thought
	now := t0.Add(time.Hour)
	r.at(s, now)
	r.at(s, now.Add(time.Second))
	if r.hit.count() != 1 {
		t.Fatalf("%d runs after the sync, want 1", r.hit.count())
	}
}
