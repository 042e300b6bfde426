package hal

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Pin is a configured GPIO pin. It works in LOGICAL levels: on an ActiveLow
// pin, High (on) is driven as electrical Low. It is safe for concurrent use.
type Pin struct {
	b    *Board
	cfg  PinConfig
	line Line

	mu     sync.Mutex
	level  Level  // logical, the level last driven (outputs)
	seq    uint64 // bumped by every write: max_on timers and pulses act only if nothing wrote since
	timer  *time.Timer
	closed bool
	// written is closed by the next write (watch.go), for WaitForWrite.
	written chan struct{}
}

func openPin(b *Board, cfg PinConfig) (*Pin, error) {
	line, err := b.drv.Line(cfg.GPIO)
	if err != nil {
		return nil, fmt.Errorf("pin %q (GPIO%d): %w", cfg.Name, cfg.GPIO, err)
	}
	p := &Pin{b: b, cfg: cfg, line: line}
	if cfg.Mode == ModeIn {
		if err := line.In(cfg.Pull, electricalEdge(cfg.Edge, cfg.ActiveLow)); err != nil {
			return nil, p.errorf("configuring as input (pull %s, edge %s): %w", cfg.Pull, cfg.Edge, err)
		}
		return p, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.writeLocked(cfg.Initial); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *Pin) Name() string         { return p.cfg.Name }
func (p *Pin) GPIO() int            { return p.cfg.GPIO }
func (p *Pin) Mode() Mode           { return p.cfg.Mode }
func (p *Pin) Config() PinConfig    { return p.cfg }
func (p *Pin) errClosed() error     { return p.errorf("the board is closed") }
func (p *Pin) isOutput() bool       { return p.cfg.Mode == ModeOut }
func (p *Pin) onWire(l Level) Level { return electrical(l, p.cfg.ActiveLow) }

func (p *Pin) errorf(format string, args ...any) error {
	return fmt.Errorf("pin %q (GPIO%d): %w", p.cfg.Name, p.cfg.GPIO, fmt.Errorf(format, args...))
}

// Read returns the logical level: for an output, the level last driven.
func (p *Pin) Read() (Level, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return Low, p.errClosed()
	}
	if p.isOutput() {
		return p.level, nil
	}
	l, err := p.line.Read()
	if err != nil {
		return Low, p.errorf("reading: %w", err)
	}
	return p.onWire(l), nil
}

// Write drives an output to a logical level. High on a pin with MaxOn arms a
// timer that writes Low after MaxOn; each High write re-arms it, Low cancels it.
func (p *Pin) Write(l Level) error {
	if !p.isOutput() {
		return fmt.Errorf("pin %q is an input; only outputs can be written", p.cfg.Name)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return p.errClosed()
	}
	return p.writeLocked(l)
}

// Toggle drives an output to the opposite level and returns the new level.
func (p *Pin) Toggle() (Level, error) {
	if !p.isOutput() {
		return Low, fmt.Errorf("pin %q is an input; only outputs can be toggled", p.cfg.Name)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return Low, p.errClosed()
	}
	if err := p.writeLocked(!p.level); err != nil {
		return Low, err
	}
	return p.level, nil
}

// Pulse drives an output to the opposite level for d, then back. If ctx is
// done first, the level is restored at once and ctx.Err() returned. If
// something else wrote the pin during the pulse (a Write, the max_on timer),
// that later write wins and the level is not restored.
//
// The pin is not locked while the pulse lasts, so a long pulse never delays a
// Write or Board.Close.
func (p *Pin) Pulse(ctx context.Context, d time.Duration) error {
	if !p.isOutput() {
		return fmt.Errorf("pin %q is an input; only outputs can be pulsed", p.cfg.Name)
	}
	if d <= 0 {
		return p.errorf("pulse duration %v must be positive", d)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return p.errClosed()
	}
	orig := p.level
	if err := p.writeLocked(!orig); err != nil {
		p.mu.Unlock()
		return err
	}
	seq := p.seq
	p.mu.Unlock()

	t := time.NewTimer(d)
	defer t.Stop()
	var cancelled error
	select {
	case <-t.C:
	case <-ctx.Done():
		cancelled = ctx.Err()
	case <-p.b.ctx.Done():
		return p.errorf("the board closed during the pulse")
	}

	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return p.errorf("the board closed during the pulse")
	}
	if p.seq == seq {
		if err := p.writeLocked(orig); err != nil {
			return err
		}
	}
	return cancelled
}

