package automations

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/robfig/cron/v3"
)

// KV is the durable store the scheduler keeps its state in (store.Store).
type KV interface {
	Put(bucket, key string, value []byte) error
	Get(bucket, key string) ([]byte, bool, error)
	Delete(bucket, key string) error
}

// Clock is the time source: the real one in the daemon, a fake in tests.
type Clock interface {
	Now() time.Time
	// NewTimer returns a channel that receives once d has passed, and a stop func.
	NewTimer(d time.Duration) (<-chan time.Time, func() bool)
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }
func (realClock) NewTimer(d time.Duration) (<-chan time.Time, func() bool) {
	t := time.NewTimer(d)
	return t.C, t.Stop
}

// Store buckets.
const (
	stateBucket = "automations"       // name -> state (JSON)
	addedBucket = "automations_added" // "specs" -> []Spec (JSON)
	addedKey    = "specs"
)

// Timing.
const (
	// maxSleep bounds one sleep of the loop. Timers run on the monotonic clock,
	// so a wall clock set forward (NTP after boot) would otherwise go unnoticed
	// until the old deadline: this is the only periodic wake-up, 24 a day.
	maxSleep = time.Hour
	// untrustedRecheck is how often an untrusted clock is looked at again.
	untrustedRecheck = time.Minute
)

// Options configure a Scheduler.
type Options struct {
	Store   KV
	Effects Effects
	Log     *slog.Logger
	Clock   Clock          // nil: the real clock
	Loc     *time.Location // the timezone: setting; nil: UTC
	// Lat and Lon are location:, for sun triggers (HasLocation false: none).
	Lat, Lon    float64
	HasLocation bool
	// TrustedAfter is the build date: a clock before it is wrong (a Pi without RTC
	// boots in 1970 or at the last shutdown time) and time triggers do not fire.
	TrustedAfter time.Time
	// Trusted, when set, is asked too (NTP synchronised?).
	Trusted func() bool
	// AsksPerDay is the global daily limit of ask runs (0: none allowed).
	AsksPerDay int
}

// Scheduler runs the automations.
type Scheduler struct {
	opt   Options
	clock Clock
	log   *slog.Logger

	mu       sync.Mutex
	jobs     map[string]*job
	trusted  bool
	wake     chan struct{}
	runs     inFlight
	watchers sync.WaitGroup
	watching bool // Run started the event watchers (a CLI process never does)
	ctx      context.Context
	// asks counts ask runs of all automations on askDay (a local date).
	askDay string
	asks   int
	// started counts runs started (benchmarks).
	started int
	// logs holds back repeated lines of frequent runs (lograte.go).
	logs logRate
}

type job struct {
	spec     Spec
	cron     cron.Schedule
	loc      *time.Location
	lat, lon float64
	st       state
	next     time.Time // the next due time (time triggers); zero: none
	ready    bool      // next computed (on a trusted clock)
	anchor   time.Time // every: the last due time
	lastWall time.Time // cron: the floating wall time of the last run
	running  bool
	cancel   context.CancelFunc // stops the event watcher
	// pendingValue is the event's value ({value}) for the run fire starts.
	pendingValue string
	// queue holds event values that came while a run was in progress.
	queue []string
	// budgetLogged is the day an over-budget skip was last logged (once a day).
	budgetLogged string
	// readOnly: its runs only read, and its state is saved lazily
	// (readonlyrun.go): saved is the last save, dirty a state not yet saved.
	readOnly bool
	saved    time.Time
	dirty    bool
}

// state is what the store keeps per automation. Running is written before any
// effect and cleared after: found set at start, the run was interrupted by a stop
// or a power cut; it is reported and never repeated (Last already covers it).
type state struct {
	Last     time.Time  `json:"last,omitzero"` // due time of the last run started
	Paused   bool       `json:"paused,omitempty"`
	Running  *runRecord `json:"running,omitempty"`
	Outcome  string     `json:"outcome,omitempty"` // of the last run
	Finished time.Time  `json:"finished,omitzero"`
	AskDay   string     `json:"ask_day,omitempty"`
	Asks     int        `json:"asks,omitempty"`
}

