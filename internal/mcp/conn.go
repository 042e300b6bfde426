package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
)

// Transport carries messages between two peers. Read blocks for the next
// message and returns an error once the connection is over; Write may be
// called from several goroutines at once.
type Transport interface {
	Read() (*Message, error)
	Write(ctx context.Context, m *Message) error
	Close() error
}

// Handler answers a peer's request (a result to marshal, or an error: an
// *Error is sent as it is, any other as an internal error) or takes its
// notification (the result is then dropped).
type Handler func(ctx context.Context, m *Message) (any, error)

// Conn is one JSON-RPC connection over a transport: it matches responses to
// calls, runs each incoming request in its own goroutine (a slow tool does
// not hold up the others) and cancels it on notifications/cancelled.
type Conn struct {
	t       Transport
	handler Handler

	mu       sync.Mutex
	nextID   int64
	pending  map[string]chan *Message
	incoming inflight
	slots    chan struct{} // one per request being served
	err      error
	done     chan struct{}
}

// MaxInProgress bounds the peer's requests served at once: a peer that
// floods requests (and perhaps never takes the answers) holds that many
// goroutines, not one per request; past it, a request is answered with an
// error at once.
const MaxInProgress = 64

// NewConn starts reading t; h takes the peer's requests and notifications.
func NewConn(t Transport, h Handler) *Conn {
	c := &Conn{t: t, handler: h, pending: map[string]chan *Message{}, done: make(chan struct{}), slots: make(chan struct{}, MaxInProgress)}
	go c.read()
	return c
}

func (c *Conn) read() {
	for {
		m, err := c.t.Read()
		if err != nil {
			c.fail(err)
			return
		}
		switch {
		case m.IsResponse():
			c.mu.Lock()
			ch := c.pending[idKey(m.ID)]
			delete(c.pending, idKey(m.ID))
			c.mu.Unlock()
			if ch != nil {
				ch <- m
			}
		case m.IsRequest():
			select {
			case c.slots <- struct{}{}:
			default:
				c.t.Write(context.Background(), reply(m.ID, nil, &Error{Code: CodeInternalError,
					Message: fmt.Sprintf("more than %d requests in progress", MaxInProgress)}))
				continue
			}
			ctx, cancel := context.WithCancel(context.Background())
			end := c.incoming.start(m.ID, cancel)
			go func() {
				defer func() { <-c.slots }()
				c.serve(ctx, end, m)
			}()
		default:
			if m.Method == methodCancelled {
				c.incoming.cancelled(m.Params)
			}
			if c.handler != nil {
				c.handler(context.Background(), m)
			}
		}
	}
}

func (c *Conn) serve(ctx context.Context, end func(), m *Message) {
	defer end()
	var res any
	err := error(&Error{Code: CodeMethodNotFound, Message: "method not found: " + m.Method})
	if c.handler != nil {
		res, err = c.handler(ctx, m)
	}
	if ctx.Err() != nil {
		return // cancelled: the peer expects no answer
	}
	c.t.Write(context.Background(), reply(m.ID, res, err))
}

func (c *Conn) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return
	}
	c.err = err
	c.incoming.cancelAll()
	close(c.done)
}

// Call sends a request and decodes its result into result (unless nil).
// When ctx ends first, the peer is told with notifications/cancelled.
func (c *Conn) Call(ctx context.Context, method string, params, result any) error {
	p, err := json.Marshal(params)
	if err != nil {
		return err
	}
	ch := make(chan *Message, 1)
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return fmt.Errorf("the connection is closed: %w", c.err)
	}
	c.nextID++
	id := json.RawMessage(strconv.FormatInt(c.nextID, 10))
	c.pending[idKey(id)] = ch
	c.mu.Unlock()
	forget := func() {
		c.mu.Lock()
		delete(c.pending, idKey(id))
		c.mu.Unlock()
	}
	if err := c.t.Write(ctx, &Message{JSONRPC: "2.0", ID: id, Method: method, Params: p}); err != nil {
		forget()
		return err
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			return m.Error
		}
		if result != nil {
			if err := json.Unmarshal(m.Result, result); err != nil {
				return fmt.Errorf("%s: the result does not decode: %w", method, err)
			}
		}
		return nil
	case <-ctx.Done():
		forget()
		c.Notify(context.Background(), methodCancelled, cancelledParams{RequestID: id, Reason: ctx.Err().Error()})
		return ctx.Err()
	case <-c.done:
		forget()
		return fmt.Errorf("the connection closed: %w", c.err)
	}
}

// Notify sends a notification.
func (c *Conn) Notify(ctx context.Context, method string, params any) error {
	var p json.RawMessage
	if params != nil {
		b, err := json.Marshal(params)
		if err != nil {
			return err
		}
		p = b
	}
	return c.t.Write(ctx, &Message{JSONRPC: "2.0", Method: method, Params: p})
}

// Wait returns once the connection is over, with why.
func (c *Conn) Wait() error {
	<-c.done
	return c.err
}

// Close closes the transport and ends the connection.
func (c *Conn) Close() error {
	err := c.t.Close()
	c.fail(errors.New("closed"))
	return err
}
