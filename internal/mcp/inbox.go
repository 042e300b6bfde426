package mcp

import (
	"context"
	"sync"
)

// inbox is the reading side of the HTTP client transports: messages arrive
// on several responses and event streams, and Read takes them in order of
// arrival until the transport fails or is closed.
type inbox struct {
	ctx    context.Context // the transport's life: every HTTP request of it
	cancel context.CancelFunc
	msgs   chan *Message
	once   sync.Once
	err    error
}

func newInbox() inbox {
	ctx, cancel := context.WithCancel(context.Background())
	return inbox{ctx: ctx, cancel: cancel, msgs: make(chan *Message, 16)}
}

func (in *inbox) push(m *Message) {
	select {
	case in.msgs <- m:
	case <-in.ctx.Done():
	}
}

// fail ends the transport with err (the first one wins).
func (in *inbox) fail(err error) {
	in.once.Do(func() {
		in.err = err
		in.cancel()
	})
}

func (in *inbox) Read() (*Message, error) {
	select {
	case m := <-in.msgs:
		return m, nil
	case <-in.ctx.Done():
		return nil, in.err
	}
}
