package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/clawedge/clawedge/sandbox"

	"github.com/clawedge/clawedge/channels"
	"github.com/clawedge/clawedge/config"
	"github.com/clawedge/clawedge/localmodel"
	"github.com/clawedge/clawedge/store"
	"github.com/spf13/cobra"
)

// check is one doctor finding: what was checked, whether it is fine, and if not,
// how to fix it.
type check struct {
	what string
	ok   bool
	info string // detail when ok, the problem otherwise
	fix  string
	warn bool // ok, but worth a look: printed as warn with its fix, not counted as a failure
}

func newDoctorCmd(g *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "Check config, board, pins, ports, store, models, Telegram, clock and disk; say what is missing and how to fix it",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			checks := diagnose(g)
			failed := printChecks(cmd.OutOrStdout(), checks)
			if failed > 0 {
				return &exitError{code: 1, err: fmt.Errorf("%d problem(s) found", failed)}
			}
			return nil
		},
	}
}

func printChecks(w io.Writer, checks []check) (failed int) {
	for _, c := range checks {
		mark := "ok  "
		if c.warn {
			mark = "warn"
		}
		if !c.ok {
			mark = "FAIL"
			failed++
		}
		fmt.Fprintf(w, "[%s] %s: %s\n", mark, c.what, c.info)
		if (!c.ok || c.warn) && c.fix != "" {
			fmt.Fprintf(w, "       fix: %s\n", c.fix)
		}
	}
	return failed
}

func diagnose(g *globalFlags) []check {
	var checks []check
	add := func(c check) { checks = append(checks, c) }

	cfg, err := loadConfig(g)
	if err != nil {
		add(check{what: "config", info: err.Error(), fix: "correct the file at the line and column shown (clawedge config check FILE)"})
		return checks
	}
	src := cfg.Source
	if src == "" {
		src = "none found, using built-in defaults (simulated board)"
	}
	add(check{what: "config", ok: true, info: src})

	add(dataDirCheck(cfg.DataDir))
	d, err := dialDaemon(cfg)
	if err != nil {
		add(check{what: "daemon", info: err.Error(), fix: "run doctor as the daemon's user; if the socket is someone else's, fix data_dir's owner and mode and restart clawedge"})
	} else if d != nil {
		// The daemon holds the store and the pins: ask it rather than open them.
		defer d.Close()
		checks = append(checks, daemonChecks(d, controlPath(cfg))...)
	} else {
		add(storeCheck(cfg.DataDir, retentionOf(cfg)))
		checks = append(checks, boardChecks(cfg)...)
	}
	for _, name := range sortedKeys(cfg.Board.Ports) {
		p := cfg.Board.Ports[name]
		add(deviceCheck("port "+name, p.Device, cfg.Board.Driver == "sim"))
	}
	if sc := cfg.Console.Serial; sc != nil {
		add(deviceCheck("serial console", sc.Device, false))
	}
	add(automationsCheck(cfg)) // automations.go
	if cfg.Telegram.Token.Reveal() != "" {
		add(telegramCheck(cfg)) // the token is never printed, not even in part
	}
	if cfg.MQTT != nil {
		add(mqttCheck(cfg)) // mqtt.go; nor is the password
	}
	checks = append(checks, mcpChecks(cfg)...)                 // mcpclient.go
	checks = append(checks, skillChecks(cfg, os.Geteuid())...) // doctor_skills.go
	if m := cfg.Models.Local; m != nil {
		checks = append(checks, localModelChecks(m, localmodel.FindRunner, "/proc/meminfo")...)
	}
	checks = append(checks, remoteChecks(cfg.Models.Remote, remoteCheckTimeout)...)
	add(memoryCheck(cfg))                         // doctor_memory.go
	add(sandboxCheck(cfg, sandbox.LandlockABI())) // doctor_sandbox.go
	add(wifiCheck(cfg.Network))                   // wifi.go
	add(clockCheck(time.Now(), installedAt(), kernelSynced))
	add(diskCheck(cfg.DataDir, syscall.Statfs))
	return checks
}

func dataDirCheck(dir string) check {
	c := check{what: "data_dir"}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		c.info, c.fix = err.Error(), "set data_dir to a writable folder, or create it for this user"
		return c
	}
	// Another user who can write data_dir can answer for the daemon (clawedge.sock)
	// or delete its audit trail (clawedge.db).
	if err := store.CheckOwned(dir, false, nil); err != nil {
		c.info, c.fix = err.Error(), "make data_dir belong to the user clawedge runs as, writable by no one else (clawedge run repairs the mode of its own data_dir)"
		return c
	}
	probe, err := os.CreateTemp(dir, ".doctor-*")
	if err != nil {
		c.info, c.fix = dir+" is not writable: "+err.Error(), "chown it to the user clawedge runs as"
		return c
	}
	probe.Close()
	os.Remove(probe.Name())
	abs, _ := filepath.Abs(dir)
	c.ok, c.info = true, abs+" writable"
	return c
}

