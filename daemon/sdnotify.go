package daemon

import (
	"context"
	"errors"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
)

// notifier speaks systemd's readiness protocol (sd_notify(3)) without cgo:
// one datagram of newline-separated KEY=VALUE assignments to the unix socket
// named by $NOTIFY_SOCKET. Under a Type=notify unit systemd waits for READY=1
// before it counts the service as started, and with WatchdogSec= it kills and
// restarts a daemon that stops sending WATCHDOG=1. Outside systemd (no
// NOTIFY_SOCKET) every method does nothing.
type notifier struct {
	addr     *net.UnixAddr // nil: not run by systemd with Type=notify
	watchdog time.Duration // WatchdogSec=; 0: no watchdog
}

// newNotifier reads the protocol's environment and removes it, so that a
// process clawedge starts (the model runner) cannot notify on its behalf.
func newNotifier() *notifier {
	n := notifierFrom(os.Getenv, os.Getpid())
	for _, k := range []string{"NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"} {
		os.Unsetenv(k)
	}
	return n
}

func notifierFrom(getenv func(string) string, pid int) *notifier {
	n := &notifier{}
	// A path, or an abstract socket written "@name" (Go's net package maps a
	// leading @ to the abstract namespace's NUL byte).
	if s := getenv("NOTIFY_SOCKET"); strings.HasPrefix(s, "/") || strings.HasPrefix(s, "@") {
		n.addr = &net.UnixAddr{Name: s, Net: "unixgram"}
	}
	// WATCHDOG_PID names the process the watchdog is meant for; a child that
	// inherited the variables must not feed it.
	if p := getenv("WATCHDOG_PID"); p != "" && p != strconv.Itoa(pid) {
		return n
	}
	if us, err := strconv.ParseInt(getenv("WATCHDOG_USEC"), 10, 64); err == nil && us > 0 {
		n.watchdog = time.Duration(us) * time.Microsecond
	}
	return n
}

// send writes one notification; a nil error also when there is no socket.
func (n *notifier) send(state string) error {
	if n == nil || n.addr == nil {
		return nil
	}
	c, err := net.DialUnix("unixgram", nil, n.addr)
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.Write([]byte(state))
	return err
}

// ready tells systemd that start-up is complete; status is shown by
// systemctl status.
func (n *notifier) ready(status string) error {
	return n.send("READY=1\nSTATUS=" + oneLineStatus(status))
}

// stopping tells systemd that shutdown has begun (outputs are going back to
// their safe levels), so it does not mistake the exit for a crash in progress.
func (n *notifier) stopping() error { return n.send("STOPPING=1\nSTATUS=stopping") }

// feedWatchdog sends WATCHDOG=1 at half the watchdog interval for as long as
// healthy says the daemon works, until ctx ends. A daemon whose store is
// wedged stops feeding and is restarted by systemd, which is the point: a
// ticker that always fires would only prove the Go scheduler runs.
func (n *notifier) feedWatchdog(ctx context.Context, healthy func() error, warn func(error)) {
	if n == nil || n.addr == nil || n.watchdog <= 0 {
		return
	}
	t := time.NewTicker(n.watchdog / 2)
	defer t.Stop()
	for {
		if err := healthy(); err != nil {
			warn(errors.New("unhealthy, not feeding the systemd watchdog: " + err.Error()))
		} else if err := n.send("WATCHDOG=1"); err != nil {
			warn(err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func oneLineStatus(s string) string { return strings.ReplaceAll(s, "\n", " ") }

// healthy is the watchdog's check: the store answers a read transaction.
func (a *Core) healthy() error {
	if err := a.store.CheckFile(); err != nil {
		return err
	}
	_, err := a.store.Stats()
	return err
}
