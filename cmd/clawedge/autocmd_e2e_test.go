package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawedge/clawedge/channels"
	"github.com/clawedge/clawedge/daemon"
)

// TestAutoControlIsACall: `clawedge auto pause|resume|rm NAME` is a call of
// the person at the terminal on the one call path, with a daemon and
// without: authorized by the policy (a rule of theirs denies auto/rm),
// audited, and the control socket's own op no longer changes anything.
func TestAutoControlIsACall(t *testing.T) {
	me := fmt.Sprintf("uid:%d", os.Getuid())
	cfgPath, dataDir := writeConfig(t, fmt.Sprintf(`console: {stdin: false}
automations:
  nightly: {when: {cron: "0 3 * * *"}, do: '@gpio/write{pin="led";value=1}'}
policy:
  users: {%q: {"auto/rm": deny}}
`, me))
	var dout lockedBuffer
	d := startDaemon(t, cfgPath, &dout)
	waitForSocket(t, filepath.Join(dataDir, "clawedge.sock"))
	if out := runCLI(t, 0, "", "auto", "pause", "nightly", "--config", cfgPath); !strings.Contains(out, "paused nightly") {
		t.Fatalf("auto pause: %s", out)
	}
	if out := runCLI(t, 0, "", "auto", "list", "--config", cfgPath); !strings.Contains(out, "paused") {
		t.Fatalf("not paused:\n%s", out)
	}
	if out := runCLIAny(t, "", "auto", "rm", "nightly", "--config", cfgPath); !strings.Contains(out, "denied") {
		t.Fatalf("auto rm against the person's own rule: %s", out)
	}
	// The op itself refuses a change: only the call path decides.
	c, err := channels.DialControl(filepath.Join(dataDir, channels.ControlSocketName), "test")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Op("auto", daemon.AutoRequest{Op: "resume", Name: "nightly"}); err == nil || !strings.Contains(err.Error(), "is a call") {
		t.Fatalf("the control op resumed: %v", err)
	}
	c.Close()
	if err := d.term(t); err != nil {
		t.Errorf("daemon: %v\n%s", err, dout.String())
	}
	// Without a daemon, the same call, here on the store.
	if out := runCLI(t, 0, "", "auto", "resume", "nightly", "--config", cfgPath); !strings.Contains(out, "resumed nightly") {
		t.Fatalf("auto resume offline: %s", out)
	}
	// A run started here ends before the board closes: its call is audited.
	if out := runCLI(t, 0, "", "auto", "run", "nightly", "--config", cfgPath); !strings.Contains(out, "started nightly") {
		t.Fatalf("auto run offline: %s", out)
	}
	audit := runCLI(t, 0, "", "audit", "--config", cfgPath)
	for _, want := range []string{`@auto/pause{name="nightly"} -> ok`, `@auto/rm{name="nightly"}`, `@auto/resume{name="nightly"} -> ok`,
		`@auto/run{name="nightly"} -> ok`, `@gpio/write{pin="led";value=1} -> ok`} {
		if !strings.Contains(audit, want) {
			t.Errorf("the audit lacks %s:\n%s", want, audit)
		}
	}
}
