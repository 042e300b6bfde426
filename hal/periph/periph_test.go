package periph

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"periph.io/x/conn/v3/gpio"

	"github.com/clawedge/clawedge/hal"
)

// fakePin is a periph PinIO whose edges the test feeds (periph's gpiotest.Pin
// needs github.com/jonboulle/clockwork, which this module does not require).
type fakePin struct {
	mu    sync.Mutex
	level gpio.Level
	pull  gpio.Pull
	edge  gpio.Edge
	reads int
	outs  []gpio.Level
	edges chan gpio.Level
}

func newFakePin() *fakePin { return &fakePin{edges: make(chan gpio.Level, 16)} }

func (p *fakePin) In(pull gpio.Pull, edge gpio.Edge) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pull, p.edge = pull, edge
	return nil
}

func (p *fakePin) Read() gpio.Level {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reads++
	return p.level
}

func (p *fakePin) Out(l gpio.Level) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.level = l
	p.outs = append(p.outs, l)
	return nil
}

func (p *fakePin) WaitForEdge(timeout time.Duration) bool {
	if timeout <= 0 {
		panic("a zero timeout means forever to periph")
	}
	select {
	case l := <-p.edges:
		p.mu.Lock()
		p.level = l
		p.mu.Unlock()
		return true
	case <-time.After(timeout):
		return false
	}
}

func TestLineOutputNeverReads(t *testing.T) {
	p := newFakePin()
	l := NewLine("GPIO17", p)
	if _, err := l.Read(); err == nil {
		t.Error("Read of an unconfigured line succeeded")
	}
	l.Out(hal.High)
	v, err := l.Read()
	if err != nil || v != hal.High {
		t.Fatalf("Read = %v, %v", v, err)
	}
	if p.reads != 0 {
		t.Error("Read on an output reached periph (gpioioctl would turn it into an input)")
	}
}

func TestLineIn(t *testing.T) {
	p := newFakePin()
	l := NewLine("GPIO27", p)
	for _, tc := range []struct {
		pull hal.Pull
		edge hal.Edge
		gp   gpio.Pull
		ge   gpio.Edge
	}{
		{hal.PullUp, hal.EdgeBoth, gpio.PullUp, gpio.BothEdges},
		{hal.PullDown, hal.EdgeRising, gpio.PullDown, gpio.RisingEdge},
		{hal.PullNone, hal.EdgeFalling, gpio.Float, gpio.FallingEdge},
		{hal.PullNone, hal.EdgeNone, gpio.Float, gpio.NoEdge},
	} {
		if err := l.In(tc.pull, tc.edge); err != nil {
			t.Fatal(err)
		}
		if p.pull != tc.gp || p.edge != tc.ge {
			t.Errorf("In(%s, %s) gave %s, %s", tc.pull, tc.edge, p.pull, p.edge)
		}
	}
	if err := l.In("sideways", hal.EdgeNone); err == nil || !strings.Contains(err.Error(), "GPIO27") {
		t.Errorf("bad pull: %v", err)
	}
}

func TestLineWaitForEdge(t *testing.T) {
	p := newFakePin()
	l := NewLine("GPIO27", p)
	if _, err := l.WaitForEdge(context.Background()); err == nil {
		t.Error("wait on an unconfigured line succeeded")
	}
	l.In(hal.PullUp, hal.EdgeBoth)

	// An edge queued before the call is stale: dropped.
	p.edges <- gpio.Low
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	if _, err := l.WaitForEdge(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("stale edge not dropped: %v", err)
	}

	// With both edges, the level after the edge is read back.
	go func() { time.Sleep(20 * time.Millisecond); p.edges <- gpio.High }()
	v, err := l.WaitForEdge(context.Background())
	if err != nil || v != hal.High {
		t.Fatalf("both: %v, %v", v, err)
	}

	// Rising only: High without reading.
	l.In(hal.PullUp, hal.EdgeRising)
	go func() { time.Sleep(20 * time.Millisecond); p.edges <- gpio.High }()
	if v, err := l.WaitForEdge(context.Background()); err != nil || v != hal.High {
		t.Fatalf("rising: %v, %v", v, err)
	}

	// Cancel is noticed within a poll.
	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(10*time.Millisecond, cancel)
	start := time.Now()
	if _, err := l.WaitForEdge(ctx); !errors.Is(err, context.Canceled) || time.Since(start) > time.Second {
		t.Fatalf("cancel: %v after %v", err, time.Since(start))
	}
}

