package hal_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/hal/sim"
	"github.com/clawedge/clawedge/hal/simtest"
)

// exchange writes line and reads until "\n" or 1 s.
func exchange(ctx context.Context, p *hal.Port, line string) (string, error) {
	var got []byte
	err := p.Do(ctx, func(c hal.PortConn) error {
		if _, err := io.WriteString(c, line+"\n"); err != nil {
			return err
		}
		if err := c.SetReadTimeout(50 * time.Millisecond); err != nil {
			return err
		}
		buf := make([]byte, 64)
		deadline := time.Now().Add(time.Second)
		for time.Now().Before(deadline) && !strings.Contains(string(got), "\n") {
			n, err := c.Read(buf)
			got = append(got, buf[:n]...)
			if err != nil {
				return err
			}
		}
		return nil
	})
	return strings.TrimSpace(string(got)), err
}

func TestPortScripted(t *testing.T) {
	s := sim.New()
	dev := simtest.NewScriptedDevice(map[string]string{"PING": "PONG"})
	s.Attach("/dev/ttyFAKE0", dev)
	b := open(t, s, testConfig())
	p, err := b.Port("arduino")
	if err != nil {
		t.Fatal(err)
	}
	if p.Name() != "arduino" || p.Device() != "/dev/ttyFAKE0" || p.Baud() != 115200 || p.String() != "arduino (/dev/ttyFAKE0, 115200 baud)" {
		t.Errorf("accessors: %s", p)
	}
	if got, err := exchange(context.Background(), p, "PING"); err != nil || got != "PONG" {
		t.Fatalf("exchange = %q, %v", got, err)
	}
	if dev.Written() != "PING\n" {
		t.Errorf("device got %q", dev.Written())
	}
}

func TestPortSerializes(t *testing.T) {
	s := sim.New()
	dev := simtest.NewScriptedDevice(nil)
	s.Attach("/dev/ttyFAKE0", dev)
	b := open(t, s, testConfig())
	p, _ := b.Port("arduino")
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.Do(context.Background(), func(c hal.PortConn) error {
				// Two writes that must not interleave with another caller's.
				c.Write([]byte{'a' + byte(i)})
				time.Sleep(time.Millisecond)
				c.Write([]byte{'a' + byte(i)})
				return nil
			})
		}()
	}
	wg.Wait()
	w := dev.Written()
	for i := 0; i < len(w); i += 2 {
		if w[i] != w[i+1] {
			t.Fatalf("interleaved writes: %q", w)
		}
	}
}

func TestPortContext(t *testing.T) {
	s := sim.New()
	s.Attach("/dev/ttyFAKE0", simtest.NewScriptedDevice(nil))
	b := open(t, s, testConfig())
	p, _ := b.Port("arduino")
	hold, release := make(chan struct{}), make(chan struct{})
	go p.Do(context.Background(), func(hal.PortConn) error { close(hold); <-release; return nil })
	<-hold
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	err := p.Do(ctx, func(hal.PortConn) error { return nil })
	close(release)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), `port "arduino" (/dev/ttyFAKE0)`) {
		t.Fatalf("Do while held: %v", err)
	}
}

func TestPortReopensAfterFailure(t *testing.T) {
	s := sim.New()
	dev := simtest.NewScriptedDevice(map[string]string{"PING": "PONG"})
	s.Attach("/dev/ttyFAKE0", dev)
	b := open(t, s, testConfig())
	p, _ := b.Port("arduino")
	ctx := context.Background()

	// A failure on a connection opened by this very Do is reported, and the
	// next Do opens again.
	dev.FailNext(errors.New("glitch"))
	if _, err := exchange(ctx, p, "PING"); err == nil || err.Error() != `port "arduino" (/dev/ttyFAKE0): glitch` {
		t.Fatalf("fresh failure: %v", err)
	}
	if got, err := exchange(ctx, p, "PING"); err != nil || got != "PONG" {
		t.Fatalf("after reopen: %q, %v", got, err)
	}

	// A connection from an earlier Do that fails before any byte moved (the
	// adapter went away and came back) is reopened and fn retried, once.
	dev.FailNext(errors.New("unplugged"))
	if got, err := exchange(ctx, p, "PING"); err != nil || got != "PONG" {
		t.Fatalf("stale connection not retried: %q, %v", got, err)
	}
	if n := strings.Count(dev.Written(), "PING"); n != 2 {
		t.Errorf("device saw %d PINGs, want 2 (failed writes send nothing; the retry sends once)", n)
	}

	// Unplugged: the error says so; plugged back: works.
	s.Detach("/dev/ttyFAKE0")
	if _, err := exchange(ctx, p, "PING"); err == nil || !strings.Contains(err.Error(), `port "arduino"`) {
		t.Fatalf("detached: %v", err)
	}
	s.Attach("/dev/ttyFAKE0", dev)
	if got, err := exchange(ctx, p, "PING"); err != nil || got != "PONG" {
		t.Fatalf("re-attached: %q, %v", got, err)
	}
}

