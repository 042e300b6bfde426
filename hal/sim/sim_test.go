package sim_test

import (
	"context"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/hal/sim"
	"github.com/clawedge/clawedge/hal/simtest"
)

func line(t *testing.T, s *sim.Sim, g int) hal.Line {
	t.Helper()
	l, err := s.Line(g)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestElectricalModel(t *testing.T) {
	s := sim.New()
	if s.Name() != "sim" {
		t.Error(s.Name())
	}
	// BCM reset pulls.
	if s.Level(4) != hal.High || s.Level(17) != hal.Low {
		t.Errorf("reset pulls: GPIO4 %v, GPIO17 %v", s.Level(4), s.Level(17))
	}
	in := line(t, s, 17)
	in.In(hal.PullUp, hal.EdgeNone)
	if l, _ := in.Read(); l != hal.High {
		t.Error("pull-up input reads low")
	}
	in.In(hal.PullNone, hal.EdgeNone)
	if l, _ := in.Read(); l != hal.Low {
		t.Error("floating input should read low")
	}
	s.Drive(17, hal.High)
	if l, _ := in.Read(); l != hal.High {
		t.Error("driven input does not follow the signal")
	}
	s.Release(17)
	if s.Level(17) != hal.Low {
		t.Error("released input does not go back to its pull")
	}

	out := line(t, s, 18)
	out.Out(hal.High)
	s.Drive(18, hal.Low) // an output wins over an outside signal
	if l, _ := out.Read(); l != hal.High || s.Level(18) != hal.High {
		t.Error("output does not hold its level")
	}

	if _, err := s.Line(28); err == nil || !strings.Contains(err.Error(), "GPIO28 does not exist") {
		t.Errorf("Line(28): %v", err)
	}
	if _, err := s.Line(-1); err == nil {
		t.Error("Line(-1) succeeded")
	}
	if err := in.In("sideways", hal.EdgeNone); err == nil {
		t.Error("bad pull accepted")
	}
}

func TestWire(t *testing.T) {
	s := sim.New()
	out, in := line(t, s, 20), line(t, s, 21)
	s.Wire(20, 21)
	in.In(hal.PullNone, hal.EdgeBoth)
	out.Out(hal.High)
	if s.Level(21) != hal.High {
		t.Fatal("wired input does not follow the output")
	}
	edges := s.Edges(21)
	out.Out(hal.Low)
	out.Out(hal.High)
	if s.Edges(21)-edges != 2 {
		t.Errorf("two writes gave %d edges on the wired input", s.Edges(21)-edges)
	}
	// Re-wiring replaces the old wire.
	other := line(t, s, 22)
	other.Out(hal.Low)
	s.Wire(22, 21)
	out.Out(hal.Low)
	out.Out(hal.High)
	if s.Level(21) != hal.Low {
		t.Error("input still follows the old wire")
	}
}

func wait(t *testing.T, s *sim.Sim, g int, l hal.Line) <-chan hal.Level {
	t.Helper()
	ch := make(chan hal.Level, 1)
	n := s.Waiters(g)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		v, err := l.WaitForEdge(ctx)
		if err != nil {
			t.Error(err)
		}
		ch <- v
	}()
	for s.Waiters(g) == n {
		time.Sleep(time.Millisecond)
	}
	return ch
}

func TestWaitForEdgeKinds(t *testing.T) {
	s := sim.New()
	rise := line(t, s, 5)
	rise.In(hal.PullNone, hal.EdgeRising)
	s.Drive(5, hal.High)
	// The line is high: a rising edge needs a fall first. Both edges happen
	// before the waiter runs again; it must still see the rise.
	got := wait(t, s, 5, rise)
	s.Drive(5, hal.Low)
	s.Drive(5, hal.High)
	if v := <-got; v != hal.High {
		t.Errorf("rising returned %v", v)
	}

	fall := line(t, s, 6)
	fall.In(hal.PullUp, hal.EdgeFalling)
	got = wait(t, s, 6, fall)
	s.Drive(6, hal.Low)
	if v := <-got; v != hal.Low {
		t.Errorf("falling returned %v", v)
	}

	both := line(t, s, 7)
	both.In(hal.PullDown, hal.EdgeBoth)
	got = wait(t, s, 7, both)
	s.Drive(7, hal.High)
	s.Drive(7, hal.Low) // a second edge before the waiter wakes: it reports the first
	if v := <-got; v != hal.High {
		t.Errorf("both returned %v, want the level after the first edge", v)
	}

	// Every waiter sees the edge.
	g1, g2 := wait(t, s, 7, both), wait(t, s, 7, both)
	s.Drive(7, hal.High)
	if <-g1 != hal.High || <-g2 != hal.High {
		t.Error("not every waiter saw the edge")
	}
}

