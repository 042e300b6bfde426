package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawedge/clawedge/daemon"
	"github.com/clawedge/clawedge/store"
)

// auditUntil polls `clawedge audit -n 1` until its line contains want.
func auditUntil(t *testing.T, cfgPath, want string) string {
	t.Helper()
	var out string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if out = runCLI(t, 0, "", "audit", "-n", "1", "--config", cfgPath); strings.Contains(out, want) {
			return out
		}
	}
	t.Fatalf("the audit never showed %q; last:\n%s", want, out)
	return ""
}

// The daemon's control socket and its clients: a call outlives neither its client
// nor the daemon, `audit -n` shows what was asked for, and an over-long line gets
// the error it gets without a daemon.
func TestDaemonControlClients(t *testing.T) {
	cfgPath, dataDir := writeConfig(t, "")
	// More entries than one page of the daemon's audit op.
	st, err := store.Open(dataDir, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Intents only: one commit each keeps this fast (the daemon marks them interrupted).
	for i := range 2*daemon.AuditPage + 7 {
		if _, err := st.Intent("t", "test", fmt.Sprintf("@sys/echo{text=\"%d\"}", i)); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()

	long := `@gpio/write{pin="` + strings.Repeat("a", 128<<10-40) + `";value=1}`
	standalone := runCLI(t, 1, "", "exec", "--config", cfgPath, long)

	out := &lockedBuffer{}
	d := startDaemon(t, cfgPath, out)
	waitForSocket(t, filepath.Join(dataDir, "clawedge.sock"))

	if got := runCLI(t, 1, "", "exec", "--config", cfgPath, long); got != standalone {
		t.Errorf("an over-long line through the daemon:\n%.300s\nwithout one:\n%.300s", got, standalone)
	}
	lines := strings.Split(strings.TrimSpace(runCLI(t, 0, "", "audit", "-n", "405", "--config", cfgPath)), "\n")
	if len(lines) != 405 || !strings.HasPrefix(lines[0], "#3 ") || !strings.Contains(lines[404], `text="406"`) {
		t.Errorf("audit -n 405 through the daemon: %d lines, first %q, last %q", len(lines), lines[0], lines[len(lines)-1])
	}
	if got := runCLI(t, 0, "", "audit", "--steps", "-n", "5000", "--config", cfgPath); !strings.Contains(got, "showing the last 1000 steps") {
		t.Errorf("audit --steps -n 5000 does not say it shows fewer:\n%s", got)
	}
	for _, n := range []string{"0", "-3"} {
		if got := runCLI(t, 1, "", "audit", "-n", n, "--config", cfgPath); !strings.Contains(got, "at least 1") {
			t.Errorf("audit -n %s: %s", n, got)
		}
	}

	// A client killed while its call waits: the daemon cancels the call.
	wait := `@gpio/wait{pin="button";edge="rising";timeout_ms=3600000}`
	client := exec.Command(binPath, "exec", "--config", cfgPath, wait)
	if err := client.Start(); err != nil {
		t.Fatal(err)
	}
	auditUntil(t, cfgPath, "gpio/wait{")
	client.Process.Kill()
	client.Wait()
	auditUntil(t, cfgPath, "-> failed: gpio/wait: cancelled: the client went away (")

	// A clean stop cancels the waiting call with its own words.
	client = exec.Command(binPath, "exec", "--config", cfgPath, wait)
	var clientOut strings.Builder
	client.Stdout, client.Stderr = &clientOut, &clientOut
	if err := client.Start(); err != nil {
		t.Fatal(err)
	}
	auditUntil(t, cfgPath, "(pending)")
	if err := d.term(t); err != nil {
		t.Fatalf("daemon exit: %v\n%s", err, out.String())
	}
	client.Wait()
	if !strings.Contains(clientOut.String(), "cancelled: clawedge stopping") {
		t.Errorf("the client of a stopped daemon was told %q", clientOut.String())
	}
	if got := runCLI(t, 0, "", "audit", "-n", "1", "--config", cfgPath); !strings.Contains(got, "-> failed: gpio/wait: cancelled: clawedge stopping (") {
		t.Errorf("after the stop: %s", got)
	}
}
