package channels

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
)

// Issue 12: the console opens its device through hal/serialport, so an adapter
// that is not there is logged with its path and what to do about it (it was
// "path: Serial port not found"); once a PTY appears at that path the console
// serves it with the same default opener.
func TestSerialConsoleBadPathThenPTY(t *testing.T) {
	d, _ := newDispatcher(t)
	path := filepath.Join(t.TempDir(), "ttyUSB7")
	var log bytes.Buffer
	var firstLog string
	masters := make(chan *os.File, 1)
	after := func(time.Duration) <-chan time.Time {
		// Called on the console's goroutine after each failed open: the first
		// one has logged the friendly error; then plug the adapter in.
		if firstLog == "" {
			firstLog = log.String()
			master, slave, err := pty.Open()
			if err != nil {
				t.Error(err)
			} else {
				t.Cleanup(func() { slave.Close(); master.Close() })
				if err := os.Symlink(slave.Name(), path); err != nil {
					t.Error(err)
				}
				masters <- master
			}
		}
		c := make(chan time.Time, 1)
		c <- time.Time{}
		return c
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sc := &SerialConsole{Handler: d, Device: path, Baud: 115200, Banner: "clawedge ready",
		Log: slog.New(slog.NewTextHandler(&log, nil)), After: after}
	done := make(chan error, 1)
	go func() { done <- sc.Run(ctx) }()

	var master *os.File
	select {
	case master = <-masters:
	case <-time.After(5 * time.Second):
		t.Fatal("the console never retried the missing device")
	}
	expect(t, master, "clawedge ready")
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("serial console did not stop")
	}
	if want := path + " does not exist: is the device plugged in?"; !strings.Contains(firstLog, want) {
		t.Errorf("the missing device's warning does not say %q:\n%s", want, firstLog)
	}
}

// TestSerialConsoleSurvivesDeviceLoss plays a USB serial adapter that is unplugged
// and plugged back in: the configured path is a symlink to a PTY; the PTY is torn
// down and the path removed, then a new PTY appears at the same path.
func TestSerialConsoleSurvivesDeviceLoss(t *testing.T) {
	d, led := newDispatcher(t)
	path := filepath.Join(t.TempDir(), "ttyUSB0")
	plug := func() *os.File {
		master, slave, err := pty.Open()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { slave.Close() })
		os.Remove(path)
		if err := os.Symlink(slave.Name(), path); err != nil {
			t.Fatal(err)
		}
		return master
	}
	master := plug()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	sc := &SerialConsole{Handler: d, Device: path, Baud: 115200, Banner: "clawedge ready"}
	go func() { done <- sc.Run(ctx) }()

	expect(t, master, "clawedge ready")
	io.WriteString(master, "@gpio/write{pin=\"led\";value=1}\r")
	expect(t, master, "led = 1")

	master.Close() // unplugged: the console's reads fail
	os.Remove(path)
	time.Sleep(300 * time.Millisecond) // it retries while the path is gone
	master = plug()
	defer master.Close()
	expect(t, master, "clawedge ready")
	io.WriteString(master, "@gpio/write{pin=\"led\";value=0}\r")
	expect(t, master, "led = 0")
	if led.get() != 0 {
		t.Errorf("led = %d after the reconnect's command", led.get())
	}
	if sc.Channel() != "console/ttyUSB0" {
		t.Errorf("channel %q", sc.Channel())
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("serial console did not stop")
	}
}

// expect reads from f until want appears, failing after a few seconds.
func expect(t *testing.T, f *os.File, want string) {
	t.Helper()
	var got []byte
	deadline := time.Now().Add(5 * time.Second)
	f.SetReadDeadline(deadline)
	buf := make([]byte, 1024)
	for !bytes.Contains(got, []byte(want)) {
		n, err := f.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil {
			t.Fatalf("waiting for %q: %v; got %q", want, err, got)
		}
	}
}

// eofPort is a serial port that is unplugged as soon as it is read.
type eofPort struct{ bytes.Buffer }

func (*eofPort) Read([]byte) (int, error) { return 0, io.EOF }
func (*eofPort) Close() error             { return nil }

// Issue 11 item 18: the serial console's retry warning is logged once per streak of
// failures, not at every attempt (every 5 s for as long as an adapter is unplugged).
func TestSerialConsoleWarnsOncePerStreak(t *testing.T) {
	d, _ := newDispatcher(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Two streaks of failures (20, then 7), each ended by a port that opens and is lost.
	script := []bool{}
	for _, n := range []int{20, 7} {
		for range n {
			script = append(script, false)
		}
		script = append(script, true)
	}
	calls := 0
	var log bytes.Buffer
	var waits []time.Duration
	sc := &SerialConsole{Handler: d, Device: "/dev/ttyUSB9", Log: slog.New(slog.NewTextHandler(&log, nil)),
		Open: func(string, int) (io.ReadWriteCloser, error) {
			calls++
			if calls > len(script) {
				cancel()
				return nil, errors.New("no such device")
			}
			if !script[calls-1] {
				return nil, errors.New("no such device")
			}
			return &eofPort{}, nil
		},
		After: func(d time.Duration) <-chan time.Time {
			waits = append(waits, d)
			c := make(chan time.Time, 1)
			c <- time.Time{}
			return c
		}}
	sc.Run(ctx)
	out := log.String()
	if n := strings.Count(out, "serial console unavailable"); n != 3 { // two streaks, and the one cancel ends
		t.Errorf("%d retry warnings, want one per streak (3):\n%s", n, out)
	}
	if !strings.Contains(out, "failed_attempts=20") || !strings.Contains(out, "failed_attempts=7") {
		t.Errorf("the reconnect does not say how many attempts failed:\n%s", out)
	}
	if slices.Max(waits) != 5*time.Second || waits[0] != 200*time.Millisecond {
		t.Errorf("backoff %v", waits)
	}
}
