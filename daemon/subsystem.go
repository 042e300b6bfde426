package daemon

// This file: the daemon's lifecycle. The daemon is a Core (opened once) and
// subsystems, each started in one declared order (Serve lists them) and
// stopped in the reverse one; one that fails to start is named in the error
// and those already started are stopped.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Subsystem is one part of the running daemon: a door (a console, Telegram,
// MQTT, MCP, the dashboard, the control socket) or a source of work
// (automations, goals, the store's upkeep). Its dependencies are given to
// its constructor; what it offers others is an interface it implements.
type Subsystem interface {
	Name() string
	// Start returns once the subsystem runs (or why it cannot); what it
	// starts lives until Stop, not until ctx, which only bounds starting.
	Start(ctx context.Context) error
	// Stop ends what Start started and waits for it, at most until ctx ends.
	Stop(ctx context.Context) error
}

// ErrStopping is why calls still running at a clean stop are cancelled; it
// is a context.Canceled, the normal end of the daemon.
var ErrStopping error = stoppingError{}

type stoppingError struct{}

func (stoppingError) Error() string        { return "cancelled: clawedge stopping" }
func (stoppingError) Is(target error) bool { return target == context.Canceled }

// StopTimeout bounds how long Run waits for each subsystem to stop.
var StopTimeout = 30 * time.Second

// Run starts subs in their order, calls ready with their names, and, when
// ctx ends, calls stopping and stops them in the reverse order. ctx's cause is Run's error
// unless it is a context.Canceled (a signal, a clean stop): a subsystem's
// fatal error (a token Telegram refuses) ends the daemon through it.
func Run(ctx context.Context, subs []Subsystem, ready func(names []string), stopping func()) error {
	var started []Subsystem
	var names []string
	for _, s := range subs {
		if err := s.Start(ctx); err != nil {
			stopAll(started)
			return fmt.Errorf("%s: %w", s.Name(), err)
		}
		started = append(started, s)
		names = append(names, s.Name())
	}
	if ready != nil {
		ready(names)
	}
	<-ctx.Done()
	if stopping != nil {
		stopping()
	}
	err := stopAll(started)
	if cause := context.Cause(ctx); !errors.Is(cause, context.Canceled) {
		return cause
	}
	return err
}

// stopAll stops subs in reverse order, each within StopTimeout, and says
// which did not stop cleanly.
func stopAll(subs []Subsystem) error {
	var errs []error
	for i := len(subs) - 1; i >= 0; i-- {
		ctx, cancel := context.WithTimeout(context.Background(), StopTimeout)
		if err := subs[i].Stop(ctx); err != nil {
			errs = append(errs, fmt.Errorf("stopping %s: %w", subs[i].Name(), err))
		}
		cancel()
	}
	return errors.Join(errs...)
}

// task is a subsystem whose work runs in goroutines until Stop cancels
// them: run starts them on wg with the subsystem's own context.
type task struct {
	name string
	run  func(ctx context.Context, wg *sync.WaitGroup) error

	cancel context.CancelCauseFunc
	wg     sync.WaitGroup
}

func newTask(name string, run func(ctx context.Context, wg *sync.WaitGroup) error) *task {
	return &task{name: name, run: run}
}

func (t *task) Name() string { return t.name }

func (t *task) Start(ctx context.Context) error {
	// Its own life, not ctx's: the daemon stops its subsystems one by one,
	// in reverse order.
	life, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	t.cancel = cancel
	if err := t.run(life, &t.wg); err != nil {
		cancel(err)
		t.wg.Wait()
		return err
	}
	return nil
}

func (t *task) Stop(ctx context.Context) error {
	if t.cancel == nil {
		return nil
	}
	t.cancel(ErrStopping)
	done := make(chan struct{})
	go func() { t.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("still running after %v", StopTimeout)
	}
}