// WaitForEdge blocks until the input changes in the way asked (rising: becomes
// High, falling: becomes Low, both: either) and returns the logical level after
// it; or until ctx is done (ctx.Err()) or the board closes. The pin's configured
// Edge must include the kind asked for.
func (p *Pin) WaitForEdge(ctx context.Context, edge Edge) (Level, error) {
	if p.isOutput() {
		return Low, fmt.Errorf("pin %q is an output; only inputs can be waited on", p.cfg.Name)
	}
	switch edge {
	case EdgeRising, EdgeFalling, EdgeBoth:
	default:
		return Low, p.errorf("edge %q: want rising, falling or both", edge)
	}
	switch have := p.cfg.Edge; {
	case have == EdgeNone:
		return Low, p.errorf("no edge detection configured (set edge: both)")
	case have != EdgeBoth && have != edge:
		return Low, p.errorf("configured to detect %s edges only, not %s", have, edge)
	}
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	if closed {
		return Low, p.errClosed()
	}

	// Close wakes the wait through the board's context; AfterFunc starts no
	// goroutine unless the board actually closes.
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(p.b.ctx, cancel)
	defer stop()

	for {
		l, err := p.line.WaitForEdge(wctx)
		if err != nil {
			if ctx.Err() != nil {
				return Low, ctx.Err()
			}
			if p.b.ctx.Err() != nil {
				return Low, p.errClosed()
			}
			return Low, p.errorf("waiting for a %s edge: %w", edge, err)
		}
		got := p.onWire(l)
		if matches(edge, got) {
			return got, nil
		}
		// The driver reported the other kind (the pin detects both). If the
		// level has already come back, the edge we want happened meanwhile.
		if now, err := p.line.Read(); err == nil && matches(edge, p.onWire(now)) {
			return p.onWire(now), nil
		}
	}
}

func matches(want Edge, after Level) bool {
	switch want {
	case EdgeRising:
		return after == High
	case EdgeFalling:
		return after == Low
	}
	return true
}

// String is "led (GPIO17, out, high)".
func (p *Pin) String() string {
	level := "?"
	if l, err := p.Read(); err == nil {
		level = l.String()
	}
	return fmt.Sprintf("%s (GPIO%d, %s, %s)", p.cfg.Name, p.cfg.GPIO, p.cfg.Mode, level)
}

// writeLocked drives l and manages the max_on timer. p.mu is held.
func (p *Pin) writeLocked(l Level) error {
	if err := p.line.Out(p.onWire(l)); err != nil {
		return p.errorf("driving %s: %w", l, err)
	}
	p.level = l
	p.seq++
	p.wakeWriters()
	if p.timer != nil {
		p.timer.Stop()
		p.timer = nil
	}
	if l == High && p.cfg.MaxOn > 0 {
		seq := p.seq
		p.timer = time.AfterFunc(p.cfg.MaxOn, func() { p.maxOnExpired(seq) })
	}
	return nil
}

// maxOnExpired turns the output off unless something wrote it since the timer
// was armed (Stop does not wait for a callback that already started).
func (p *Pin) maxOnExpired(seq uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.seq != seq {
		return
	}
	// Nobody to report an error to here; the next Write or Read will see the
	// driver's state. Board.Close drives Safe regardless.
	_ = p.writeLocked(Low)
}

// close drives an output to Safe and refuses later use.
func (p *Pin) close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	if p.timer != nil {
		p.timer.Stop()
		p.timer = nil
	}
	var err error
	if p.isOutput() {
		err = p.writeLocked(p.cfg.Safe)
		if p.timer != nil { // a Safe High on a max_on pin: no timer outlives the board
			p.timer.Stop()
			p.timer = nil
		}
	}
	p.closed = true
	return err
}
