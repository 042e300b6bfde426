package daemon

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeSub records its starts and stops in the shared log.
type fakeSub struct {
	name     string
	log      *[]string
	mu       *sync.Mutex
	startErr error
	stopErr  error
}

func (f *fakeSub) Name() string { return f.name }

func (f *fakeSub) Start(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	*f.log = append(*f.log, "start "+f.name)
	return f.startErr
}

func (f *fakeSub) Stop(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	*f.log = append(*f.log, "stop "+f.name)
	return f.stopErr
}

func fakes(log *[]string, names ...string) []Subsystem {
	var mu sync.Mutex
	var out []Subsystem
	for _, n := range names {
		out = append(out, &fakeSub{name: n, log: log, mu: &mu})
	}
	return out
}

// The subsystems start in their declared order, ready comes once all run,
// and they stop in the reverse order when the daemon is stopped.
func TestRunOrder(t *testing.T) {
	var log []string
	subs := fakes(&log, "store", "telegram", "control")
	ctx, cancel := context.WithCancelCause(context.Background())
	var ready []string
	done := make(chan error)
	go func() {
		done <- Run(ctx, subs, func(names []string) {
			ready = names
			log = append(log, "ready")
			cancel(ErrStopping)
		}, func() { log = append(log, "stopping") })
	}()
	if err := <-done; err != nil {
		t.Fatalf("a clean stop: %v", err)
	}
	want := []string{"start store", "start telegram", "start control", "ready", "stopping", "stop control", "stop telegram", "stop store"}
	if !slices.Equal(log, want) {
		t.Errorf("order %q, want %q", log, want)
	}
	if !slices.Equal(ready, []string{"store", "telegram", "control"}) {
		t.Errorf("ready with %q", ready)
	}
}

// A subsystem that fails to start is named in the error; those already
// started are stopped (in reverse), the later ones never start, and ready
// is not said.
func TestRunStartFailure(t *testing.T) {
	var log []string
	subs := fakes(&log, "store", "mqtt", "web")
	subs[1].(*fakeSub).startErr = errors.New("broker URL: bad scheme")
	err := Run(context.Background(), subs, func([]string) { t.Error("ready after a failed start") }, nil)
	if err == nil || err.Error() != "mqtt: broker URL: bad scheme" {
		t.Fatalf("error %v, want the subsystem named", err)
	}
	want := []string{"start store", "start mqtt", "stop store"}
	if !slices.Equal(log, want) {
		t.Errorf("order %q, want %q", log, want)
	}
}

// A subsystem's fatal error (ctx's cause) is Run's error, after every
// subsystem stopped; a stop that fails is said too, without hiding the rest.
func TestRunFatalAndStopErrors(t *testing.T) {
	var log []string
	subs := fakes(&log, "a", "b")
	subs[1].(*fakeSub).stopErr = errors.New("stuck")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("telegram refused the token"))
	err := Run(ctx, subs, nil, nil)
	if err == nil || err.Error() != "telegram refused the token" {
		t.Fatalf("error %v", err)
	}
	if !slices.Equal(log, []string{"start a", "start b", "stop b", "stop a"}) {
		t.Errorf("order %q", log)
	}
	ctx, cancel = context.WithCancelCause(context.Background())
	cancel(ErrStopping)
	log = nil
	err = Run(ctx, subs, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "stopping b: stuck") {
		t.Fatalf("a failed stop: %v", err)
	}
}

// A task's goroutines get their own life: the daemon's context ending does
// not stop them, Stop does (with ErrStopping as the cause), and Stop waits
// for them, within its context.
func TestTaskLifecycle(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var cause error
	stopped := make(chan struct{})
	tk := newTask("worker", func(life context.Context, wg *sync.WaitGroup) error {
		wg.Go(func() {
			<-life.Done()
			cause = context.Cause(life)
			close(stopped)
		})
		return nil
	})
	if err := tk.Start(ctx); err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case <-stopped:
		t.Fatal("the task stopped with the context it was started with")
	case <-time.After(50 * time.Millisecond):
	}
	if err := tk.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	<-stopped
	if !errors.Is(cause, context.Canceled) || cause.Error() != ErrStopping.Error() {
		t.Errorf("cause %v, want ErrStopping", cause)
	}

	// One that does not end within Stop's context is reported, not waited for.
	block := make(chan struct{})
	defer close(block)
	stuck := newTask("stuck", func(_ context.Context, wg *sync.WaitGroup) error {
		wg.Go(func() { <-block })
		return nil
	})
	stuck.Start(context.Background())
	sctx, scancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer scancel()
	if err := stuck.Stop(sctx); err == nil {
		t.Error("a task that did not stop reported none")
	}
}
