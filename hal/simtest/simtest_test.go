package simtest_test

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/hal/simtest"
)

func readAll(t *testing.T, d *simtest.ScriptedDevice, timeout time.Duration) string {
	t.Helper()
	d.SetReadTimeout(timeout)
	var out []byte
	buf := make([]byte, 3) // small, to exercise partial reads
	for {
		n, err := d.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return string(out)
		}
		out = append(out, buf[:n]...)
	}
}

func TestScriptedDevice(t *testing.T) {
	d := simtest.NewScriptedDevice(map[string]string{"PING": "PONG", "MULTI": "a\r\nb", "QUIET": "", simtest.Unknown: "ERR"})
	io.WriteString(d, "PI")
	if got := readAll(t, d, 0); got != "" {
		t.Errorf("answer before the line ended: %q", got)
	}
	io.WriteString(d, "NG\r\nMULTI\nQUIET\nWHAT\n")
	if got := readAll(t, d, 10*time.Millisecond); got != "PONG\r\na\r\nb\r\nERR\r\n" {
		t.Errorf("answers %q", got)
	}
	if got := strings.Join(d.Lines(), "|"); got != "PING|MULTI|QUIET|WHAT" {
		t.Errorf("Lines() = %q", got)
	}
	if d.Written() != "PING\r\nMULTI\nQUIET\nWHAT\n" {
		t.Errorf("Written() = %q", d.Written())
	}
	d.Send("T=21.5\n")
	if d.Buffered() != 7 || readAll(t, d, 0) != "T=21.5\n" {
		t.Error("Send")
	}
}

func TestScriptedDeviceTimeouts(t *testing.T) {
	d := simtest.NewScriptedDevice(map[string]string{"PING": "PONG"})
	d.SetLatency(30 * time.Millisecond)
	io.WriteString(d, "PING\n")
	d.SetReadTimeout(5 * time.Millisecond)
	buf := make([]byte, 16)
	if n, err := d.Read(buf); n != 0 || err != nil {
		t.Fatalf("read before the latency: %d, %v", n, err)
	}
	d.SetReadTimeout(time.Second)
	start := time.Now()
	n, err := d.Read(buf)
	if err != nil || string(buf[:n]) != "PONG\r\n" || time.Since(start) > 900*time.Millisecond {
		t.Fatalf("read %q, %v after %v", buf[:n], err, time.Since(start))
	}
	if err := d.SetReadTimeout(-5); err == nil {
		t.Error("negative timeout accepted")
	}

	// Close wakes a blocked reader.
	d.SetReadTimeout(hal.NoTimeout)
	done := make(chan error)
	go func() { _, err := d.Read(buf); done <- err }()
	time.Sleep(10 * time.Millisecond)
	d.Close()
	if err := <-done; !errors.Is(err, simtest.ErrClosed) {
		t.Errorf("read across Close: %v", err)
	}
	if _, err := d.Write([]byte("x")); !errors.Is(err, simtest.ErrClosed) {
		t.Errorf("write after Close: %v", err)
	}
}

func TestScriptedDeviceFailNext(t *testing.T) {
	d := simtest.NewScriptedDevice(nil)
	boom := errors.New("boom")
	d.FailNext(boom)
	if _, err := d.Write([]byte("x\n")); err != boom {
		t.Errorf("first write: %v", err)
	}
	if _, err := d.Write([]byte("x\n")); err != nil {
		t.Errorf("second write: %v", err)
	}
	if d.Written() != "x\n" {
		t.Errorf("a failed write was recorded: %q", d.Written())
	}
}

func TestRegisterBus(t *testing.T) {
	var regs [256]byte
	regs[0xff] = 0x11
	b := simtest.NewRegisterBus(map[uint16][256]byte{0x48: regs})
	if err := b.Tx(0x48, []byte{0x10, 0xaa, 0xbb}, nil); err != nil {
		t.Fatal(err)
	}
	r := make([]byte, 2)
	if err := b.Tx(0x48, []byte{0x10}, r); err != nil || r[0] != 0xaa || r[1] != 0xbb {
		t.Fatalf("read back % x, %v", r, err)
	}
	// The pointer persists and auto-increments, wrapping at 256.
	b.Tx(0x48, []byte{0xff}, nil)
	if err := b.Tx(0x48, nil, r); err != nil || r[0] != 0x11 || r[1] != 0 {
		t.Fatalf("wrap % x, %v", r, err)
	}
	if err := b.Tx(0x50, nil, r); err == nil || !strings.Contains(err.Error(), "0x50") {
		t.Errorf("missing device: %v", err)
	}
	b.SetRegister(0x48, 1, 7)
	if b.Registers(0x48)[1] != 7 || b.Registers(0x48)[0x10] != 0xaa {
		t.Error("Registers")
	}
	if len(b.Transactions()) != 5 || b.String() != "simtest I²C bus (0x48)" {
		t.Errorf("%q %s", b.Transactions(), b)
	}
	b.Close()
	if err := b.Tx(0x48, nil, r); err == nil {
		t.Error("Tx after Close")
	}
}
