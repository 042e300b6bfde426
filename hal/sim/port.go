package sim

import (
	"fmt"
	"sync"
	"time"

	"github.com/clawedge/clawedge/hal"
)

// slice bounds how long one read on the attached device blocks, so that
// closing or unplugging interrupts a read within that time whatever the
// device's own Read does.
const slice = 20 * time.Millisecond

// simPort is one connection to an attached device. It keeps its own read
// timeout and reads from the device in slices of at most 20 ms.
type simPort struct {
	s      *Sim
	device string
	a      *attachment

	mu      sync.Mutex
	timeout time.Duration
	closed  bool
}

func newSimPort(s *Sim, device string, a *attachment) *simPort {
	return &simPort{s: s, device: device, a: a, timeout: hal.NoTimeout}
}

// check fails once the connection is closed or the device unplugged.
func (p *simPort) check() error {
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	if closed {
		return fmt.Errorf("sim: %s: the connection is closed", p.device)
	}
	p.s.mu.Lock()
	gone := p.a.gone
	p.s.mu.Unlock()
	if gone {
		return fmt.Errorf("sim: %s: the device was unplugged", p.device)
	}
	return nil
}

func (p *simPort) SetReadTimeout(d time.Duration) error {
	if d < 0 && d != hal.NoTimeout {
		return fmt.Errorf("sim: %s: read timeout %v is negative", p.device, d)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.timeout = d
	return nil
}

func (p *simPort) Read(b []byte) (int, error) {
	p.mu.Lock()
	timeout := p.timeout
	p.mu.Unlock()
	var deadline time.Time
	if timeout >= 0 {
		deadline = time.Now().Add(timeout)
	}
	for {
		if err := p.check(); err != nil {
			return 0, err
		}
		wait := slice
		if timeout >= 0 {
			wait = min(wait, max(time.Until(deadline), 0))
		}
		if err := p.a.dev.SetReadTimeout(wait); err != nil {
			return 0, err
		}
		n, err := p.a.dev.Read(b)
		if n > 0 || err != nil {
			return n, err
		}
		if timeout >= 0 && !time.Now().Before(deadline) {
			return 0, nil
		}
	}
}

func (p *simPort) Write(b []byte) (int, error) {
	if err := p.check(); err != nil {
		return 0, err
	}
	return p.a.dev.Write(b)
}

// Close closes this connection only; the device stays attached.
func (p *simPort) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	return nil
}
