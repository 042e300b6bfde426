package main

import (
	"os"
	"syscall"
	"testing"
	"time"
)

// TestStopReturnsWhenChildExits: run and stop both wait for the same child;
// stop must learn of the exit rather than sit out its whole grace period
// (which it did when both read the one-slot exit channel and run won), and
// must not signal the pid once it has been reaped.
func TestStopReturnsWhenChildExits(t *testing.T) {
	sleep, err := os.Stat("/bin/sleep")
	if err != nil || sleep.IsDir() {
		t.Skip("no /bin/sleep")
	}
	s := &supervisor{reaper: startReaper(), argv: []string{"/bin/sleep", "600"}, dir: t.TempDir()}
	ran := make(chan struct{})
	go func() { s.run(); close(ran) }()
	var pid int
	for pid == 0 { // wait for the start; not a timing assumption
		time.Sleep(time.Millisecond)
		s.mu.Lock()
		pid = s.pid
		s.mu.Unlock()
	}
	// A grace far beyond the test's budget: stopping in time is the point.
	if !s.stop(time.Minute) {
		t.Fatal("stop waited out its grace although the child ended at SIGTERM")
	}
	<-ran
	if s.reaper.signal(pid, syscall.SIGKILL) {
		t.Errorf("signalled pid %d after it was reaped", pid)
	}
	if !s.stop(time.Minute) {
		t.Error("a second stop with nothing running reported a failure")
	}
}
