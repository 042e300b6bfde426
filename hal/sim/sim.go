// Package sim is a simulated Raspberry Pi 40-pin header (BCM GPIO 0..27): the
// "sim" hal driver. clawedge runs on it when no hardware is configured, and
// tests and benches drive it through the exported hooks (Drive, Wire, Attach...).
//
// The electrical model: an output holds the level it was driven to; an input
// reads, in order of precedence, an external signal (Drive), the output wired
// to it (Wire), its pull (up High, down Low), or Low when floating. Before a
// line is configured it has the BCM2835 reset pulls: GPIO 0..8 up, 9..27 down.
// Every change of a line's level is an edge, seen by the waiters of that line.
package sim

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/hal/serialport"
)

// NumGPIO is the number of GPIO lines on the 40-pin header: 0..NumGPIO-1.
const NumGPIO = 28

// Sim is the simulated board. It is safe for concurrent use.
type Sim struct {
	mu     sync.Mutex
	gpio   [NumGPIO]line
	ports  map[string]*attachment
	buses  map[string]hal.Bus
	wires  map[int]*wireBus         // 1-Wire masters by number (chips.go)
	spis   map[[2]int]hal.SPITarget // SPI devices by bus and chip select
	closed bool
}

type mode int

const (
	unset mode = iota
	in
	out
)

// line is the state of one GPIO; Sim.mu guards it.
type line struct {
	mode    mode
	pull    hal.Pull
	edge    hal.Edge
	out     hal.Level // driven level when mode == out
	driven  bool      // an external signal (Drive) is present
	ext     hal.Level
	from    int   // the output wired to this input, or -1
	to      []int // the inputs this one drives when an output
	level   hal.Level
	seq     uint64        // edges so far
	notify  chan struct{} // closed at the next edge; made only while someone waits
	waiters int
}

// New returns a simulated board with every line unconfigured.
func New() *Sim {
	s := &Sim{ports: map[string]*attachment{}, buses: map[string]hal.Bus{}}
	for g := range s.gpio {
		l := &s.gpio[g]
		l.from = -1
		l.pull = hal.PullDown
		if g <= 8 {
			l.pull = hal.PullUp
		}
		l.level = s.levelLocked(g)
	}
	return s
}

// Name is "sim".
func (s *Sim) Name() string { return "sim" }

func (s *Sim) String() string { return "sim (40-pin header, GPIO 0..27)" }

// Line returns GPIO gpio (BCM numbering).
func (s *Sim) Line(gpio int) (hal.Line, error) {
	if err := checkGPIO(gpio); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errClosed
	}
	return &simLine{s: s, g: gpio}, nil
}

// Close makes the driver refuse further use. The bench hooks keep working, so
// a test can check the levels a board left behind.
func (s *Sim) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return nil
}

var errClosed = fmt.Errorf("sim: the driver is closed")

func checkGPIO(g int) error {
	if g < 0 || g >= NumGPIO {
		return fmt.Errorf("sim: GPIO%d does not exist (the header has GPIO0..GPIO%d)", g, NumGPIO-1)
	}
	return nil
}

func mustGPIO(g int) {
	if err := checkGPIO(g); err != nil {
		panic(err)
	}
}

// Drive applies an external signal to gpio, as a button or a sensor would. On
// an input it sets the level (an edge if it changes); on an output the output
// wins until the line becomes an input. It panics on a GPIO outside 0..27.
func (s *Sim) Drive(gpio int, l hal.Level) {
	mustGPIO(gpio)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gpio[gpio].driven = true
	s.gpio[gpio].ext = l
	s.updateLocked(gpio)
}

// Release removes the external signal of Drive: the input goes back to its
// wire or its pull.
func (s *Sim) Release(gpio int) {
	mustGPIO(gpio)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gpio[gpio].driven = false
	s.updateLocked(gpio)
}

// Level returns the electrical level of gpio now.
func (s *Sim) Level(gpio int) hal.Level {
	mustGPIO(gpio)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gpio[gpio].level
}

// Edges returns how many edges gpio has seen since New.
func (s *Sim) Edges(gpio int) uint64 {
	mustGPIO(gpio)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gpio[gpio].seq
}

// Waiters returns how many WaitForEdge calls are blocked on gpio, so a test
// can inject an edge only once a waiter is in place.
func (s *Sim) Waiters(gpio int) int {
	mustGPIO(gpio)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gpio[gpio].waiters
}

