package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/clawedge/clawedge/sandbox"
)

// Escape attempts through @sys/exec: each is refused, by the allowlist, the
// sandbox's checks, Landlock, seccomp or an rlimit, and each refusal is in
// the audit trail. The suite runs as root in CI, where the child drops to
// nobody; Landlock and seccomp hold for root too (sandbox's own tests run
// the child as root to show it).
func TestSysExecEscapesAreRefusedAndAudited(t *testing.T) {
	if sandbox.LandlockABI() == 0 && os.Getenv("CLAWEDGE_REQUIRE_LANDLOCK") == "" {
		t.Skip("this kernel has no Landlock (sandbox's TestWithoutLandlock covers such a kernel)")
	}
	// Directories nobody may enter, since a root daemon's child runs as nobody.
	dir, err := os.MkdirTemp("", "sysexec")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	out := filepath.Join(dir, "out")
	os.Mkdir(out, 0o777)
	os.Chmod(out, 0o777)
	dataDir := filepath.Join(dir, "data")
	os.Mkdir(dataDir, 0o700)
	secret := filepath.Join(dataDir, "device.key")
	os.WriteFile(secret, []byte("not for children"), 0o644)
	cfgPath := filepath.Join(dir, "clawedge.yaml")
	// nproc counts every process and thread of the uid machine-wide: a root
	// daemon's children and its local-model runner both run as nobody, and other
	// packages' tests run children as nobody meanwhile, so the limit leaves them
	// room; the fork bomb still hits it.
	cfg := fmt.Sprintf(`data_dir: %s
console: {stdin: false}
policy: {tools: {"sys/exec": allow}}
exec:
  mode: full
  paths: {read: [/usr/bin], write: [%s]}
  limits: {cpu_s: 1, nproc: 64, fsize_mb: 1, memory_mb: 64}
`, dataDir, out)
	os.WriteFile(cfgPath, []byte(cfg), 0o600)

	call := func(program string, args ...string) string {
		q := make([]string, len(args))
		for i, a := range args {
			q[i] = fmt.Sprintf("%q", a)
		}
		return fmt.Sprintf(`@sys/exec{program=%q;args=(%s)}`, program, strings.Join(q, ","))
	}
	// It works at all: output comes back.
	runCLI(t, 0, "", "exec", "--config", cfgPath, call("/usr/bin/touch", out+"/ok"))
	if _, err := os.Stat(out + "/ok"); err != nil {
		t.Fatalf("touch inside paths.write: %v", err)
	}
	// A stand-in for the daemon, outside the child's sandbox, that it must not signal.
	daemon := exec.Command("/usr/bin/sleep", "60")
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	defer daemon.Process.Kill()
	cases := []struct{ name, line, want string }{
		{"write outside the allowed paths", call("/usr/bin/touch", "/etc/clawedge-escape"), "Permission denied"},
		{"read the store", call("/usr/bin/cat", filepath.Join(dataDir, "clawedge.db")), "Permission denied"},
		{"read the device key", call("/usr/bin/cat", secret), "Permission denied"},
		{"a socket with network off", call("/usr/bin/bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/80"), "socket: Operation not permitted"},
		// The program is its PID namespace's init, which SIGXFSZ does not
		// end: its write fails with EFBIG (without the namespace, SIGXFSZ).
		{"fill the disk past fsize", call("/usr/bin/dd", "if=/dev/zero", "of="+out+"/big", "bs=64K", "count=64"), "File too large|file size limit"},
		// A CPU-second may take long on a loaded machine: the wall-clock limit is raised.
		{"exceed the CPU limit", strings.Replace(call("/usr/bin/bash", "-c", "while :; do :; done"), "}", ";timeout_ms=60000}", 1), "CPU time limit"},
		{"exceed the memory limit", call("/usr/bin/bash", "-c", "printf -v x '%*s' 100000000 ''; echo ${#x}"), "cannot allocate"},
		// In its PID namespace the daemon has no pid; without one, Landlock's
		// signal scope refuses.
		{"signal the daemon", call("/usr/bin/bash", "-c", fmt.Sprintf("kill -TERM %d", daemon.Process.Pid)), "No such process|Operation not permitted"},
		{"a shell string as the program", `@sys/exec{program="/bin/sh -c 'cat /etc/shadow'"}`, "looks like a shell command"},
		{"path tricks", call("/usr/bin/../bin/cat", "/etc/hostname"), "not an absolute, clean path"},
		// Last: its killed processes count against nobody's process limit until
		// they are reaped, which on a loaded machine can outlast the next case
		// (whose exec then fails with EAGAIN, not with what it tests).
		{"a fork bomb", call("/usr/bin/dash", "-c", "i=0; while [ $i -lt 200 ]; do /usr/bin/sleep 100 & i=$((i+1)); done"), "fork"},
	}
	for _, tc := range cases {
		got := runCLI(t, 1, "", "exec", "--config", cfgPath, tc.line)
		if !containsAny(got, tc.want) {
			t.Errorf("%s: %s\nwant it to say %q", tc.name, got, tc.want)
		}
	}
	if err := daemon.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the stand-in daemon was signalled: %v", err)
	}
	if _, err := os.Stat("/etc/clawedge-escape"); err == nil {
		os.Remove("/etc/clawedge-escape")
		t.Error("a child wrote /etc/clawedge-escape")
	}
	if fi, err := os.Stat(out + "/big"); err == nil && fi.Size() > 1<<20 {
		t.Errorf("a child wrote %d bytes past fsize_mb: 1", fi.Size())
	}
	audit := runCLI(t, 0, "", "audit", "--config", cfgPath, "-n", "100")
	if n := strings.Count(audit, "-> failed: sys/exec"); n != len(cases) {
		t.Errorf("%d refusals audited, want %d:\n%s", n, len(cases), audit)
	}
}

