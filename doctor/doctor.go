package doctor

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/clawedge/clawedge/channels"
	"github.com/clawedge/clawedge/config"
	"github.com/clawedge/clawedge/daemon"
	"github.com/clawedge/clawedge/internal/termsafe"
	"github.com/clawedge/clawedge/store"
)

// Check is one finding: what was checked, whether it is fine, and if not,
// how to fix it.
type Check struct {
	What string
	OK   bool
	Info string // detail when ok, the problem otherwise
	Fix  string
	Warn bool // ok, but worth a look: printed as warn with its fix, not counted as a failure
}

func DataDir(dir string) Check {
	c := Check{What: "data_dir"}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		c.Info, c.Fix = err.Error(), "set data_dir to a writable folder, or create it for this user"
		return c
	}
	// Another user who can write data_dir can answer for the daemon (clawedge.sock)
	// or delete its audit trail (clawedge.db).
	if err := store.CheckOwned(dir, false, nil); err != nil {
		c.Info, c.Fix = err.Error(), "make data_dir belong to the user clawedge runs as, writable by no one else (clawedge run repairs the mode of its own data_dir)"
		return c
	}
	probe, err := os.CreateTemp(dir, ".doctor-*")
	if err != nil {
		c.Info, c.Fix = dir+" is not writable: "+err.Error(), "chown it to the user clawedge runs as"
		return c
	}
	probe.Close()
	os.Remove(probe.Name())
	abs, _ := filepath.Abs(dir)
	c.OK, c.Info = true, abs+" writable"
	return c
}

func Store(dir string, r store.Retention) Check {
	c := Check{What: "store"}
	if _, err := os.Stat(filepath.Join(dir, store.FileName)); errors.Is(err, fs.ErrNotExist) {
		c.OK, c.Info = true, "not created yet (the first command creates it)"
		return c
	}
	s, err := store.Open(dir, store.Options{Timeout: 500 * time.Millisecond, ReadOnly: true})
	if err != nil {
		c.Info = err.Error()
		switch {
		case errors.Is(err, store.ErrInUse):
			c.Fix = "if clawedge run is running this is expected; otherwise stop the other clawedge process that holds it"
		case errors.Is(err, store.ErrCorrupt):
			c.Fix = "the file is damaged: the next clawedge run keeps it aside as " + store.FileName + ".corrupt-TIME and starts a new store (copy it elsewhere first to try bbolt's recovery tools)"
		case errors.Is(err, fs.ErrPermission):
			c.Fix = "run doctor as the user clawedge runs as"
		default:
			c.Fix = "move the file aside if it is not needed; clawedge creates a new store"
		}
		return c
	}
	defer s.Close()
	st, err := s.Stats()
	if err != nil {
		c.Info = err.Error()
		return c
	}
	c.OK = true
	c.Info = fmt.Sprintf("%s, schema v%d, %d audit entries", s.Path(), st.SchemaVersion, st.AuditEntries)
	s.SetRetention(r)
	if u, err := s.Usage(); err == nil {
		c.Info += "; " + daemon.UsageLine(u) // storeusage.go
	}
	return c
}

// Board opens the configured board the way run does, and reports each pin.
func Board(cfg *config.Config) []Check {
	c := Check{What: "board " + cfg.Board.Driver}
	if cfg.Board.Driver == "periph" {
		chips, _ := filepath.Glob("/dev/gpiochip*")
		if len(chips) == 0 {
			c.Info = "no /dev/gpiochip* on this machine"
			c.Fix = "run on a board with the GPIO character device, or set board.driver: sim"
			return []Check{c}
		}
	}
	b, err := daemon.OpenBoard(cfg, nil)
	if err != nil {
		c.Info = err.Error()
		c.Fix = "for permission errors add the user to the gpio group; if clawedge run holds the pins, stop it first"
		return []Check{c}
	}
	defer b.Close()
	c.OK, c.Info = true, fmt.Sprintf("%d pins, %d ports", len(b.Pins()), len(b.Ports()))
	out := []Check{c}
	for _, p := range b.Pins() {
		out = append(out, Check{What: "pin " + p.Name(), OK: true, Info: p.String()})
	}
	return out
}

func Device(what, device string, optional bool) Check {
	c := Check{What: what}
	fi, err := os.Stat(device)
	switch {
	case err != nil && optional:
		c.OK, c.Info = true, device+" absent (simulated board: attach a device or use socat for a PTY)"
	case err != nil:
		c.Info, c.Fix = device+": "+err.Error(), "plug the device in, or correct the device path in the config"
	case fi.Mode()&os.ModeCharDevice == 0:
		c.Info, c.Fix = device+" is not a character device", "point it at a tty such as /dev/ttyUSB0"
	default:
		f, err := os.OpenFile(device, os.O_RDWR|syscall.O_NOCTTY, 0)
		if err != nil {
			c.Info, c.Fix = device+": "+err.Error(), "add the user to the dialout group"
			return c
		}
		defer f.Close()
		if !termsafe.IsTTY(f) {
			// /dev/null opens and takes writes: without this it
			// passed as a good serial port.
			c.Info = device + " is a character device but not a serial port (it has no terminal settings)"
			c.Fix = "point it at the serial device, such as /dev/ttyUSB0, /dev/ttyAMA0 or /dev/serial/by-id/..."
			return c
		}
		c.OK, c.Info = true, device+" is a serial port, readable and writable"
	}
	return c
}

// Daemon reports a running daemon's view of its board and store.
func Daemon(d *channels.ControlClient, path string) []Check {
	out := []Check{{What: "daemon", OK: true, Info: "running, answering on " + path}}
	for _, q := range []struct{ what, line string }{{"daemon status", "@sys/status{}"}, {"daemon pins", "@gpio/list{}"}} {
		r, err := d.Send(q.line)
		c := Check{What: q.what, OK: err == nil && !r.Failed}
		switch {
		case err != nil:
			c.Info, c.Fix = err.Error(), "restart the daemon (systemctl restart clawedge, or stop and start clawedge run)"
		default:
			c.Info = "\n    " + strings.ReplaceAll(r.Text, "\n", "\n    ")
		}
		out = append(out, c)
	}
	return out
}
