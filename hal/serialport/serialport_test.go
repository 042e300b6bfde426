package serialport_test

import (
	"errors"
	"io/fs"
	"strings"
	"syscall"
	"testing"

	"github.com/creack/pty"

	"github.com/clawedge/clawedge/hal/serialport"
)

func TestOpenPTY(t *testing.T) {
	master, slave, err := pty.Open()
	if err != nil {
		t.Skipf("no PTY: %v", err)
	}
	defer master.Close()
	defer slave.Close()
	c, err := serialport.Open(slave.Name(), 9600) // modem-line ioctls would fail here: Open does none
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Error(err)
	}
}

func TestExplain(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&fs.PathError{Op: "open", Path: "/dev/ttyUSB0", Err: syscall.ENOENT}, "/dev/ttyUSB0 does not exist: is the device plugged in?"},
		{syscall.EACCES, "permission denied on /dev/ttyUSB0: add the user to the dialout group"},
		{errors.New("odd"), "opening /dev/ttyUSB0: odd"},
	} {
		if got := serialport.Explain("/dev/ttyUSB0", tc.err).Error(); !strings.HasPrefix(got, tc.want) {
			t.Errorf("Explain(%v) = %s", tc.err, got)
		}
	}
	if _, err := serialport.Open("/dev/ttyNOPE0", 9600); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("Open(missing): %v", err)
	}
}
