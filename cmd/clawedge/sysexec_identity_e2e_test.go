package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/clawedge/clawedge/sandbox"
)

// TestSysExecBesideNobody: twenty unrelated processes of nobody, then a
// hundred @sys/exec runs that fork, under the default nproc of 16, through
// the built binary's chat: every run forks and answers. When the runs were
// nobody's, the machine's other nobody processes counted against their
// limit and every one failed "resource temporarily unavailable".
func TestSysExecBesideNobody(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: a daemon that is not root runs its children as itself")
	}
	if sandbox.LandlockABI() == 0 && os.Getenv("CLAWEDGE_REQUIRE_LANDLOCK") == "" {
		t.Skip("this kernel has no Landlock (sys/exec refuses every call without it)")
	}
	for range 20 {
		c := exec.Command("/bin/sleep", "1000")
		c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { c.Process.Kill(); c.Wait() }()
	}
	cfgPath, _ := writeConfig(t, `console: {stdin: false}
policy: {tools: {"sys/exec": allow}}
exec:
  mode: full
  paths: {read: [/usr/bin]}
  limits: {nproc: 16}
`)
	var lines strings.Builder
	for i := range 100 {
		fmt.Fprintf(&lines, "@sys/exec{program=\"/bin/sh\";args=(\"-c\",\"/bin/true & /bin/true & wait; echo run %d forked\")}\n", i)
	}
	out := runCLI(t, 0, lines.String(), "chat", "--config", cfgPath)
	ran := strings.Count(out, "forked")
	if ran != 100 || strings.Contains(out, "temporarily unavailable") {
		first := out
		if i := strings.Index(out, "unavailable"); i > 200 {
			first = out[i-200:]
		}
		t.Fatalf("%d of 100 runs forked beside 20 processes of nobody:\n%.600s", ran, first)
	}
}
