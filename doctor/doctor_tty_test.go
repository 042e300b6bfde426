package doctor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/creack/pty"
)

// doctor passes a serial device only when it is a terminal: /dev/null is a
// character device that opens and takes writes, and it used to pass.
func TestDoctorDeviceMustBeATTY(t *testing.T) {
	for _, what := range []string{"serial console", "port arduino"} {
		c := Device(what, "/dev/null", false)
		if c.OK || !strings.Contains(c.Info, "/dev/null") || !strings.Contains(c.Info, "not a serial port") || c.Fix == "" {
			t.Errorf("%s on /dev/null: %+v", what, c)
		}
	}
	master, slave, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer master.Close()
	defer slave.Close()
	if c := Device("serial console", slave.Name(), false); !c.OK || !strings.Contains(c.Info, slave.Name()) {
		t.Errorf("a PTY: %+v", c)
	}
	// A regular file is refused before it is opened.
	file := filepath.Join(t.TempDir(), "ttyUSB0")
	os.WriteFile(file, nil, 0o600)
	if c := Device("port a", file, false); c.OK || !strings.Contains(c.Info, file) {
		t.Errorf("a file: %+v", c)
	}
}
