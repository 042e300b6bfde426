package peripherals_test

import (
	"bufio"
	"context"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/clawedge/clawedge/hal"
)

func TestSerialScripted(t *testing.T) {
	e := newEnv(t, testConfig())
	r := e.must(t, "serial/send", "port", "arduino", "data", "PING")
	if r.Text != "sent 5 bytes to arduino" || r.Fields["bytes"].Int != 5 || r.Fields["port"].Str != "arduino" {
		t.Errorf("send: %+v", r)
	}
	r = e.must(t, "serial/read", "port", "arduino", "timeout_ms", 2000)
	if r.Fields["data"].Str != "PONG\r\n" || r.Fields["bytes"].Int != 6 || r.Text != `arduino: read 6 bytes: "PONG\r\n"` {
		t.Errorf("read: %+v", r)
	}

	e.must(t, "serial/send", "port", "arduino", "data", "TEMP?", "eol", "crlf")
	r = e.must(t, "serial/expect", "port", "arduino", "pattern", `T=(\d+\.\d)\r\n`)
	if !r.Fields["matched"].Bool || r.Fields["match"].Str != "T=21.5\r\n" || r.Fields["data"].Str != "T=21.5\r\n" {
		t.Errorf("expect: %+v", r)
	}
	e.must(t, "serial/send", "port", "arduino", "data", "raw", "eol", "none")
	if got := e.dev.Written(); got != "PING\nTEMP?\r\nraw" {
		t.Errorf("device got %q", got)
	}
}

func TestSerialReadStops(t *testing.T) {
	e := newEnv(t, testConfig())
	// Nothing: not an error, after the timeout.
	start := time.Now()
	r := e.must(t, "serial/read", "port", "arduino", "timeout_ms", 50)
	if r.Fields["bytes"].Int != 0 || r.Text != "arduino: nothing arrived within 50 ms" || time.Since(start) < 50*time.Millisecond {
		t.Errorf("empty read: %+v after %v", r, time.Since(start))
	}
	// max_bytes: the rest stays for the next read.
	e.dev.Send("0123456789")
	r = e.must(t, "serial/read", "port", "arduino", "max_bytes", 4)
	if r.Fields["data"].Str != "0123" {
		t.Errorf("max_bytes read %q", r.Fields["data"].Str)
	}
	// Quiet line: returns well before the timeout once data stopped.
	start = time.Now()
	r = e.must(t, "serial/read", "port", "arduino", "timeout_ms", 10000)
	if r.Fields["data"].Str != "456789" || time.Since(start) > 5*time.Second {
		t.Errorf("rest %q after %v", r.Fields["data"].Str, time.Since(start))
	}
	// Bytes that are not UTF-8 are escaped.
	e.dev.Send("ok\xff\xfe é")
	r = e.must(t, "serial/read", "port", "arduino")
	if r.Fields["data"].Str != `ok\xff\xfe é` || r.Fields["bytes"].Int != 7 {
		t.Errorf("binary read %q (%d bytes)", r.Fields["data"].Str, r.Fields["bytes"].Int)
	}
}

func TestSerialExpect(t *testing.T) {
	e := newEnv(t, testConfig())
	// Timeout without a match: not an error.
	e.dev.Send("boot...\r\n")
	start := time.Now()
	r := e.must(t, "serial/expect", "port", "arduino", "pattern", "READY", "timeout_ms", 50)
	if r.Fields["matched"].Bool || r.Fields["match"].Str != "" || r.Fields["data"].Str != "boot...\r\n" || r.Fields["bytes"].Int != 9 {
		t.Errorf("timeout: %+v", r.Fields)
	}
	if !strings.Contains(r.Text, "timed out after 50 ms") || time.Since(start) < 50*time.Millisecond {
		t.Errorf("timeout text %q after %v", r.Text, time.Since(start))
	}

	// The answer comes late: expect waits for it.
	e.dev.SetLatency(30 * time.Millisecond)
	e.must(t, "serial/send", "port", "arduino", "data", "PING")
	r = e.must(t, "serial/expect", "port", "arduino", "pattern", "P.NG", "timeout_ms", 5000)
	if !r.Fields["matched"].Bool || r.Fields["match"].Str != "PONG" {
		t.Errorf("late answer: %+v", r.Fields)
	}

	// max_bytes without a match.
	e.dev.Send(strings.Repeat("x", 100))
	r = e.must(t, "serial/expect", "port", "arduino", "pattern", "y", "max_bytes", 10, "timeout_ms", 5000)
	if r.Fields["matched"].Bool || r.Fields["bytes"].Int != 10 || !strings.Contains(r.Text, "max_bytes") {
		t.Errorf("max_bytes: %+v", r)
	}

	// A bad pattern is a clear error, and nothing is read.
	before := e.dev.Buffered()
	_, err := e.call(context.Background(), "serial/expect", kv("port", "arduino", "pattern", "(unclosed"))
	if err == nil || !strings.Contains(err.Error(), `pattern "(unclosed" is not a valid regular expression: error parsing regexp: missing closing )`) {
		t.Errorf("bad pattern: %v", err)
	}
	if e.dev.Buffered() != before {
		t.Error("a bad pattern consumed data")
	}
	// Longer than max_len.
	if _, err := e.call(context.Background(), "serial/expect", kv("port", "arduino", "pattern", strings.Repeat("a", 257))); err == nil {
		t.Error("pattern over 256 characters accepted")
	}
}

func TestSerialList(t *testing.T) {
	e := newEnv(t, testConfig())
	r := e.must(t, "serial/list")
	if r.Text != "NAME     DEVICE         BAUD\narduino  /dev/ttyFAKE0  115200" {
		t.Errorf("Text:\n%s", r.Text)
	}
	if items := r.Fields["ports"].Items; len(items) != 1 || items[0].Str != "arduino" {
		t.Errorf("ports %+v", r.Fields["ports"])
	}
}

// TestSerialPTY runs the serial tools against a real PTY pair: the port opens
// the slave through go.bug.st/serial; the test plays the device on the master.
func TestSerialPTY(t *testing.T) {
	master, slave, err := pty.Open()
	if err != nil {
		t.Skipf("no PTY: %v", err)
	}
	master = pollable(t, master)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(master)
		for sc.Scan() {
			if strings.TrimSpace(sc.Text()) == "PING" {
				master.Write([]byte("PONG\r\n"))
			}
		}
	}()
	t.Cleanup(func() {
		master.Close()
		slave.Close()
		<-done
	})

	e := newEnv(t, hal.Config{Ports: []hal.PortConfig{{Name: "uart", Device: slave.Name(), Baud: 115200}}})
	e.must(t, "serial/send", "port", "uart", "data", "PING")
	r := e.must(t, "serial/expect", "port", "uart", "pattern", `PONG\r\n`, "timeout_ms", 5000)
	if !r.Fields["matched"].Bool || r.Fields["data"].Str != "PONG\r\n" {
		t.Errorf("expect over PTY: %+v", r.Fields)
	}
	e.must(t, "serial/send", "port", "uart", "data", "PING", "eol", "crlf")
	r = e.must(t, "serial/read", "port", "uart", "timeout_ms", 5000)
	if r.Fields["data"].Str != "PONG\r\n" {
		t.Errorf("read over PTY: %+v", r.Fields)
	}
	r = e.must(t, "serial/expect", "port", "uart", "pattern", "never", "timeout_ms", 30)
	if r.Fields["matched"].Bool {
		t.Error("matched nothing")
	}
}

// pollable returns f on a non-blocking descriptor so that Close interrupts a
// Read in another goroutine (creack/pty hands out a blocking master).
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