func TestPickChip(t *testing.T) {
	pi4 := []ChipInfo{
		{Name: "gpiochip0", Label: "pinctrl-bcm2711", Path: "/dev/gpiochip0", Lines: 58},
		{Name: "gpiochip1", Label: "raspberrypi-exp-gpio", Path: "/dev/gpiochip1", Lines: 8},
	}
	pi5 := []ChipInfo{
		{Name: "gpiochip0", Label: "gpio-brcmstb@107d508500", Path: "/dev/gpiochip0", Lines: 32},
		{Name: "gpiochip4", Label: "pinctrl-rp1", Path: "/dev/gpiochip4", Lines: 54},
		{Name: "gpiochip10", Label: "pinctrl-bcm2712", Path: "/dev/gpiochip10", Lines: 32},
	}
	other := []ChipInfo{{Name: "gpiochip0", Label: "1f02c00.pinctrl", Path: "/dev/gpiochip0", Lines: 32}}
	for _, tc := range []struct {
		chips []ChipInfo
		want  string
		i     int
		err   string
	}{
		{pi4, "", 0, ""},
		{pi5, "", 1, ""},
		{pi4, "gpiochip1", 1, ""},
		{pi4, "/dev/gpiochip1", 1, ""},
		{pi5, "pinctrl-bcm2712", 2, ""},
		{other, "", 0, "no Raspberry Pi GPIO controller"},
		{other, "1f02c00.pinctrl", 0, ""},
		{pi4, "gpiochip9", 0, `GPIO chip "gpiochip9" not found (chips: /dev/gpiochip0 "pinctrl-bcm2711" (58 lines)`},
	} {
		i, err := PickChip(tc.chips, tc.want)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("PickChip(%v, %q) error = %v, want %s", tc.chips, tc.want, err, tc.err)
			}
			continue
		}
		if err != nil || i != tc.i {
			t.Errorf("PickChip(%v, %q) = %d, %v, want %d", tc.chips, tc.want, i, err, tc.i)
		}
	}
}

func TestExplain(t *testing.T) {
	perm := &fs.PathError{Op: "open", Path: "/dev/gpiochip0", Err: syscall.EACCES}
	if got := ExplainGPIO("/dev/gpiochip0", perm).Error(); !strings.HasPrefix(got, "permission denied on /dev/gpiochip0: add the user to the gpio group") {
		t.Error(got)
	}
	if got := ExplainGPIO("GPIO17", fmt.Errorf("line_request ioctl: %w", syscall.EBUSY)).Error(); !strings.Contains(got, "GPIO17 is busy") {
		t.Error(got)
	}
	if got := ExplainI2C("/dev/i2c-1", perm).Error(); !strings.Contains(got, "add the user to the i2c group") {
		t.Error(got)
	}
	if got := ExplainI2C("/dev/i2c-1", syscall.ENOENT).Error(); !strings.Contains(got, "enable I²C") {
		t.Error(got)
	}
}

func TestDriverWithoutHardware(t *testing.T) {
	d := New(Options{})
	if d.Name() != "periph" {
		t.Error(d.Name())
	}
	if _, err := d.OpenBus("one"); err == nil || !strings.Contains(err.Error(), "want a number") {
		t.Errorf("OpenBus(one): %v", err)
	}
	if _, err := os.Stat("/dev/i2c-7"); err != nil {
		if _, err := d.OpenBus("7"); err == nil || !strings.Contains(err.Error(), "/dev/i2c-7 does not exist: enable I²C") {
			t.Errorf("OpenBus(7): %v", err)
		}
	}
	if _, err := os.Stat("/dev/gpiochip0"); err != nil {
		if _, err := d.Line(17); err == nil || !strings.Contains(err.Error(), "no /dev/gpiochip*") {
			t.Errorf("Line(17) without GPIO chips: %v", err)
		}
	}
	if err := d.Close(); err != nil {
		t.Error(err)
	}
}

// TestSerialPTY opens the slave of a PTY as a serial port, with the test
// playing the device on the master.
func TestSerialPTY(t *testing.T) {
	master, slave, err := pty.Open()
	if err != nil {
		t.Skipf("no PTY: %v", err)
	}
	defer master.Close()
	defer slave.Close()
	c, err := New(Options{}).OpenPort(slave.Name(), 115200)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, "PING\n"); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	n, err := master.Read(buf)
	if err != nil || string(buf[:n]) != "PING\n" {
		t.Fatalf("device got %q, %v", buf[:n], err)
	}
	master.Write([]byte("PONG\r\n"))
	c.SetReadTimeout(time.Second)
	n, err = c.Read(buf)
	if err != nil || string(buf[:n]) != "PONG\r\n" {
		t.Fatalf("port got %q, %v", buf[:n], err)
	}
	// Read timeout: (0, nil), like every hal.PortConn.
	c.SetReadTimeout(20 * time.Millisecond)
	if n, err := c.Read(buf); n != 0 || err != nil {
		t.Errorf("timeout read: %d, %v", n, err)
	}
	if _, err := New(Options{}).OpenPort("/dev/ttyNOPE0", 9600); err == nil || !strings.Contains(err.Error(), "/dev/ttyNOPE0 does not exist") {
		t.Errorf("missing device: %v", err)
	}
}
