package hal

import (
	"context"
	"fmt"
)

// WaitForWrite blocks until an output is written after the level it was last
// seen at changes, and returns the new logical level. seen is what the caller
// knows: pass the level Read returned, and each call then reports the next
// change, whoever made it (a tool call, the max_on timer, a pulse ending).
// Home Assistant's state of a relay follows the relay this way, with no
// polling. It returns ctx.Err() when ctx ends, or an error once the board
// closes.
func (p *Pin) WaitForWrite(ctx context.Context, seen Level) (Level, error) {
	if !p.isOutput() {
		return Low, fmt.Errorf("pin %q is an input; wait for its edges instead", p.cfg.Name)
	}
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return Low, p.errClosed()
		}
		if p.level != seen {
			l := p.level
			p.mu.Unlock()
			return l, nil
		}
		if p.written == nil {
			p.written = make(chan struct{})
		}
		ch := p.written
		p.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return Low, ctx.Err()
		case <-p.b.ctx.Done():
			return Low, p.errClosed()
		}
	}
}

// wakeWriters wakes WaitForWrite callers after a write. p.mu is held.
func (p *Pin) wakeWriters() {
	if p.written != nil {
		close(p.written)
		p.written = nil
	}
}
