package daemon

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// listen opens a unixgram socket like systemd's notify socket.
func listen(t *testing.T) (*net.UnixConn, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "notify")
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, path
}

func recv(t *testing.T, c *net.UnixConn) string {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 4096)
	n, err := c.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	return string(buf[:n])
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestNotifierReadyStopping(t *testing.T) {
	c, path := listen(t)
	n := notifierFrom(env(map[string]string{"NOTIFY_SOCKET": path}), 42)
	if err := n.ready("clawedge v1\nready"); err != nil {
		t.Fatal(err)
	}
	if got, want := recv(t, c), "READY=1\nSTATUS=clawedge v1 ready"; got != want {
		t.Errorf("ready sent %q, want %q", got, want)
	}
	if err := n.stopping(); err != nil {
		t.Fatal(err)
	}
	if got := recv(t, c); !strings.HasPrefix(got, "STOPPING=1\n") {
		t.Errorf("stopping sent %q", got)
	}
}

func TestNotifierAbstractSocket(t *testing.T) {
	name := "@clawedge-test-" + strings.ReplaceAll(t.Name(), "/", "-")
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: name, Net: "unixgram"})
	if err != nil {
		t.Skip("no abstract unix sockets here:", err)
	}
	defer c.Close()
	n := notifierFrom(env(map[string]string{"NOTIFY_SOCKET": name}), 1)
	if err := n.ready("x"); err != nil {
		t.Fatal(err)
	}
	if got := recv(t, c); !strings.HasPrefix(got, "READY=1") {
		t.Errorf("got %q", got)
	}
}

func TestNotifierWithoutSystemd(t *testing.T) {
	for _, sock := range []string{"", "relative/path"} {
		n := notifierFrom(env(map[string]string{"NOTIFY_SOCKET": sock, "WATCHDOG_USEC": "1000"}), 1)
		if n.addr != nil {
			t.Errorf("NOTIFY_SOCKET=%q: want no socket", sock)
		}
		if err := n.ready("x"); err != nil {
			t.Errorf("ready without a socket: %v", err)
		}
		// Must return at once rather than tick forever.
		n.feedWatchdog(context.Background(), func() error { return nil }, func(error) {})
	}
}

func TestNotifierWatchdog(t *testing.T) {
	c, path := listen(t)
	n := notifierFrom(env(map[string]string{"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "40000", "WATCHDOG_PID": "7"}), 7)
	if n.watchdog != 40*time.Millisecond {
		t.Fatalf("watchdog = %v, want 40ms", n.watchdog)
	}
	ctx, cancel := context.WithCancel(context.Background())
	healthy := make(chan error, 10)
	healthy <- nil
	healthy <- nil
	done := make(chan struct{})
	var warned []error
	go func() {
		defer close(done)
		n.feedWatchdog(ctx, func() error {
			select {
			case err := <-healthy:
				return err
			default:
				return context.DeadlineExceeded // unhealthy from then on
			}
		}, func(err error) { warned = append(warned, err) })
	}()
	for range 2 {
		if got := recv(t, c); got != "WATCHDOG=1" {
			t.Errorf("got %q, want WATCHDOG=1", got)
		}
	}
	// Unhealthy: nothing more is sent.
	c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if n, err := c.Read(make([]byte, 64)); err == nil {
		t.Errorf("fed the watchdog while unhealthy (%d bytes)", n)
	}
	cancel()
	<-done
	if len(warned) == 0 {
		t.Error("no warning while unhealthy")
	}
}

func TestNotifierWatchdogForAnotherPID(t *testing.T) {
	n := notifierFrom(env(map[string]string{"NOTIFY_SOCKET": "/x", "WATCHDOG_USEC": "1000", "WATCHDOG_PID": "8"}), 7)
	if n.watchdog != 0 {
		t.Errorf("watchdog for pid 8 armed in pid 7")
	}
}