// Allowlist mode: only the listed program with matching arguments runs, and
// the tool's program parameter offers only the listed programs.
func TestSysExecAllowlist(t *testing.T) {
	cfgPath, _ := writeConfig(t, `console: {stdin: false}
policy: {tools: {"sys/exec": allow}}
exec:
  mode: allowlist
  allow: [{program: /usr/bin/echo, args: ["hello|bye"]}]
`)
	if got := runCLI(t, 0, "", "exec", "--config", cfgPath, `@sys/exec{program="/usr/bin/echo";args=("hello")}`); !strings.Contains(got, "hello") {
		t.Errorf("allowed call: %s", got)
	}
	got := runCLI(t, 1, "", "exec", "--config", cfgPath, `@sys/exec{program="/usr/bin/echo";args=("hello; reboot")}`)
	if !strings.Contains(got, "not allowed by exec.allow") {
		t.Errorf("argument outside the pattern: %s", got)
	}
	got = runCLI(t, 1, "", "exec", "--config", cfgPath, `@sys/exec{program="/usr/bin/cat";args=("/etc/hostname")}`)
	if !strings.Contains(got, "/usr/bin/echo") {
		t.Errorf("program outside the allowlist: %s", got)
	}
	if got := runCLI(t, 0, "", "tools", "--config", cfgPath); !strings.Contains(got, "sys/exec") {
		t.Errorf("tools does not list sys/exec:\n%s", got)
	}
	// Mode deny (the default): no tool.
	cfgPath, _ = writeConfig(t, "console: {stdin: false}\n")
	if got := runCLI(t, 0, "", "tools", "--config", cfgPath); strings.Contains(got, "sys/exec") {
		t.Errorf("sys/exec exists with exec.mode deny:\n%s", got)
	}
}

// containsAny says whether s contains one of want's "|"-separated strings.
func containsAny(s, want string) bool {
	for _, w := range strings.Split(want, "|") {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}