type runRecord struct {
	Due     time.Time `json:"due"`
	Started time.Time `json:"started"`
	Why     string    `json:"why"`
}

// New makes a scheduler over specs (from the config); automations added at run
// time are loaded from the store by Start.
func New(specs []Spec, opt Options) (*Scheduler, error) {
	s := &Scheduler{opt: opt, clock: opt.Clock, log: opt.Log, jobs: map[string]*job{}, wake: make(chan struct{}, 1)}
	if s.clock == nil {
		s.clock = realClock{}
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.opt.Loc == nil {
		s.opt.Loc = time.UTC
	}
	for _, sp := range specs {
		if err := s.addJob(sp); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (s *Scheduler) addJob(sp Spec) error {
	if err := sp.Check(); err != nil {
		return err
	}
	if _, dup := s.jobs[sp.Name]; dup {
		return fmt.Errorf("automation %s already exists", sp.Name)
	}
	if sp.Sun != "" && !s.opt.HasLocation {
		return fmt.Errorf("automation %s: a sun trigger needs location: in the config", sp.Name)
	}
	if sp.Do != "" && s.opt.Effects.Runner != nil {
		if _, err := s.opt.Effects.parse(sp.Do); err != nil {
			return fmt.Errorf("automation %s: do: %w", sp.Name, err)
		}
	}
	// The event source is looked up now (not only when watching starts), so that
	// auto/add with a pin or port that does not exist is refused at once.
	e := s.opt.Effects
	if sp.Pin != "" && e.Edges != nil {
		if _, err := e.Edges(sp.Pin); err != nil {
			return fmt.Errorf("automation %s: %w", sp.Name, err)
		}
	}
	if sp.Serial != "" && e.Lines != nil {
		if _, err := e.Lines(sp.Serial); err != nil {
			return fmt.Errorf("automation %s: %w", sp.Name, err)
		}
	}
	j := &job{spec: sp, loc: s.opt.Loc, lat: s.opt.Lat, lon: s.opt.Lon, readOnly: e.readOnlyRun(sp)}
	if sp.Cron != "" {
		j.cron, _ = parseCron(sp.Cron)
	}
	s.jobs[sp.Name] = j
	return nil
}

// Start loads the added automations and every automation's state, and reports
// runs a stop interrupted. Call it once before Run (Run calls it if not).
func (s *Scheduler) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ctx != nil {
		return nil
	}
	s.ctx = ctx
	added, err := s.loadAdded()
	if err != nil {
		return err
	}
	for _, sp := range added {
		if _, dup := s.jobs[sp.Name]; dup {
			s.log.Warn("automation added at run time has the name of a configured one; the configured one is used", "automation", sp.Name)
			continue
		}
		if err := s.addJob(sp); err != nil {
			s.log.Warn("automation from the store not loaded", "err", err)
		}
	}
	var interrupted []string
	for _, name := range s.names() {
		j := s.jobs[name]
		raw, found, err := s.opt.Store.Get(stateBucket, name)
		if err != nil {
			return err
		}
		if found {
			if err := json.Unmarshal(raw, &j.st); err != nil {
				s.log.Warn("automation state unreadable; starting afresh", "automation", name, "err", err)
				j.st = state{}
			}
		}
		if r := j.st.Running; r != nil {
			j.st.Running = nil
			j.st.Outcome = "interrupted: clawedge stopped during the run of " + r.Due.In(s.opt.Loc).Format(time.DateTime) + "; not repeated"
			j.st.Finished = s.clock.Now()
			if err := s.save(j); err != nil {
				return err
			}
			interrupted = append(interrupted, name)
		}
		if j.spec.Kind() == "every" && !j.st.Last.IsZero() {
			j.anchor = j.st.Last
		}
		if j.cron != nil && !j.st.Last.IsZero() {
			j.lastWall = floating(j.st.Last.In(s.opt.Loc))
		}
		if j.st.AskDay != "" && j.st.AskDay == s.day(s.clock.Now()) {
			s.askDay = j.st.AskDay
			s.asks += j.st.Asks
		}
	}
	if len(interrupted) > 0 {
		msg := fmt.Sprintf("automation runs interrupted by the last stop, not repeated (their effect may or may not have happened): %v", interrupted)
		s.log.Warn(msg)
		if n := s.opt.Effects.Notify; n != nil {
			n(ctx, msg)
		}
	}
	return nil
}

func (s *Scheduler) names() []string {
	names := make([]string, 0, len(s.jobs))
	for n := range s.jobs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// saveBefore makes a run's record durable before its effects; a read-only
// run has none, and saves later (readonlyrun.go).
func (s *Scheduler) saveBefore(j *job) error {
	if j.readOnly {
		return nil
	}
	return s.save(j)
}

func (s *Scheduler) save(j *job) error {
	b, err := json.Marshal(j.st)
	if err != nil {
		return err
	}
	return s.opt.Store.Put(stateBucket, j.spec.Name, b)
}

func (s *Scheduler) day(t time.Time) string { return t.In(s.opt.Loc).Format(time.DateOnly) }

// clockTrusted applies the untrusted-clock gate.
func (s *Scheduler) clockTrusted(now time.Time) bool {
	if now.Before(s.opt.TrustedAfter) {
		return false
	}
	return s.opt.Trusted == nil || s.opt.Trusted()
}

// Run fires the automations until ctx ends, sleeping until the next due time (no
// polling loop); it waits for runs in progress before returning.
func (s *Scheduler) Run(ctx context.Context) error {
	if err := s.Start(ctx); err != nil {
		return err
	}
	defer s.saveDirty() // after the runs in progress (defers run last first)
	defer s.runs.wait()
	defer s.watchers.Wait()
	s.mu.Lock()
	s.watching = true
	for _, name := range s.names() {
		s.watch(s.jobs[name])
	}
	s.mu.Unlock()
	for {
		wait := s.step(s.clock.Now())
		c, stop := s.clock.NewTimer(wait)
		select {
		case <-ctx.Done():
			stop()
			return nil
		case <-c:
		case <-s.wake:
			stop()
		}
	}
}

// poke makes Run look at the jobs again (a job added, resumed, removed).
func (s *Scheduler) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// step fires every time trigger due at now and returns how long to sleep.
func (s *Scheduler) step(now time.Time) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.clockTrusted(now) {
		if s.trusted {
			s.log.Warn("the clock is no longer trusted; time triggers are held", "now", now)
		}
		s.trusted = false
		for _, j := range s.jobs {
			j.ready = false
		}
		return untrustedRecheck
	}
	if !s.trusted {
		s.trusted = true
	}
	wait := maxSleep
	for _, name := range s.names() {
		j := s.jobs[name]
		if !j.spec.timed() {
			continue
		}
		if !j.ready {
			s.prepare(j, now)
		}
		if !j.next.IsZero() && !j.next.After(now) {
			due := j.next
			j.next = j.nextAfterRun(due, now)
			if !j.st.Paused {
				s.fire(j, due, "due")
			}
		}
		if !j.next.IsZero() {
			wait = min(wait, j.next.Sub(now))
		}
	}
	return max(wait, 0)
}

// nextAfterRun is the next due time after a run due at due, skipping any that
// passed while the loop was late (a slow run, a suspended board).
func (j *job) nextAfterRun(due, now time.Time) time.Time {
	j.anchor = due
	if j.cron != nil {
		j.lastWall = floating(due.In(j.loc))
	}
	return j.nextTime(now)
}

// prepare computes a time trigger's next due time once the clock is trusted,
// after a start or a clock change, applying catch_up to runs missed meanwhile.
func (s *Scheduler) prepare(j *job, now time.Time) {
	j.ready = true
	var missed time.Time
	switch {
	case !j.st.Last.IsZero():
		missed = j.nextTime(j.st.Last)
	case j.spec.Kind() == "at":
		missed = j.spec.At // never run: due at At
	}
	if !missed.IsZero() && !missed.After(now) && !j.st.Paused {
		if j.spec.CatchUp == "once" {
			j.next = j.nextAfterRun(missed, now)
			s.fire(j, missed, "catch-up")
			return
		}
		s.log.Info("automation missed a run while stopped or while the clock was wrong; skipped (catch_up: skip)", "automation", j.spec.Name, "due", missed)
	}
	if j.spec.Kind() == "every" && j.st.Last.IsZero() {
		j.anchor = now
	}
	j.next = j.nextTime(now)
}

// fire starts a run: it is recorded durably first (exactly once: a run whose
// record is written is never started again), then its actions run in the
// background. Called with s.mu held.
func (s *Scheduler) fire(j *job, due time.Time, why string) {
	if j.running {
		s.log.Warn("automation still running; this run is skipped", "automation", j.spec.Name, "due", due)
		return
	}
	now := s.clock.Now()
	j.st.Last = due
	if !j.readOnly {
		j.st.Running = &runRecord{Due: due, Started: now, Why: why}
	}
	if err := s.saveBefore(j); err != nil {
		// Without the record the run could repeat after a power cut: do not run.
		s.log.Error("automation not run: its run could not be recorded", "automation", j.spec.Name, "err", err)
		j.st.Running = nil
		return
	}
	s.log.Debug("automation run starting", "automation", j.spec.Name, "due", due.Format(time.RFC3339Nano), "why", why)
	j.running = true
	s.started++
	spec, value := j.spec, j.pendingValue
	j.pendingValue = ""
	ctx := s.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	s.runs.add()
	go func() {
		defer s.runs.done()
		outcome := s.execute(ctx, j, spec, due, value)
		countRun(spec.Name, outcome) // metrics.go
		s.mu.Lock()
		defer s.mu.Unlock()
		j.running = false
		j.st.Running = nil
		j.st.Outcome = outcome
		j.st.Finished = s.clock.Now()
		if s.jobs[spec.Name] != j {
			return // removed while it ran: its state is gone with it
		}
		save := s.save
		if j.readOnly {
			save = func(j *job) error { return s.saveLater(j, s.clock.Now()) }
		}
		if err := save(j); err != nil {
			s.log.Error("automation outcome not recorded", "automation", spec.Name, "err", err)
		}
		if len(j.queue) > 0 && !j.st.Paused {
			v := j.queue[0]
			j.queue = j.queue[1:]
			s.fireValue(j, v)
		}
	}()
}

// Event fires an event-triggered automation (a pin edge) with value.
func (s *Scheduler) Event(name, value string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j := s.jobs[name]
	if j == nil || j.st.Paused {
		return
	}
	s.fireValue(j, value)
}

// maxQueued bounds the events kept for an automation while it runs.
const maxQueued = 16

func (s *Scheduler) fireValue(j *job, value string) {
	if j.running {
		// Events (a line, an edge) that come during a run are run after it,
		// in order; only a flood beyond maxQueued is dropped, and logged.
		if len(j.queue) >= maxQueued {
			s.log.Warn("automation: too many events while it runs; this one is dropped", "automation", j.spec.Name, "value", value)
			return
		}
		j.queue = append(j.queue, value)
		return
	}
	j.pendingValue = value
	s.fire(j, s.clock.Now(), "event")
}

// Location is the time zone automations run in.
func (s *Scheduler) Location() *time.Location { return s.opt.Loc }

// Wait waits for the runs in progress (tests, shutdown).
func (s *Scheduler) Wait() { s.runs.wait() }

// ErrUnknown is returned for an automation name that does not exist.
var ErrUnknown = errors.New("no such automation")