func storeCheck(dir string, r store.Retention) check {
	c := check{what: "store"}
	if _, err := os.Stat(filepath.Join(dir, store.FileName)); errors.Is(err, fs.ErrNotExist) {
		c.ok, c.info = true, "not created yet (the first command creates it)"
		return c
	}
	s, err := store.Open(dir, store.Options{Timeout: 500 * time.Millisecond, ReadOnly: true})
	if err != nil {
		c.info = err.Error()
		switch {
		case errors.Is(err, store.ErrInUse):
			c.fix = "if clawedge run is running this is expected; otherwise stop the other clawedge process that holds it"
		case errors.Is(err, store.ErrCorrupt):
			c.fix = "the file is damaged: the next clawedge run keeps it aside as " + store.FileName + ".corrupt-TIME and starts a new store (copy it elsewhere first to try bbolt's recovery tools)"
		case errors.Is(err, fs.ErrPermission):
			c.fix = "run doctor as the user clawedge runs as"
		default:
			c.fix = "move the file aside if it is not needed; clawedge creates a new store"
		}
		return c
	}
	defer s.Close()
	st, err := s.Stats()
	if err != nil {
		c.info = err.Error()
		return c
	}
	c.ok = true
	c.info = fmt.Sprintf("%s, schema v%d, %d audit entries", s.Path(), st.SchemaVersion, st.AuditEntries)
	s.SetRetention(r)
	if u, err := s.Usage(); err == nil {
		c.info += "; " + usageLine(u) // storeusage.go
	}
	return c
}

// boardChecks opens the configured board the way run does, and reports each pin.
func boardChecks(cfg *config.Config) []check {
	c := check{what: "board " + cfg.Board.Driver}
	if cfg.Board.Driver == "periph" {
		chips, _ := filepath.Glob("/dev/gpiochip*")
		if len(chips) == 0 {
			c.info = "no /dev/gpiochip* on this machine"
			c.fix = "run on a board with the GPIO character device, or set board.driver: sim"
			return []check{c}
		}
	}
	b, err := openBoard(cfg)
	if err != nil {
		c.info = err.Error()
		c.fix = "for permission errors add the user to the gpio group; if clawedge run holds the pins, stop it first"
		return []check{c}
	}
	defer b.Close()
	c.ok, c.info = true, fmt.Sprintf("%d pins, %d ports", len(b.Pins()), len(b.Ports()))
	out := []check{c}
	for _, p := range b.Pins() {
		out = append(out, check{what: "pin " + p.Name(), ok: true, info: p.String()})
	}
	return out
}

func deviceCheck(what, device string, optional bool) check {
	c := check{what: what}
	fi, err := os.Stat(device)
	switch {
	case err != nil && optional:
		c.ok, c.info = true, device+" absent (simulated board: attach a device or use socat for a PTY)"
	case err != nil:
		c.info, c.fix = device+": "+err.Error(), "plug the device in, or correct the device path in the config"
	case fi.Mode()&os.ModeCharDevice == 0:
		c.info, c.fix = device+" is not a character device", "point it at a tty such as /dev/ttyUSB0"
	default:
		f, err := os.OpenFile(device, os.O_RDWR|syscallNoCTTY, 0)
		if err != nil {
			c.info, c.fix = device+": "+err.Error(), "add the user to the dialout group"
			return c
		}
		defer f.Close()
		if !isTTY(f) {
			// /dev/null opens and takes writes: without this it
			// passed as a good serial port.
			c.info = device + " is a character device but not a serial port (it has no terminal settings)"
			c.fix = "point it at the serial device, such as /dev/ttyUSB0, /dev/ttyAMA0 or /dev/serial/by-id/..."
			return c
		}
		c.ok, c.info = true, device+" is a serial port, readable and writable"
	}
	return c
}

// daemonChecks reports a running daemon's view of its board and store.
func daemonChecks(d *channels.ControlClient, path string) []check {
	out := []check{{what: "daemon", ok: true, info: "running, answering on " + path}}
	for _, q := range []struct{ what, line string }{{"daemon status", "@sys/status{}"}, {"daemon pins", "@gpio/list{}"}} {
		r, err := d.Send(q.line)
		c := check{what: q.what, ok: err == nil && !r.Failed}
		switch {
		case err != nil:
			c.info, c.fix = err.Error(), "restart the daemon (systemctl restart clawedge, or stop and start clawedge run)"
		default:
			c.info = "\n    " + strings.ReplaceAll(r.Text, "\n", "\n    ")
		}
		out = append(out, c)
	}
	return out
}
