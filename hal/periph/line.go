package periph

import (
	"context"
	"fmt"
	"sync"
	"time"

	"periph.io/x/conn/v3/gpio"

	"github.com/clawedge/clawedge/hal"
)

// PinIO is the part of periph's gpio.PinIO that a Line uses; every
// gpio.PinIO (gpioioctl.GPIOLine, gpiotest.Pin, ...) has it.
type PinIO interface {
	In(pull gpio.Pull, edge gpio.Edge) error
	Read() gpio.Level
	WaitForEdge(timeout time.Duration) bool
	Out(l gpio.Level) error
}

// edgePoll bounds one wait on the pin, so WaitForEdge notices ctx within that
// time (periph's WaitForEdge takes a timeout, not a context; its Halt races
// with the wait it should interrupt).
const edgePoll = 50 * time.Millisecond

// maxStale bounds how many already-queued edges WaitForEdge drops.
const maxStale = 64

// NewLine adapts a periph pin to a hal.Line; name is used in errors ("GPIO17
// (/dev/gpiochip0 line 17)").
//
// It never calls Read on an output: gpioioctl's Read turns an output into an
// input with a pull-up, which would switch off whatever the output drives. An
// output reads as the level last driven.
func NewLine(name string, p PinIO) hal.Line {
	return &line{name: name, p: p, wait: make(chan struct{}, 1)}
}

type line struct {
	name string
	p    PinIO
	wait chan struct{} // one WaitForEdge at a time: periph's wait is not shareable

	mu   sync.Mutex
	mode hal.Mode // "" until In or Out
	edge hal.Edge
	out  hal.Level
}

func (l *line) In(pull hal.Pull, edge hal.Edge) error {
	pp, err := toPull(pull)
	if err != nil {
		return fmt.Errorf("%s: %w", l.name, err)
	}
	pe, err := toEdge(edge)
	if err != nil {
		return fmt.Errorf("%s: %w", l.name, err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.p.In(pp, pe); err != nil {
		return ExplainGPIO(l.name, err) // hal says what it was doing
	}
	l.mode, l.edge = hal.ModeIn, edge
	return nil
}

func (l *line) Out(v hal.Level) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.p.Out(gpio.Level(v)); err != nil {
		return ExplainGPIO(l.name, err)
	}
	l.mode, l.edge, l.out = hal.ModeOut, hal.EdgeNone, v
	return nil
}

func (l *line) Read() (hal.Level, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch l.mode {
	case hal.ModeOut:
		return l.out, nil
	case hal.ModeIn:
		return hal.Level(l.p.Read()), nil
	}
	return hal.Low, fmt.Errorf("%s: not configured as input or output", l.name)
}

// WaitForEdge first drops edges the kernel queued before the call (it queues
// every edge since the line was requested), then waits for the next one.
// Concurrent waits on one line take turns.
func (l *line) WaitForEdge(ctx context.Context) (hal.Level, error) {
	select {
	case l.wait <- struct{}{}:
	case <-ctx.Done():
		return hal.Low, ctx.Err()
	}
	defer func() { <-l.wait }()

	l.mu.Lock()
	mode, edge := l.mode, l.edge
	l.mu.Unlock()
	if mode != hal.ModeIn || edge == hal.EdgeNone {
		return hal.Low, fmt.Errorf("%s: not an input with edge detection", l.name)
	}
	l.dropStale()
	for {
		if err := ctx.Err(); err != nil {
			return hal.Low, err
		}
		wait := edgePoll
		if dl, ok := ctx.Deadline(); ok {
			// Never 0: to periph, a zero timeout means forever.
			wait = max(min(wait, time.Until(dl)), time.Millisecond)
		}
		if !l.p.WaitForEdge(wait) {
			continue
		}
		switch edge {
		case hal.EdgeRising:
			return hal.High, nil
		case hal.EdgeFalling:
			return hal.Low, nil
		}
		// gpioioctl does not say which edge it saw; the level now tells.
		return l.Read()
	}
}

// dropStale drops the edges already queued, at most maxStale of them.
func (l *line) dropStale() {
	for range maxStale {
		if !l.p.WaitForEdge(time.Millisecond) {
			return
		}
	}
}

func toPull(p hal.Pull) (gpio.Pull, error) {
	switch p {
	case hal.PullNone:
		return gpio.Float, nil
	case hal.PullUp:
		return gpio.PullUp, nil
	case hal.PullDown:
		return gpio.PullDown, nil
	}
	return gpio.PullNoChange, fmt.Errorf("unknown pull %q", p)
}

func toEdge(e hal.Edge) (gpio.Edge, error) {
	switch e {
	case hal.EdgeNone:
		return gpio.NoEdge, nil
	case hal.EdgeRising:
		return gpio.RisingEdge, nil
	case hal.EdgeFalling:
		return gpio.FallingEdge, nil
	case hal.EdgeBoth:
		return gpio.BothEdges, nil
	}
	return gpio.NoEdge, fmt.Errorf("unknown edge %q", e)
}
