// Package driver starts a clawedge-llm runner and talks to it over the
// localmodel/wire protocol. It is the runner's test and benchmark harness
// (the runner's tests, the arm64 smoke test under QEMU, scripts/bench/llm.sh),
// not the core's client: that one lives in package localmodel and also
// supervises and restarts the runner. Both speak through wire.Conn.
package driver

import (
	"bytes"
	"errors"
	"fmt"
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
	cmd    *exec.Cmd
	conn   *wire.Conn
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
	c := &Client{cmd: cmd}
	cmd.Stderr = &c.stderr
	// A test may leave a long generation's tokens unread while it sends other
	// requests: a deep buffer keeps their answers flowing.
	conn, err := wire.Start(cmd, 1024, nil)
	if err != nil {
		return nil, err
	}
	c.conn = conn
	return c, nil
}

// Send sends a request with a fresh ID and returns the channel of its
// responses: closed after the final one, or early if the runner's output ended
// (then ReadErr says why).
func (c *Client) Send(req wire.Request) (uint64, <-chan wire.Response, error) {
	id, ch, err := c.conn.Send(req)
	if err != nil {
		return 0, nil, fmt.Errorf("driver: %s: %w", req.Op, err)
	}
	return id, ch, nil
}

// Call sends a request and returns its final response; an "error" response
// becomes an error.
func (c *Client) Call(req wire.Request) (wire.Response, error) {
	resp, err := c.conn.Call(req, nil)
	if err != nil && resp.Type == "" { // not sent, or the runner ended without an answer
		return resp, fmt.Errorf("driver: %s: no answer: %w", req.Op, err)
	}
	return resp, err
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
func (c *Client) ReadErr() error { return c.conn.Err() }

// Ended is closed when the runner's output has ended.
func (c *Client) Ended() <-chan struct{} { return c.conn.Ended() }

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
	c.conn.Close()
	select {
	case <-c.conn.Ended():
	case <-time.After(timeout):
		c.cmd.Process.Kill()
		<-c.conn.Ended()
		c.cmd.Wait()
		return fmt.Errorf("driver: runner did not exit within %v of closing its stdin; killed", timeout)
	}
	return c.cmd.Wait()
}

// Kill kills the runner (SIGKILL) and reaps it.
func (c *Client) Kill() error {
	c.cmd.Process.Kill()
	<-c.conn.Ended() // read to the end before Wait closes the pipe
	err := c.cmd.Wait()
	c.conn.Close()
	return err
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
