package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/clawedge/clawedge/update"
)

// The boot-time part of an A/B update (docs/update.md) is init's: it needs
// root (the slot's block device, remounting /boot, reboot) and clawedge runs
// unprivileged. Init runs `clawedge update settle` before the daemon starts,
// installs a bundle dropped on the boot partition, and commits a slot on
// trial once the daemon says READY=1 on the notify socket (sd_notify, sent
// when the config loaded, the store and board opened and the channels came
// up); a slot on trial that is not ready within update.HealthTimeout of its
// boot is rebooted, which brings the previous slot back.

// imageUpdater is the updater of this boot, or nil when the kernel names no
// slot (not an A/B image). Init settles and commits in-process, not through
// the new slot's clawedge: a slot whose clawedge does not run at all must
// still be rolled back.
func imageUpdater(cmdline string) *update.Updater {
	cur, ok := update.RunningSlot(cmdline)
	if !ok {
		return nil
	}
	id, _ := os.ReadFile(update.ImageBootID)
	return &update.Updater{Current: cur, Boot: update.DirFS(bootDir), Slots: update.ImageSlots,
		Mode: update.ModeTryboot, BootID: strings.TrimSpace(string(id))}
}

// bootUpdates is what updateAtBoot found.
type bootUpdates struct {
	u      *update.Updater // nil: not an A/B image
	trial  bool            // the slot is on trial
	health time.Duration   // how long a slot on trial has to be ready
	env    []string        // for the daemon: a failed attempt's message
}

// healthParam on the kernel command line shortens (or lengthens) the time
// a slot on trial has to be ready: clawedge.health=30s.
const healthParam = "clawedge.health="

// healthTimeout is update.HealthTimeout unless the command line says.
func healthTimeout(cmdline string) time.Duration {
	for _, w := range strings.Fields(cmdline) {
		if v, ok := strings.CutPrefix(w, healthParam); ok {
			if d, err := time.ParseDuration(v); err == nil && d > 0 {
				return d
			}
		}
	}
	return update.HealthTimeout
}

// updateAtBoot settles the last attempt and, when no slot is on trial,
// installs a bundle dropped on the boot partition (rebooting into it).
// Before the reaper starts: it waits for its children itself.
func updateAtBoot(cfg string) (b bootUpdates) {
	cmdline, _ := os.ReadFile("/proc/cmdline")
	b.health = healthTimeout(string(cmdline))
	if b.u = imageUpdater(string(cmdline)); b.u == nil {
		return b
	}
	var r update.Report
	if err := update.WithWritable(bootDir, func() (err error) { r, err = b.u.Settle(); return err }); err != nil {
		logf("update: settling the last attempt: %v", err)
	}
	if msg := r.Message(); msg != "" {
		logf("%s", msg)
	}
	if r.Failed {
		b.env = append(b.env, "CLAWEDGE_UPDATE_REPORT="+r.Message())
	}
	if b.trial = r.Trying; !b.trial {
		installDropped(cfg)
	}
	return b
}

// installDropped installs the first *.update file on the boot partition
// (copied there from any PC), renames it so that it is tried once only
// (.installed or .refused), and reboots into the new slot.
func installDropped(cfg string) {
	files, _ := filepath.Glob(filepath.Join(bootDir, "*.update"))
	if len(files) == 0 {
		return
	}
	f := files[0]
	logf("installing the update %s", f)
	cmd := exec.Command(clawedgeBin, "update", "--no-reboot", "--config", cfg, f)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr // progress and errors on the console
	err := cmd.Run()
	suffix := ".installed"
	if err != nil {
		suffix = ".refused"
		logf("update %s refused or failed (%v); starting the running slot", f, err)
	}
	if rerr := update.WithWritable(bootDir, func() error { return os.Rename(f, f+suffix) }); rerr != nil {
		logf("rename %s: %v", f, rerr)
		if err == nil {
			return // it would be installed again at every boot: not rebooting into a loop
		}
	}
	if err == nil {
		logf("rebooting to try the new slot once")
		stopAll()
		if err := update.Reboot(update.ModeTryboot.RebootArg()); err != nil {
			logf("reboot: %v", err)
			halt(syscall.LINUX_REBOOT_CMD_RESTART)
		}
	}
}

// listenNotify opens the notify socket the daemon's sd_notify writes to.
// It is writable by all: only clawedge runs on the image, and a false
// READY=1 can at worst keep a slot that booted.
func listenNotify(path string) (*net.UnixConn, error) {
	os.Remove(path)
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		return nil, err
	}
	os.Chmod(path, 0o666)
	return c, nil
}

