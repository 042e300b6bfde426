package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// sharedDir is a folder other users may read (t.TempDir's parent is 0700), with
// a copy of the binary they may run.
func sharedDir(t *testing.T) (dir, bin string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "clawedge-shared")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	b, err := os.ReadFile(binPath)
	if err != nil {
		t.Fatal(err)
	}
	bin = filepath.Join(dir, "clawedge")
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir, bin
}

// runAs runs the binary as uid (65534: nobody) and returns its exit code and output.
func runAs(t *testing.T, uid uint32, bin string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = "/"
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/nonexistent", "XDG_CONFIG_HOME=/nonexistent"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid}}
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), string(out)
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, string(out)
}

// Another user's `clawedge status` must not report "no daemon running" with empty
// figures: the daemon's socket and store are not theirs to read, and it says so.
func TestStatusAsAnotherUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("running a command as another user needs root")
	}
	dir, bin := sharedDir(t)
	dataDir := filepath.Join(dir, "data")
	cfgPath := filepath.Join(dir, "clawedge.yaml")
	if err := os.WriteFile(cfgPath, []byte("data_dir: "+dataDir+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	runCLI(t, 0, "", "exec", "--config", cfgPath, `@gpio/write{pin="led";value=1}`) // creates the store, 0700

	code, out := runAs(t, 65534, bin, "status", "--config", cfgPath)
	if code != 1 || !strings.Contains(out, "not accessible to this user (uid 65534)") || !strings.Contains(out, "uid 0 owns "+dataDir) || strings.Contains(out, "no daemon running") {
		t.Errorf("status as another user without a daemon: exit %d\n%s", code, out)
	}
	d := startDaemon(t, cfgPath, &lockedBuffer{})
	waitForSocket(t, filepath.Join(dataDir, "clawedge.sock"))
	code, out = runAs(t, 65534, bin, "status", "--config", cfgPath)
	if code != 1 || !strings.Contains(out, "control socket "+filepath.Join(dataDir, "clawedge.sock")+" is not accessible to this user") {
		t.Errorf("status as another user with a daemon: exit %d\n%s", code, out)
	}
	d.term(t)
}

// The daemon refuses a data_dir of another user, with what to run, and doctor
// flags one others may write.
func TestDaemonRefusesAnotherUsersDataDir(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chown needs root")
	}
	cfgPath, dataDir := writeConfig(t, "")
	os.Mkdir(dataDir, 0o777)
	os.Chmod(dataDir, 0o777)
	if out := runCLI(t, 1, "", "doctor", "--config", cfgPath); !strings.Contains(out, "[FAIL] data_dir: data_dir "+dataDir+" is writable by group or others") {
		t.Errorf("doctor on a 0777 data_dir:\n%s", out)
	}
	// A config file others may edit is refused before anything else.
	os.Chmod(cfgPath, 0o666)
	if out := runCLI(t, 1, "", "run", "--config", cfgPath); !strings.Contains(out, "config: "+cfgPath+": "+cfgPath+" is writable by group or others") {
		t.Errorf("run with a 0666 config:\n%s", out)
	}
	os.Chmod(cfgPath, 0o600)
	os.Chown(dataDir, 65534, 65534)
	out := runCLI(t, 1, "", "run", "--config", cfgPath)
	if !strings.Contains(out, "belongs to uid 65534") || !strings.Contains(out, "sudo chown 0 "+dataDir) {
		t.Errorf("run on another user's data_dir:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(dataDir, "clawedge.db")); err == nil {
		t.Error("a store was created in another user's data_dir")
	}
}

// A store file deleted under the running daemon: the next command is refused,
// and the daemon stops with a loud error rather than write into a deleted file.
func TestDaemonStopsWhenStoreDeleted(t *testing.T) {
	cfgPath, dataDir := writeConfig(t, "")
	out := &lockedBuffer{}
	d := startDaemon(t, cfgPath, out)
	waitForSocket(t, filepath.Join(dataDir, "clawedge.sock"))
	runCLI(t, 0, "", "exec", "--config", cfgPath, `@gpio/write{pin="led";value=1}`)
	os.Remove(filepath.Join(dataDir, "clawedge.db"))
	got := runCLI(t, 1, "", "exec", "--config", cfgPath, `@gpio/write{pin="led";value=0}`)
	if !strings.Contains(got, "not run: audit trail unavailable") || !strings.Contains(got, "was removed while clawedge had it open") {
		t.Errorf("exec after the store was deleted:\n%s", got)
	}
	err := <-d.done
	d.done <- err
	if err == nil || !strings.Contains(out.String(), "level=ERROR msg=\"STORE LOST: store "+filepath.Join(dataDir, "clawedge.db")+" was removed") {
		t.Errorf("daemon exit %v\n%s", err, out.String())
	}
}

// A corrupted store gets a diagnosis, not "stale lock" advice, and is kept aside,
// loudly, when a new one starts.
func TestCorruptStoreKeptAside(t *testing.T) {
	cfgPath, dataDir := writeConfig(t, "")
	os.Mkdir(dataDir, 0o700)
	os.WriteFile(filepath.Join(dataDir, "clawedge.db"), []byte(strings.Repeat("garbage ", 3000)), 0o600)
	out := runCLI(t, 1, "", "doctor", "--config", cfgPath)
	if !strings.Contains(out, "is corrupted (invalid database)") || strings.Contains(out, "stale lock") || !strings.Contains(out, "keeps it aside as clawedge.db.corrupt-TIME") {
		t.Errorf("doctor on a corrupted store:\n%s", out)
	}
	out = runCLI(t, 0, "", "exec", "--config", cfgPath, `@gpio/read{pin="led"}`)
	aside, _ := filepath.Glob(filepath.Join(dataDir, "clawedge.db.corrupt-*"))
	if len(aside) != 1 || !strings.Contains(out, "STORE CORRUPTED") || !strings.Contains(out, aside[0]) {
		t.Errorf("exec on a corrupted store (kept aside: %q):\n%s", aside, out)
	}
}