// Wire connects output out to input in, like a jumper: while out is an output,
// in follows it (unless Driven), so each write on out is an edge on in. An
// input has at most one wire; wiring it again replaces the old one.
func (s *Sim) Wire(out, in int) {
	mustGPIO(out)
	mustGPIO(in)
	if out == in {
		panic(fmt.Sprintf("sim: cannot wire GPIO%d to itself", out))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if old := s.gpio[in].from; old >= 0 {
		to := s.gpio[old].to
		for i, t := range to {
			if t == in {
				s.gpio[old].to = append(to[:i:i], to[i+1:]...)
				break
			}
		}
	}
	s.gpio[in].from = out
	s.gpio[out].to = append(s.gpio[out].to, in)
	s.updateLocked(in)
}

// levelLocked computes the electrical level of g from the model.
func (s *Sim) levelLocked(g int) hal.Level {
	l := &s.gpio[g]
	switch {
	case l.mode == out:
		return l.out
	case l.driven:
		return l.ext
	case l.from >= 0 && s.gpio[l.from].mode == out:
		return s.gpio[l.from].out
	}
	return l.pull == hal.PullUp
}

// updateLocked recomputes g and the inputs it drives, recording an edge and
// waking waiters wherever the level changed.
func (s *Sim) updateLocked(g int) {
	s.settleLocked(g)
	for _, t := range s.gpio[g].to {
		s.settleLocked(t)
	}
}

func (s *Sim) settleLocked(g int) {
	l := &s.gpio[g]
	now := s.levelLocked(g)
	if now == l.level {
		return
	}
	l.level = now
	l.seq++
	if l.notify != nil {
		close(l.notify)
		l.notify = nil
	}
}

// simLine is a hal.Line on one GPIO of the sim.
type simLine struct {
	s *Sim
	g int
}

func (sl *simLine) In(pull hal.Pull, edge hal.Edge) error {
	switch pull {
	case hal.PullNone, hal.PullUp, hal.PullDown:
	default:
		return fmt.Errorf("sim: GPIO%d: unknown pull %q", sl.g, pull)
	}
	switch edge {
	case hal.EdgeNone, hal.EdgeRising, hal.EdgeFalling, hal.EdgeBoth:
	default:
		return fmt.Errorf("sim: GPIO%d: unknown edge %q", sl.g, edge)
	}
	s := sl.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errClosed
	}
	l := &s.gpio[sl.g]
	l.mode, l.pull, l.edge = in, pull, edge
	s.updateLocked(sl.g)
	return nil
}

func (sl *simLine) Out(v hal.Level) error {
	s := sl.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errClosed
	}
	l := &s.gpio[sl.g]
	l.mode, l.out, l.edge = out, v, hal.EdgeNone
	s.updateLocked(sl.g)
	return nil
}

func (sl *simLine) Read() (hal.Level, error) {
	s := sl.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return hal.Low, errClosed
	}
	return s.gpio[sl.g].level, nil
}

// WaitForEdge counts edges from the call on. Every edge flips the level, so
// the level after the first edge of the wanted kind follows from the level at
// the call and the number of edges since: no edge that happens after the call
// can be missed, however fast edges come or late the waiter wakes.
func (sl *simLine) WaitForEdge(ctx context.Context) (hal.Level, error) {
	s := sl.s
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return hal.Low, errClosed
	}
	l := &s.gpio[sl.g]
	if l.mode != in || l.edge == hal.EdgeNone {
		s.mu.Unlock()
		return hal.Low, fmt.Errorf("sim: GPIO%d is not an input with edge detection", sl.g)
	}
	edge, start, level := l.edge, l.seq, l.level
	need, after := uint64(1), !level // EdgeBoth: the first edge
	switch edge {
	case hal.EdgeRising:
		after = hal.High
		if level == hal.High {
			need = 2 // it must fall first
		}
	case hal.EdgeFalling:
		after = hal.Low
		if level == hal.Low {
			need = 2
		}
	}
	l.waiters++
	defer func() {
		l.waiters--
		s.mu.Unlock()
	}()
	for l.seq-start < need {
		if l.notify == nil {
			l.notify = make(chan struct{})
		}
		ch := l.notify
		s.mu.Unlock()
		select {
		case <-ch:
			s.mu.Lock()
		case <-ctx.Done():
			s.mu.Lock()
			return hal.Low, ctx.Err()
		}
		if s.closed {
			return hal.Low, errClosed
		}
	}
	return after, nil
}

// attachment is a device attached at a path; gone is set when it is detached
// or replaced, which breaks the connections opened on it.
type attachment struct {
	dev  hal.PortConn
	gone bool
}

// Attach serves device with dev (a simtest.ScriptedDevice, say): opening the
// path gives a connection to dev. Closing that connection leaves dev alone
// (the device is on the other end of the cable), and dev must honour
// SetReadTimeout. Attaching a path again replaces the device there.
// Paths never attached open the real device through go.bug.st/serial, so the
// sim board works with a USB adapter or a socat PTY.
func (s *Sim) Attach(device string, dev hal.PortConn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if old := s.ports[device]; old != nil {
		old.gone = true
	}
	s.ports[device] = &attachment{dev: dev}
}

// Detach unplugs the device at path: open connections to it fail, and opening
// it fails until something is attached again.
func (s *Sim) Detach(device string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if old := s.ports[device]; old != nil {
		old.gone = true
		delete(s.ports, device)
	}
}

// OpenPort opens an attached device, or else the real one.
func (s *Sim) OpenPort(device string, baud int) (hal.PortConn, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, errClosed
	}
	a := s.ports[device]
	s.mu.Unlock()
	if a == nil {
		return serialport.Open(device, baud)
	}
	return newSimPort(s, device, a), nil
}

// AttachBus serves the I²C bus bus ("1" or "/dev/i2c-1", the two are the same
// bus) with b, a simtest.RegisterBus say. Closing a Board leaves b open.
func (s *Sim) AttachBus(bus string, b hal.Bus) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buses[busKey(bus)] = b
}

// OpenBus opens an attached bus; the sim has no other.
func (s *Sim) OpenBus(bus string) (hal.Bus, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errClosed
	}
	b, ok := s.buses[busKey(bus)]
	if !ok {
		return nil, fmt.Errorf("sim: no I²C bus %s attached (tests attach one with AttachBus)", bus)
	}
	return &simBus{Bus: b}, nil
}

func busKey(bus string) string { return strings.TrimPrefix(bus, "/dev/i2c-") }

// simBus is a connection to an attached bus: closing it leaves the bus alone.
type simBus struct{ hal.Bus }

func (*simBus) Close() error { return nil }