func TestWaitForEdgeErrorsAndCancel(t *testing.T) {
	s := sim.New()
	l := line(t, s, 9)
	l.In(hal.PullUp, hal.EdgeNone)
	if _, err := l.WaitForEdge(context.Background()); err == nil {
		t.Error("wait without edge detection succeeded")
	}
	l.In(hal.PullUp, hal.EdgeBoth)
	before := runtime.NumGoroutine()
	for range 20 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
		if _, err := l.WaitForEdge(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("timeout: %v", err)
		}
		cancel()
	}
	if s.Waiters(9) != 0 {
		t.Errorf("%d waiters left", s.Waiters(9))
	}
	// WaitForEdge starts no goroutine of its own. (WithTimeout's timer runs
	// cancel on a goroutine that may still be exiting: allow it a moment.)
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("goroutines: %d before, %d after", before, n)
	}

	s.Close()
	if _, err := l.WaitForEdge(context.Background()); err == nil {
		t.Error("wait after Close succeeded")
	}
	if err := l.Out(hal.High); err == nil {
		t.Error("Out after Close succeeded")
	}
	if s.Level(9) != hal.High {
		t.Error("bench hooks stop working after Close")
	}
}

func TestAttachedPort(t *testing.T) {
	s := sim.New()
	dev := simtest.NewScriptedDevice(map[string]string{"AT": "OK"})
	s.Attach("/dev/ttyS9", dev)
	c, err := s.OpenPort("/dev/ttyS9", 9600)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(c, "AT\r\n")
	c.SetReadTimeout(time.Second)
	buf := make([]byte, 16)
	n, err := c.Read(buf)
	if err != nil || string(buf[:n]) != "OK\r\n" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}

	// Read timeout: (0, nil) after about the timeout.
	c.SetReadTimeout(30 * time.Millisecond)
	start := time.Now()
	if n, err := c.Read(buf); n != 0 || err != nil || time.Since(start) < 25*time.Millisecond {
		t.Errorf("timeout read: %d, %v after %v", n, err, time.Since(start))
	}
	c.SetReadTimeout(0)
	if n, err := c.Read(buf); n != 0 || err != nil {
		t.Errorf("poll read: %d, %v", n, err)
	}

	// Closing the connection leaves the device; a new one works.
	c.Close()
	if _, err := c.Write([]byte("x")); err == nil {
		t.Error("write on a closed connection succeeded")
	}
	c2, err := s.OpenPort("/dev/ttyS9", 9600)
	if err != nil {
		t.Fatal(err)
	}
	// Unplugging breaks the connection, also a blocked read.
	done := make(chan error)
	go func() {
		c2.SetReadTimeout(hal.NoTimeout)
		_, err := c2.Read(buf)
		done <- err
	}()
	time.Sleep(10 * time.Millisecond)
	s.Detach("/dev/ttyS9")
	if err := <-done; err == nil || !strings.Contains(err.Error(), "unplugged") {
		t.Errorf("read across Detach: %v", err)
	}
	if _, err := s.OpenPort("/dev/ttyS9", 9600); err == nil || !strings.Contains(err.Error(), "/dev/ttyS9 does not exist") {
		t.Errorf("open after Detach (falls through to the real device): %v", err)
	}
}

func TestAttachedBus(t *testing.T) {
	s := sim.New()
	s.AttachBus("/dev/i2c-1", simtest.NewRegisterBus(map[uint16][256]byte{0x76: {0xd0: 0x60}}))
	b, err := s.OpenBus("1")
	if err != nil {
		t.Fatal(err)
	}
	r := []byte{0}
	if err := b.Tx(0x76, []byte{0xd0}, r); err != nil || r[0] != 0x60 {
		t.Fatalf("chip id % x, %v", r, err)
	}
	b.Close()
	b, _ = s.OpenBus("/dev/i2c-1")
	if err := b.Tx(0x76, []byte{0xd0}, r); err != nil {
		t.Error("closing a connection closed the attached bus")
	}
	if _, err := s.OpenBus("2"); err == nil {
		t.Error("unattached bus opened")
	}
}
