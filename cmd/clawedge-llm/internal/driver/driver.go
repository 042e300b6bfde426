// Package driver starts a clawedge-llm runner and talks to it over the
// localmodel/wire protocol. It is the runner's test and benchmark harness
// (the runner's tests, the arm64 smoke test under QEMU, scripts/bench/llm.sh),
// not the core's client: that one lives in package localmodel and also
// supervises and restarts the runner.
package driver

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/clawedge/clawedge/localmodel/wire"
)

// Client is one running runner process.
type Client struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	w     *wire.Writer

	mu     sync.Mutex
	nextID uint64
	subs   map[uint64]chan wire.Response
	err    error         // why the reader stopped (io.EOF: the runner closed stdout)
	ended  chan struct{} // closed when the reader stopped
	stderr lockedBuffer
}

// Start runs argv (the runner, possibly behind an emulator) with env added to
// this process's environment.
func Start(argv []string, env ...string) (*Client, error) {
	if len(argv) == 0 {
		return nil, errors.New("driver: no command")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	c := &Client{cmd: cmd, subs: map[uint64]chan wire.Response{}, ended: make(chan struct{})}
	cmd.Stderr = &c.stderr
	var err error
	if c.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c.w = wire.NewWriter(c.stdin)
	go c.read(stdout)
	return c, nil
}

func (c *Client) read(r io.Reader) {
	var err error
	for {
		var resp wire.Response
		if err = wire.Read(r, &resp); err != nil {
			break
		}
		c.mu.Lock()
		ch := c.subs[resp.ID]
		final := resp.Type != wire.TypeToken
		if final {
			delete(c.subs, resp.ID)
		}
		c.mu.Unlock()
		if ch == nil {
			continue // an answer nobody waits for
		}
		ch <- resp
		if final {
			close(ch)
		}
	}
	c.mu.Lock()
	c.err = err
	for id, ch := range c.subs {
		close(ch)
		delete(c.subs, id)
	}
	c.mu.Unlock()
	close(c.ended)
}

// Send sends a request with a fresh ID and returns the channel of its
// responses: closed after the final one, or early if the runner's output ended
// (then ReadErr says why).
func (c *Client) Send(req wire.Request) (uint64, <-chan wire.Response, error) {
	ch := make(chan wire.Response, 1024)
	c.mu.Lock()
	if c.err != nil || isClosed(c.ended) {
		c.mu.Unlock()
		return 0, nil, fmt.Errorf("driver: runner gone: %v", c.err)
	}
	c.nextID++
	req.ID = c.nextID
	c.subs[req.ID] = ch
	c.mu.Unlock()
	if err := c.w.Write(req); err != nil {
		c.mu.Lock()
		delete(c.subs, req.ID)
		c.mu.Unlock()
		return 0, nil, fmt.Errorf("driver: write: %w", err)
	}
	return req.ID, ch, nil
}

// Call sends a request and returns its final response; an "error" response
// becomes an error.
func (c *Client) Call(req wire.Request) (wire.Response, error) {
	_, ch, err := c.Send(req)
	if err != nil {
		return wire.Response{}, err
	}
	var last wire.Response
	got := false
	for r := range ch {
		last, got = r, true
	}
	if !got || last.Type == wire.TypeToken {
		return wire.Response{}, fmt.Errorf("driver: runner ended without an answer: %v", c.ReadErr())
	}
	if last.Type == wire.TypeError {
		return last, errors.New(last.Error)
	}
	return last, nil
}

func (c *Client) Health() (*wire.Health, error) {
	r, err := c.Call(wire.Request{Op: wire.OpHealth})
	return r.Health, err
}

func (c *Client) Load(l wire.Load) (*wire.Model, error) {
	r, err := c.Call(wire.Request{Op: wire.OpLoad, Load: &l})
	return r.Model, err
}

func (c *Client) Tokenize(text string, special bool) ([]int32, error) {
	r, err := c.Call(wire.Request{Op: wire.OpTokenize, Tokenize: &wire.Tokenize{Text: text, Special: special}})
	return r.Tokens, err
}

func (c *Client) Stats() (*wire.Stats, error) {
	r, err := c.Call(wire.Request{Op: wire.OpStats})
	return r.Stats, err
}

func (c *Client) Cancel(target uint64) error {
	_, err := c.Call(wire.Request{Op: wire.OpCancel, Cancel: &wire.Cancel{Target: target}})
	return err
}

// Result is a finished generation.
type Result struct {
	ID     uint64
	Tokens []wire.Token
	Done   *wire.Done
}

// IDs are the generated token IDs.
func (r *Result) IDs() []int32 {
	ids := make([]int32, len(r.Tokens))
	for i, t := range r.Tokens {
		ids[i] = t.ID
	}
	return ids
}

// Text joins the tokens' text.
func (r *Result) Text() string {
	var b strings.Builder
	for _, t := range r.Tokens {
		b.WriteString(t.Text)
	}
	return b.String()
}

// Generate runs a generation to its end. onToken, if set, sees each token as
// it arrives (with the request's ID, for Cancel).
func (c *Client) Generate(g wire.Generate, onToken func(id uint64, t wire.Token)) (*Result, error) {
	id, ch, err := c.Send(wire.Request{Op: wire.OpGenerate, Generate: &g})
	if err != nil {
		return nil, err
	}
	res := &Result{ID: id}
	for r := range ch {
		switch r.Type {
		case wire.TypeToken:
			res.Tokens = append(res.Tokens, *r.Token)
			if onToken != nil {
				onToken(id, *r.Token)
			}
		case wire.TypeDone:
			res.Done = r.Done
		case wire.TypeError:
			return res, errors.New(r.Error)
		default:
			return res, fmt.Errorf("driver: unexpected %q response to generate", r.Type)
		}
	}
	if res.Done == nil {
		return res, fmt.Errorf("driver: runner ended during generation: %v", c.ReadErr())
	}
	return res, nil
}

// ReadErr is why the runner's output ended (io.EOF when it closed it, as it
// does when it exits), or nil while it is open.
func (c *Client) ReadErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Ended is closed when the runner's output has ended.
func (c *Client) Ended() <-chan struct{} { return c.ended }

// Pid is the runner's process ID.
func (c *Client) Pid() int { return c.cmd.Process.Pid }

// PeakRSS is the runner's peak resident set size in bytes (VmHWM), read from
// /proc while it runs.
func (c *Client) PeakRSS() (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(c.Pid()) + "/status")
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, errors.New("no VmHWM in /proc status")
}

// Stderr is what the runner wrote to its stderr so far.
func (c *Client) Stderr() string { return c.stderr.String() }

// Close closes the runner's stdin (which asks it to exit) and waits up to
// timeout for it, killing it after that.
func (c *Client) Close(timeout time.Duration) error {
	c.stdin.Close()
	select {
	case <-c.ended:
	case <-time.After(timeout):
		c.cmd.Process.Kill()
		<-c.ended
		c.cmd.Wait()
		return fmt.Errorf("driver: runner did not exit within %v of closing its stdin; killed", timeout)
	}
	return c.cmd.Wait()
}

// Kill kills the runner (SIGKILL) and reaps it.
func (c *Client) Kill() error {
	c.cmd.Process.Kill()
	<-c.ended // read to the end before Wait closes the pipe
	err := c.cmd.Wait()
	c.stdin.Close()
	return err
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
