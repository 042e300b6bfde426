package main

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
		c := deviceCheck(what, "/dev/null", false)
		if c.ok || !strings.Contains(c.info, "/dev/null") || !strings.Contains(c.info, "not a serial port") || c.fix == "" {
			t.Errorf("%s on /dev/null: %+v", what, c)
		}
	}
	master, slave, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer master.Close()
	defer slave.Close()
	if c := deviceCheck("serial console", slave.Name(), false); !c.ok || !strings.Contains(c.info, slave.Name()) {
		t.Errorf("a PTY: %+v", c)
	}
	// A regular file is refused before it is opened.
	file := filepath.Join(t.TempDir(), "ttyUSB0")
	os.WriteFile(file, nil, 0o600)
	if c := deviceCheck("port a", file, false); c.ok || !strings.Contains(c.info, file) {
		t.Errorf("a file: %+v", c)
	}
}