// notifyLoop reads the daemon's datagrams on c: a READY=1 line closes
// ready (once); an update.RequestKey line hands its URL to install; an
// update.PairingKey line its value to pair (pairing.go).
func notifyLoop(c *net.UnixConn, ready chan<- struct{}, install func(url string), pair func(value string)) {
	buf := make([]byte, 4096)
	closed := false
	for {
		n, _, err := c.ReadFromUnix(buf)
		if err != nil {
			return
		}
		for _, line := range strings.Split(string(buf[:n]), "\n") {
			switch {
			case line == "READY=1" && !closed:
				close(ready)
				closed = true
			case strings.HasPrefix(line, update.RequestKey):
				install(strings.TrimPrefix(line, update.RequestKey))
			case strings.HasPrefix(line, update.PairingKey):
				pair(strings.TrimPrefix(line, update.PairingKey))
			}
		}
	}
}

// watchTrial commits the slot on trial once the daemon is ready, or
// reboots (into the previous slot) if expire, after health, comes first.
// Each comes once.
func watchTrial(ready <-chan struct{}, expire <-chan time.Time, health time.Duration, commit func() error, reboot func()) {
	select {
	case <-ready:
		if err := commit(); err != nil {
			logf("update commit: %v; the next boot is the previous slot", err)
		}
	case <-expire:
		logf("the updated slot is not ready within %v of its boot: rebooting into the previous one", health)
		reboot()
	}
}

// uptime is the time since boot: the trial starts at the boot, and the
// clock of a board with no battery clock cannot be trusted yet.
func uptime() time.Duration {
	var si syscall.Sysinfo_t
	if syscall.Sysinfo(&si) != nil {
		return 0
	}
	return time.Duration(si.Uptime) * time.Second
}

// commit keeps the slot on trial: clawedge said READY=1.
func (b bootUpdates) commit() error {
	var ok bool
	err := update.WithWritable(bootDir, func() (err error) { ok, err = b.u.Commit(); return err })
	if ok { // said once the boot partition is back to read-only: on the card
		logf("update committed: slot %s is now the default", strings.ToUpper(b.u.Current))
	}
	return err
}

// runAsRoot runs clawedge with args as a child of init (through the
// reaper, which collects every child), its output on the console.
func runAsRoot(r *reaper, args ...string) error {
	_, exited, err := r.start(append([]string{clawedgeBin}, args...), &os.ProcAttr{Files: []*os.File{nil, os.Stderr, os.Stderr}})
	if err != nil {
		return err
	}
	if ws := <-exited; !ws.Exited() || ws.ExitStatus() != 0 {
		return fmt.Errorf("clawedge %s: %s", args[0]+" "+args[1], describe(ws))
	}
	return nil
}

// start serves the daemon's notify socket once it runs: READY=1
// commits a slot on trial (which is rebooted if not ready within
// update.HealthTimeout of its boot), and "update URL" requests are
// installed one at a time, then tried with a clean reboot. It returns the
// environment that points the daemon at the socket (with b's).
func (b bootUpdates) start(r *reaper, s *supervisor, cfg string) []string {
	if b.u == nil {
		return nil
	}
	trial := b.trial
	c, err := listenNotify(update.InitSocket)
	if err != nil {
		logf("notify socket: %v; updates by message and the commit of a tried slot are off", err)
		return b.env
	}
	ready := make(chan struct{})
	var busy sync.Mutex
	go notifyLoop(c, ready, func(url string) {
		if !busy.TryLock() {
			logf("update %s: another update is being installed", url)
			return
		}
		go func() {
			defer busy.Unlock()
			logf("installing the update %s", url)
			if err := runAsRoot(r, "update", "--no-reboot", "--config", cfg, url); err != nil {
				logf("update %s: %v", url, err)
				return
			}
			logf("rebooting to try the new slot once")
			s.stop(10 * time.Second)
			stopAll()
			if err := update.Reboot(update.ModeTryboot.RebootArg()); err != nil {
				logf("reboot: %v", err)
				halt(syscall.LINUX_REBOOT_CMD_RESTART)
			}
		}()
	}, func(value string) {
		if err := pairingLine(bootDir, value); err != nil {
			logf("the first pairing code: %v", err)
		}
	})
	if trial {
		t := time.NewTimer(max(b.health-uptime(), 0))
		go watchTrial(ready, t.C, b.health, b.commit,
			func() { s.stop(10 * time.Second); shutdown(syscall.LINUX_REBOOT_CMD_RESTART) })
	}
	return append([]string{"NOTIFY_SOCKET=" + update.InitSocket}, b.env...)
}
