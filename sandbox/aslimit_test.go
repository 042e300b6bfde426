package sandbox

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
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

// The program gets the soft open-files limit the helper started with, which
// the helper's Go runtime raised for itself: the raw exec restores it as
// syscall.Exec would (old programs use select and its fixed fd_set).
func TestNoFileLimitIsRestored(t *testing.T) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil || lim.Max < 2000 {
		t.Skipf("hard open-files limit %d (%v): nothing to raise", lim.Max, err)
	}
	low := syscall.Rlimit{Cur: 1000, Max: lim.Max}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Fatal(err)
	}
	defer syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
	s := Spec{Program: "/bin/sh", Args: []string{"-c", "ulimit -Sn"}, Read: []string{"/usr/bin"}}
	if res := mustRun(t, runner(), s); string(res.Stdout) != "1000\n" {
		t.Errorf("the program's soft limit: %q %q", res.Stdout, res.Stderr)
	}
	s.Limits.NoFile = 64
	if res := mustRun(t, runner(), s); string(res.Stdout) != "64\n" {
		t.Errorf("with nofile 64: %q %q", res.Stdout, res.Stderr)
	}
}