// ptyDevice plays a serial device on the master side of a PTY: it answers
// "PING" with "PONG" until the master is closed.
type ptyDevice struct {
	master *os.File
	slave  *os.File
	path   string
	done   chan struct{}
}

func newPTYDevice(t *testing.T) *ptyDevice {
	t.Helper()
	master, slave, err := pty.Open()
	if err != nil {
		t.Skipf("no PTY: %v", err)
	}
	master = pollable(t, master)
	// Keep the slave open: with no slave open, reads on the master fail (EIO).
	d := &ptyDevice{master: master, slave: slave, path: slave.Name(), done: make(chan struct{})}
	go func() {
		defer close(d.done)
		sc := bufio.NewScanner(master)
		for sc.Scan() {
			if strings.TrimSpace(sc.Text()) == "PING" {
				master.Write([]byte("PONG\r\n"))
			}
		}
	}()
	t.Cleanup(d.unplug)
	return d
}

// pollable returns f on a non-blocking descriptor, so that Close interrupts a
// Read in another goroutine: creack/pty hands out a blocking master, whose
// reads Close cannot interrupt.
func pollable(t *testing.T, f *os.File) *os.File {
	t.Helper()
	fd, err := syscall.Dup(int(f.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := syscall.SetNonblock(fd, true); err != nil {
		t.Fatal(err)
	}
	return os.NewFile(uintptr(fd), "ptmx")
}

func (d *ptyDevice) unplug() {
	d.master.Close()
	d.slave.Close()
	<-d.done
}

func TestPortPTYReplug(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "ttyUSB0") // like a udev /dev/serial/by-id link
	dev1 := newPTYDevice(t)
	if err := os.Symlink(dev1.path, link); err != nil {
		t.Fatal(err)
	}
	b := open(t, sim.New(), hal.Config{Ports: []hal.PortConfig{{Name: "usb", Device: link, Baud: 9600}}})
	p, _ := b.Port("usb")
	ctx := context.Background()
	if got, err := exchange(ctx, p, "PING"); err != nil || got != "PONG" {
		t.Fatalf("first device: %q, %v", got, err)
	}

	dev1.unplug()
	_, err := exchange(ctx, p, "PING")
	if err == nil || !strings.Contains(err.Error(), `port "usb"`) {
		t.Fatalf("unplugged: %v", err)
	}
	t.Logf("unplugged: %v", err)

	dev2 := newPTYDevice(t)
	os.Remove(link)
	if err := os.Symlink(dev2.path, link); err != nil {
		t.Fatal(err)
	}
	if got, err := exchange(ctx, p, "PING"); err != nil || got != "PONG" {
		t.Fatalf("replugged device: %q, %v", got, err)
	}
}

func TestPortMissingDevice(t *testing.T) {
	b := open(t, sim.New(), hal.Config{Ports: []hal.PortConfig{{Name: "usb", Device: "/dev/ttyNOPE9", Baud: 9600}}})
	p, _ := b.Port("usb")
	err := p.Do(context.Background(), func(hal.PortConn) error { return nil })
	if err == nil || !strings.Contains(err.Error(), `port "usb": /dev/ttyNOPE9 does not exist`) {
		t.Fatalf("missing device: %v", err)
	}
}

func TestPortCloseInterruptsRead(t *testing.T) {
	s := sim.New()
	s.Attach("/dev/ttyFAKE0", simtest.NewScriptedDevice(nil))
	b, err := hal.Open(s, testConfig())
	if err != nil {
		t.Fatal(err)
	}
	p, _ := b.Port("arduino")
	reading := make(chan struct{})
	done := make(chan error)
	go func() {
		done <- p.Do(context.Background(), func(c hal.PortConn) error {
			c.SetReadTimeout(hal.NoTimeout)
			close(reading)
			_, err := c.Read(make([]byte, 1))
			return err
		})
	}()
	<-reading
	b.Close()
	select {
	case err := <-done:
		if err == nil {
			t.Error("read across Close returned no error")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not interrupt a blocked read")
	}
	if err := p.Do(context.Background(), func(hal.PortConn) error { return nil }); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Do after Close: %v", err)
	}
}
