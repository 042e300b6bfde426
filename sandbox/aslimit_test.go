package sandbox

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The address-space limit (memory_mb) is set in the helper, a Go program
// whose runtime reserves hundreds of MB: past the limit any new mapping
// fails, and a runtime that needed one (a heap arena, span metadata, the
// stack of a thread it starts when a P goes idle) died with "fatal error:
// runtime: cannot allocate memory" before the program ran, more often the
// busier the machine. Here many runs at once, on a machine kept busy, each
// with a limit far below what the helper already holds, must all run.
func TestMemoryLimitHoldsUnderLoad(t *testing.T) {
	stop := make(chan struct{})
	var spin sync.WaitGroup
	for range runtime.NumCPU() * 2 {
		spin.Add(1)
		go func() {
			defer spin.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				_ = make([]byte, 64<<10) // garbage, so this process's GC runs too
			}
		}()
	}
	defer func() { close(stop); spin.Wait() }()

	runs := 400
	if testing.Short() {
		runs = 50
	}
	r := runner()
	var failed atomic.Int32
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4*runtime.NumCPU())
	for i := range runs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			s := Spec{Program: "/usr/bin/echo", Args: []string{"hello"}, UID: -1, GID: -1,
				Limits: Limits{MemoryMB: 16, NoFile: 64}}
			res, err := r.Run(context.Background(), s, 30*time.Second)
			if err != nil || res.ExitCode != 0 || string(res.Stdout) != "hello\n" {
				if failed.Add(1) <= 3 {
					t.Errorf("run %d: %v, exit %d, signal %q, stdout %q, stderr %q", i, err, res.ExitCode, res.Signal, res.Stdout, res.Stderr)
				}
			}
		}()
	}
	wg.Wait()
	if n := failed.Load(); n > 0 {
		t.Errorf("%d of %d runs failed", n, runs)
	}
}
