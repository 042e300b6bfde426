package main

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// reaper is the only caller of wait4: as PID 1 we inherit every orphan and
// must reap it, and a second waiter (os/exec's Wait) would race with us for
// our own children's exit status. Children started through it get theirs on
// a channel.
type reaper struct {
	mu      sync.Mutex
	waiting map[int]chan syscall.WaitStatus
}

func startReaper() *reaper {
	r := &reaper{waiting: map[int]chan syscall.WaitStatus{}}
	sigchld := make(chan os.Signal, 1)
	signal.Notify(sigchld, syscall.SIGCHLD)
	go func() {
		for range sigchld {
			r.reap()
		}
	}()
	return r
}

// reap collects every exited child; SIGCHLD signals coalesce, so one signal
// may stand for several exits.
func (r *reaper) reap() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
		if ch, ok := r.waiting[pid]; ok {
			ch <- ws
			delete(r.waiting, pid)
		}
	}
}

// start starts argv and returns its pid and a channel that receives its exit
// status. The lock spans the start, so the reaper cannot collect the child
// before it is registered.
func (r *reaper) start(argv []string, attr *os.ProcAttr) (*os.Process, <-chan syscall.WaitStatus, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p, err := os.StartProcess(argv[0], argv, attr)
	if err != nil {
		return nil, nil, err
	}
	ch := make(chan syscall.WaitStatus, 1)
	r.waiting[p.Pid] = ch
	return p, ch, nil
}

// signal sends sig to pid only while pid is still our unreaped child. Once
// reaped, the number may already belong to another process; the check and
// the kill share the lock with wait4, so the two cannot interleave.
func (r *reaper) signal(pid int, sig syscall.Signal) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.waiting[pid]; !ok {
		return false
	}
	return syscall.Kill(pid, sig) == nil
}

// supervisor keeps clawedge running: a crash is followed by a restart after
// a backoff that doubles up to maxBackoff, and resets once a run has lasted
// stableAfter, so a crash loop does not spin but a rare crash is fixed fast.
type supervisor struct {
	reaper *reaper
	argv   []string
	dir    string
	env    []string
	cred   *syscall.Credential // whom the child runs as; nil: as init (root)

	mu       sync.Mutex
	stopping bool
	pid      int           // of the running child, 0 between runs
	done     chan struct{} // closed when that child has exited
}

const (
	minBackoff  = time.Second
	maxBackoff  = 30 * time.Second
	stableAfter = time.Minute
)

// nextBackoff is the wait before the next start, after a run of length ran
// that followed a wait of prev.
func nextBackoff(prev, ran time.Duration) time.Duration {
	if ran >= stableAfter || prev < minBackoff {
		return minBackoff
	}
	return min(prev*2, maxBackoff)
}

func (s *supervisor) run() {
	backoff := time.Duration(0)
	for {
		s.mu.Lock()
		if s.stopping {
			s.mu.Unlock()
			return
		}
		null, _ := os.Open(os.DevNull)
		p, exited, err := s.reaper.start(s.argv, &os.ProcAttr{
			Dir: s.dir, Env: s.env,
			Files: []*os.File{null, os.Stdout, os.Stderr}, // logs go to the console
			Sys:   &syscall.SysProcAttr{Setsid: true, Credential: s.cred},
		})
		if null != nil {
			null.Close()
		}
		started := time.Now()
		done := make(chan struct{})
		if err == nil {
			s.pid, s.done = p.Pid, done
		}
		s.mu.Unlock()
		if err != nil {
			logf("start %s: %v", s.argv[0], err)
		} else {
			// Only run reads the exit status; stop learns of the exit from
			// done, which every waiter sees once closed.
			ws := <-exited
			logf("clawedge exited (%s) after %v", describe(ws), time.Since(started).Round(time.Second))
		}
		s.mu.Lock()
		stopping := s.stopping
		s.pid = 0
		close(done)
		s.mu.Unlock()
		if stopping {
			return
		}
		backoff = nextBackoff(backoff, time.Since(started))
		logf("restarting clawedge in %v", backoff)
		time.Sleep(backoff)
	}
}

// stop ends supervision: SIGTERM (clawedge returns its outputs to their safe
// levels and closes the store), then SIGKILL after grace. It reports
// whether the child ended within grace.
func (s *supervisor) stop(grace time.Duration) bool {
	s.mu.Lock()
	s.stopping = true
	pid, done := s.pid, s.done
	s.mu.Unlock()
	if pid == 0 {
		return true
	}
	s.reaper.signal(pid, syscall.SIGTERM)
	select {
	case <-done:
		logf("clawedge stopped")
		return true
	case <-time.After(grace):
		logf("clawedge did not stop within %v; killing it", grace)
		s.reaper.signal(pid, syscall.SIGKILL)
		select {
		case <-done:
		case <-time.After(2 * time.Second):
		}
		return false
	}
}

func describe(ws syscall.WaitStatus) string {
	switch {
	case ws.Signaled():
		return "signal " + ws.Signal().String()
	case ws.Exited():
		return "status " + itoa(ws.ExitStatus())
	}
	return "status ?"
}

func itoa(n int) string {
	if n < 0 {
		return "-" + itoa(-n)
	}
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}
