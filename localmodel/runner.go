package localmodel

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/clawedge/clawedge/llm"
	"github.com/clawedge/clawedge/localmodel/wire"
)

// runner is one clawedge-llm process and the connection to it (wire.Conn
// routes each response to the request it answers); when the process dies
// every waiting request learns why.
type runner struct {
	cmd  *exec.Cmd
	conn *wire.Conn
	log  *slog.Logger
	tail *tailWriter // the last lines of its stderr, for error messages

	mu       sync.Mutex
	stopping bool // we asked it to go: its end is not a crash
}

func startRunner(path string, env []string, command func(string, []string) (*exec.Cmd, error), log *slog.Logger) (*runner, error) {
	cmd := exec.Command(path)
	cmd.Env = append(os.Environ(), env...)
	if command != nil {
		var err error
		if cmd, err = command(path, env); err != nil {
			return nil, fmt.Errorf("local model: confining the runner %s: %w", path, err)
		}
	}
	r := &runner{cmd: cmd, log: log, tail: &tailWriter{log: log, max: 8}}
	cmd.Stderr = r.tail
	conn, err := wire.Start(cmd, 64, r.ended)
	if err != nil {
		return nil, fmt.Errorf("local model: starting the runner %s: %w", path, err)
	}
	r.conn = conn
	log.Debug("local model runner started", "runner", path, "pid", cmd.Process.Pid)
	return r, nil
}

func (r *runner) pid() int { return r.cmd.Process.Pid }

// ended reaps the process once its output has ended and says why it ended
// (the Conn's Err, which every waiting request gets).
func (r *runner) ended(readErr error) error {
	// The process closed its stdout: it is exiting. Give it a moment, then
	// make sure (a runner that speaks garbage is killed too).
	waited := make(chan error, 1)
	go func() { waited <- r.cmd.Wait() }()
	var waitErr error
	select {
	case waitErr = <-waited:
	case <-time.After(3 * time.Second):
		r.cmd.Process.Kill()
		waitErr = <-waited
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopping {
		return fmt.Errorf("local model: the runner was stopped: %w", llm.ErrUnavailable)
	}
	cause := "exited"
	if waitErr != nil {
		cause = waitErr.Error() // "signal: killed", "exit status 2"
	} else if readErr != nil && !errors.Is(readErr, io.EOF) {
		cause = readErr.Error()
	}
	msg := fmt.Sprintf("local model: the runner (pid %d) died: %s", r.pid(), cause)
	if t := r.tail.last(); t != "" {
		msg += "; its last words: " + t
	}
	r.log.Warn("local model runner died", "pid", r.pid(), "cause", cause, "stderr", r.tail.last())
	return fmt.Errorf("%s: %w", msg, llm.ErrUnavailable)
}

// deathErr is why the runner ended (nil while it runs).
func (r *runner) deathErr() error { return r.conn.Err() }

func (r *runner) alive() bool {
	select {
	case <-r.conn.Ended():
		return false
	default:
		return true
	}
}

// send sends a request and returns the channel its responses arrive on;
// the channel is closed after the final one, or if the runner dies first.
func (r *runner) send(req wire.Request) (uint64, <-chan wire.Response, error) {
	id, ch, err := r.conn.Send(req)
	if err != nil && !errors.Is(err, llm.ErrUnavailable) { // not its death: the write failed
		return 0, nil, r.unsent(err)
	}
	return id, ch, err
}

// unsent says why a request could not be written: the runner's death when it
// is being reaped, rather than "broken pipe".
func (r *runner) unsent(err error) error {
	if e := r.waitDeath(); e != nil {
		return e
	}
	return fmt.Errorf("local model: %v: %w", err, llm.ErrUnavailable)
}

// notify sends a request whose answer nobody waits for (cancel).
func (r *runner) notify(req wire.Request) { r.conn.Notify(req) }

func (r *runner) forget(id uint64) { r.conn.Forget(id) }

// waitDeath gives a runner whose pipe broke a moment to be reaped, so the
// error says why it died rather than "broken pipe".
func (r *runner) waitDeath() error {
	select {
	case <-r.conn.Ended():
		return r.deathErr()
	case <-time.After(time.Second):
		return nil
	}
}

// call sends a request and waits for its single answer; a closed cancel
// returns errCancelled.
func (r *runner) call(req wire.Request, cancel <-chan struct{}) (wire.Response, error) {
	resp, err := r.conn.Call(req, cancel)
	if err != nil && resp.Type == "" && !errors.Is(err, llm.ErrUnavailable) && !errors.Is(err, errCancelled) {
		return resp, r.unsent(err) // neither an answer, its death nor a cancel: the write failed
	}
	return resp, err
}

var errCancelled = wire.ErrCancelled

// stop asks the runner to exit (closing its stdin is the protocol's way)
// and kills it if it has not within grace.
func (r *runner) stop(grace time.Duration) {
	r.mu.Lock()
	r.stopping = true
	r.mu.Unlock()
	r.conn.Close()
	select {
	case <-r.conn.Ended():
	case <-time.After(grace):
		r.cmd.Process.Kill()
		<-r.conn.Ended()
	}
}

// tailWriter logs the runner's stderr line by line and keeps the last few
// lines for error messages.
type tailWriter struct {
	log     *slog.Logger
	max     int
	mu      sync.Mutex
	partial []byte
	lines   []string
}

func (t *tailWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.partial = append(t.partial, p...)
	for {
		i := bytes.IndexByte(t.partial, '\n')
		if i < 0 {
			break
		}
		line := strings.TrimSpace(string(t.partial[:i]))
		t.partial = t.partial[i+1:]
		if line == "" {
			continue
		}
		t.log.Debug("runner", "stderr", line)
		t.lines = append(t.lines, line)
		if len(t.lines) > t.max {
			t.lines = t.lines[1:]
		}
	}
	if len(t.partial) > 4096 { // a runaway line: keep its start
		t.partial = t.partial[:4096]
	}
	return len(p), nil
}

func (t *tailWriter) last() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(t.lines, " | ")
}
