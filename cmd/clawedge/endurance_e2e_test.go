package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawedge/clawedge/store"
)

// A year on an SD card, compressed: the daemon on a 16 MiB data partition (a
// tmpfs of that size) with 100 automations every second, reads and writes,
// for CLAWEDGE_ENDURANCE (default 2m). The store never passes its budget (a
// quarter of the partition), the board still obeys at the end, the latest
// audit entries read back, and status says what retention dropped.
func TestEnduranceOnASmallPartition(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("CLAWEDGE_REQUIRE_ENDURANCE") != "" {
			t.Fatal("the endurance test needs root (to mount its 16 MiB tmpfs)")
		}
		t.Skip("needs root to mount a 16 MiB tmpfs")
	}
	// Two minutes of waiting on the daemon's own clock: in parallel with the
	// Telegram soak, so that the package's wall time is not their sum.
	t.Parallel()
	d := 2 * time.Minute
	if v := os.Getenv("CLAWEDGE_ENDURANCE"); v != "" {
		var err error
		if d, err = time.ParseDuration(v); err != nil {
			t.Fatal(err)
		}
	}
	part := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=16m,mode=0700", "tmpfs", part).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", part).Run() })
	dataDir := filepath.Join(part, "data")
	budget := store.DefaultBudget(part, 0) // what the daemon derives, before its reserve takes a part
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "data_dir: %s\nconsole: {stdin: false}\nautomations:\n", dataDir)
	for i := 0; i < 90; i++ {
		fmt.Fprintf(&cfg, "  read%d: {when: {every: 1s}, do: '@gpio/read{pin=\"button\"}'}\n", i)
	}
	for i := 0; i < 10; i++ {
		fmt.Fprintf(&cfg, "  write%d: {when: {every: 1s}, do: '@gpio/toggle{pin=\"relay\"}'}\n", i)
	}
	cfgPath := filepath.Join(t.TempDir(), "clawedge.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	startDaemon(t, cfgPath, &lockedBuffer{})
	waitForSocket(t, filepath.Join(dataDir, "clawedge.sock"))

	db := filepath.Join(dataDir, store.FileName)
	largest := int64(0)
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(time.Second) {
		if fi, err := os.Stat(db); err == nil {
			largest = max(largest, fi.Size())
		}
		if largest > budget {
			t.Fatalf("the store file is %d bytes, past its budget of %d", largest, budget)
		}
	}
	t.Logf("after %s: the store file was at most %d bytes (budget %d)", d, largest, budget)

	runCLI(t, 0, "", "exec", "--config", cfgPath, `@gpio/write{pin="led";value=1}`)
	if got := strings.TrimSpace(runCLI(t, 0, "", "exec", "--config", cfgPath, `@gpio/read{pin="led"}`)); got != "led = 1 (high)" {
		t.Errorf("the board no longer obeys: %s", got)
	}
	audit := runCLI(t, 0, "", "audit", "--config", cfgPath, "-n", "200")
	if n := strings.Count(audit, "\n"); n < 200 || !strings.Contains(audit, `@gpio/toggle{pin="relay"} -> ok`) {
		t.Errorf("the latest audit entries do not read back (%d lines):\n%s", n, audit)
	}
	status := runCLI(t, 0, "", "status", "--config", cfgPath)
	if !strings.Contains(status, "dropped by retention so far: #") {
		t.Errorf("status does not say what retention dropped:\n%s", status)
	}
	t.Log(strings.SplitN(strings.SplitN(status, "store: ", 2)[1], "\n", 2)[0])
}
