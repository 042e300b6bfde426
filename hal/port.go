package hal

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Port is a configured serial port. It opens on first use, lets one caller at
// a time hold it (Do), and after an I/O error closes the connection so that the
// next use opens the device again: a USB serial adapter unplugged and plugged
// back in works again without a restart.
type Port struct {
	b   *Board
	cfg PortConfig
	sem chan struct{} // held for the whole of a Do

	mu     sync.Mutex // guards conn and closed; never held while fn runs
	conn   PortConn
	closed bool
}

func newPort(b *Board, cfg PortConfig) *Port {
	return &Port{b: b, cfg: cfg, sem: make(chan struct{}, 1)}
}

func (p *Port) Name() string   { return p.cfg.Name }
func (p *Port) Device() string { return p.cfg.Device }
func (p *Port) Baud() int      { return p.cfg.Baud }

// String is "arduino (/dev/ttyUSB0, 115200 baud)".
func (p *Port) String() string {
	return fmt.Sprintf("%s (%s, %d baud)", p.cfg.Name, p.cfg.Device, p.cfg.Baud)
}

// Do holds the port for the whole of fn, opening it first if needed. fn should
// bound its reads with SetReadTimeout and check ctx between them.
//
// When an operation on c fails, the connection is closed and the next use
// reopens the device. If the connection was opened by an earlier Do and fails
// before a single byte went through (the device was unplugged since), it is
// reopened at once and fn runs again, once: nothing reached the device, so
// nothing is repeated. Errors name the port and its device path.
func (p *Port) Do(ctx context.Context, fn func(c PortConn) error) error {
	select {
	case p.sem <- struct{}{}:
	case <-ctx.Done():
		return p.wrap(ctx.Err())
	}
	defer func() { <-p.sem }()
	if err := ctx.Err(); err != nil {
		return p.wrap(err)
	}

	c, fresh, err := p.get()
	if err != nil {
		return err
	}
	t := &trackedConn{PortConn: c}
	err = fn(t)
	if t.failed {
		p.drop(c)
		if !fresh && t.moved == 0 && !t.closed && ctx.Err() == nil {
			c, _, err2 := p.get()
			if err2 != nil {
				return err2
			}
			t = &trackedConn{PortConn: c}
			err = fn(t)
			if t.failed {
				p.drop(c)
			}
		}
	}
	if err != nil {
		return p.wrap(err)
	}
	return nil
}

func (p *Port) wrap(err error) error {
	return fmt.Errorf("port %q (%s): %w", p.cfg.Name, p.cfg.Device, err)
}

// get returns the open connection, opening it if there is none; fresh says it
// was opened just now.
func (p *Port) get() (c PortConn, fresh bool, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, false, p.wrap(fmt.Errorf("the board is closed"))
	}
	if p.conn != nil {
		return p.conn, false, nil
	}
	c, err = p.b.drv.OpenPort(p.cfg.Device, p.cfg.Baud)
	if err != nil {
		// The driver's error names the device path already.
		return nil, false, fmt.Errorf("port %q: %w", p.cfg.Name, err)
	}
	p.conn = c
	return c, true, nil
}

// drop closes c if it is still the port's connection.
func (p *Port) drop(c PortConn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conn == c {
		p.conn = nil
		c.Close()
	}
}

// close closes the connection, interrupting a read in progress, and refuses later use.
func (p *Port) close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	if p.conn == nil {
		return nil
	}
	err := p.conn.Close()
	p.conn = nil
	if err != nil {
		return p.wrap(fmt.Errorf("closing: %w", err))
	}
	return nil
}

// trackedConn notes whether an operation failed and how many bytes moved, so
// Do knows whether to reopen and whether a retry could repeat an effect.
type trackedConn struct {
	PortConn
	failed bool
	closed bool // fn closed it: reopen next time, but do not retry
	moved  int
}

func (t *trackedConn) Read(b []byte) (int, error) {
	n, err := t.PortConn.Read(b)
	t.note(n, err)
	return n, err
}

func (t *trackedConn) Write(b []byte) (int, error) {
	n, err := t.PortConn.Write(b)
	t.note(n, err)
	return n, err
}

func (t *trackedConn) SetReadTimeout(d time.Duration) error {
	err := t.PortConn.SetReadTimeout(d)
	t.note(0, err)
	return err
}

// Close by fn is honoured: the port opens again on next use.
func (t *trackedConn) Close() error {
	t.failed, t.closed = true, true
	return nil
}

func (t *trackedConn) note(n int, err error) {
	t.moved += n
	if err != nil {
		t.failed = true
	}
}
