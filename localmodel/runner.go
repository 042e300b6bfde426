package localmodel

import (
	"bufio"
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

// runner is one clawedge-llm process and the connection to it. A reader
// goroutine routes each response to the request it answers; when the process
// dies every waiting request learns why.
type runner struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *wire.Writer
	log   *slog.Logger
	tail  *tailWriter // the last lines of its stderr, for error messages

	mu       sync.Mutex
	nextID   uint64
	pending  map[uint64]chan wire.Response
	err      error // why it ended; set before pending channels close
	stopping bool  // we asked it to go: its end is not a crash
	exited   chan struct{}
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
	tail := &tailWriter{log: log, max: 8}
	cmd.Stderr = tail
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("local model: starting the runner %s: %w", path, err)
	}
	r := &runner{cmd: cmd, stdin: stdin, out: wire.NewWriter(stdin), log: log, tail: tail,
		pending: map[uint64]chan wire.Response{}, exited: make(chan struct{})}
	log.Debug("local model runner started", "runner", path, "pid", cmd.Process.Pid)
	go r.read(bufio.NewReaderSize(stdout, 64<<10))
	return r, nil
}

func (r *runner) pid() int { return r.cmd.Process.Pid }

// read routes responses until the stream ends, then reaps the process.
func (r *runner) read(in io.Reader) {
	var readErr error
	for {
		var resp wire.Response
		if err := wire.Read(in, &resp); err != nil {
			readErr = err
			break
		}
		r.mu.Lock()
		ch := r.pending[resp.ID]
		r.mu.Unlock()
		if ch != nil {
			ch <- resp // buffered; a slow reader holds the runner back, which is right
		}
	}
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
	switch {
	case r.stopping:
		r.err = fmt.Errorf("local model: the runner was stopped: %w", llm.ErrUnavailable)
	default:
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
		r.err = fmt.Errorf("%s: %w", msg, llm.ErrUnavailable)
		r.log.Warn("local model runner died", "pid", r.pid(), "cause", cause, "stderr", r.tail.last())
	}
	for id, ch := range r.pending {
		close(ch)
		delete(r.pending, id)
	}
	close(r.exited)
}

// deathErr is why the runner ended (nil while it runs).
func (r *runner) deathErr() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

func (r *runner) alive() bool {
	select {
	case <-r.exited:
		return false
	default:
		return true
	}
}

// send sends a request and returns the channel its responses arrive on;
// the channel is closed if the runner dies first.
func (r *runner) send(req wire.Request) (uint64, <-chan wire.Response, error) {
	r.mu.Lock()
	if r.err != nil {
		r.mu.Unlock()
		return 0, nil, r.err
	}
	r.nextID++
	req.ID = r.nextID
	ch := make(chan wire.Response, 64)
	r.pending[req.ID] = ch
	r.mu.Unlock()
	if err := r.out.Write(req); err != nil {
		r.forget(req.ID)
		if e := r.waitDeath(); e != nil {
			return 0, nil, e
		}
		return 0, nil, fmt.Errorf("local model: writing to the runner: %v: %w", err, llm.ErrUnavailable)
	}
	return req.ID, ch, nil
}

// notify sends a request whose answer nobody waits for (cancel).
func (r *runner) notify(req wire.Request) {
	r.mu.Lock()
	r.nextID++
	req.ID = r.nextID
	r.mu.Unlock()
	r.out.Write(req)
}

func (r *runner) forget(id uint64) {
	r.mu.Lock()
	delete(r.pending, id)
	r.mu.Unlock()
}

// waitDeath gives a runner whose pipe broke a moment to be reaped, so the
// error says why it died rather than "broken pipe".
func (r *runner) waitDeath() error {
	select {
	case <-r.exited:
		return r.deathErr()
	case <-time.After(time.Second):
		return nil
	}
}

// call sends a request and waits for its single answer.
func (r *runner) call(req wire.Request, cancel <-chan struct{}) (wire.Response, error) {
	id, ch, err := r.send(req)
	if err != nil {
		return wire.Response{}, err
	}
	defer r.forget(id)
	select {
	case resp, ok := <-ch:
		if !ok {
			return wire.Response{}, r.deathErr()
		}
		if resp.Type == wire.TypeError {
			return resp, errors.New(resp.Error)
		}
		return resp, nil
	case <-cancel:
		return wire.Response{}, errCancelled
	}
}

var errCancelled = errors.New("cancelled")

// stop asks the runner to exit (closing its stdin is the protocol's way)
// and kills it if it has not within grace.
func (r *runner) stop(grace time.Duration) {
	r.mu.Lock()
	r.stopping = true
	r.mu.Unlock()
	r.stdin.Close()
	select {
	case <-r.exited:
	case <-time.After(grace):
		r.cmd.Process.Kill()
		<-r.exited
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
