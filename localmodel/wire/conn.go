package wire

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
)

// Conn is the client's end of the protocol: it gives each request a fresh ID
// and routes each response to the request it answers. The core's runner
// client (localmodel, which also supervises and restarts the runner) and the
// runner's test and benchmark harness (cmd/clawedge-llm/internal/driver) both
// talk through it.
type Conn struct {
	in     io.WriteCloser
	w      *Writer
	buffer int
	end    func(readErr error) error

	mu     sync.Mutex
	nextID uint64
	subs   map[uint64]chan Response
	err    error         // why the stream ended; set before ended closes
	ended  chan struct{} // closed when the reader stopped, after subs are closed
}

// Start starts cmd (a runner; its environment and stderr are the caller's)
// and returns a Conn on its stdin and stdout. See NewConn for buffer and end.
func Start(cmd *exec.Cmd, buffer int, end func(readErr error) error) (*Conn, error) {
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return NewConn(stdin, stdout, buffer, end), nil
}

// NewConn talks to a runner that reads requests from in and writes responses
// to out. Each request's responses are buffered up to buffer; past that a
// reader that does not keep up holds the runner back, which is right. When
// out ends, end (nil: none) is called with why it ended (io.EOF when the
// runner closed it) and what it returns is Err: the client reaps its process
// there, so that a request still waiting learns why the runner died.
func NewConn(in io.WriteCloser, out io.Reader, buffer int, end func(readErr error) error) *Conn {
	c := &Conn{in: in, w: NewWriter(in), buffer: buffer, end: end,
		subs: map[uint64]chan Response{}, ended: make(chan struct{})}
	go c.read(bufio.NewReaderSize(out, 64<<10))
	return c
}

// read routes responses until the stream ends.
func (c *Conn) read(out io.Reader) {
	var err error
	for {
		var resp Response
		if err = Read(out, &resp); err != nil {
			break
		}
		c.mu.Lock()
		ch := c.subs[resp.ID]
		final := resp.Type != TypeToken
		if final {
			delete(c.subs, resp.ID)
		}
		c.mu.Unlock()
		if ch == nil {
			continue // an answer nobody waits for (a notification's, a forgotten request's)
		}
		ch <- resp
		if final {
			close(ch)
		}
	}
	if c.end != nil {
		if e := c.end(err); e != nil {
			err = e
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

// Send sends req with a fresh ID and returns that ID and the channel of its
// responses: closed after the final one ("ok", "done", "error"), or early
// when the stream ends (then Err says why). After the stream ended it returns
// Err.
func (c *Conn) Send(req Request) (uint64, <-chan Response, error) {
	ch := make(chan Response, c.buffer)
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return 0, nil, c.err
	}
	c.nextID++
	req.ID = c.nextID
	c.subs[req.ID] = ch
	c.mu.Unlock()
	if err := c.w.Write(req); err != nil {
		c.Forget(req.ID)
		return 0, nil, fmt.Errorf("writing to the runner: %w", err)
	}
	return req.ID, ch, nil
}

// Notify sends req with a fresh ID; its answer is dropped (cancel).
func (c *Conn) Notify(req Request) error {
	c.mu.Lock()
	c.nextID++
	req.ID = c.nextID
	c.mu.Unlock()
	return c.w.Write(req)
}

// Forget stops routing the responses of request id: its channel is not
// closed, and what still comes for it is dropped.
func (c *Conn) Forget(id uint64) {
	c.mu.Lock()
	delete(c.subs, id)
	c.mu.Unlock()
}

// ErrCancelled is what Call returns when its cancel channel closed first.
var ErrCancelled = errors.New("cancelled")

// Call sends req and waits for its final response, skipping tokens: an
// "error" response becomes an error (with the response), and a stream that
// ends first returns Err. A closed cancel (nil: never) returns ErrCancelled.
func (c *Conn) Call(req Request, cancel <-chan struct{}) (Response, error) {
	id, ch, err := c.Send(req)
	if err != nil {
		return Response{}, err
	}
	defer c.Forget(id)
	for {
		select {
		case resp, ok := <-ch:
			switch {
			case !ok:
				return Response{}, c.Err()
			case resp.Type == TypeToken:
				continue
			case resp.Type == TypeError:
				return resp, errors.New(resp.Error)
			}
			return resp, nil
		case <-cancel:
			return Response{}, ErrCancelled
		}
	}
}

// Close closes the runner's stdin, which asks it to exit.
func (c *Conn) Close() error { return c.in.Close() }

// Err is why the stream ended (what end returned), or nil while it is open.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Ended is closed when the stream has ended and Err is set.
func (c *Conn) Ended() <-chan struct{} { return c.ended }
