package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// marked lists the processes whose command line has marker in it.
func marked(marker string) []int {
	var pids []int
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		cmdline, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err == nil && bytes.Contains(cmdline, []byte(marker)) {
			pid, _ := strconv.Atoi(filepath.Base(d))
			pids = append(pids, pid)
		}
	}
	return pids
}

func newMarker(t *testing.T) string {
	return fmt.Sprintf("marker-%s-%d", strings.ReplaceAll(t.Name(), "/", "-"), time.Now().UnixNano())
}

func needContainment(t *testing.T, r *Runner) {
	t.Helper()
	if err := r.Containment(); err != nil {
		if os.Getenv("CLAWEDGE_REQUIRE_PIDNS") != "" {
			t.Fatal(err)
		}
		t.Skipf("runs are not contained here: %v", err)
	}
}

// A grandchild that leaves the run's process group and session (setsid)
// dies with the run: the PID namespace's init, the program, ended, and the
// kernel killed the rest before the run's wait returned.
func TestSetsidGrandchildDiesWithTheRun(t *testing.T) {
	r := runner()
	needContainment(t, r)
	for _, asRoot := range []bool{true, false} {
		marker := newMarker(t)
		res := mustRun(t, r, spec(asRoot, "orphan", marker))
		if string(res.Stdout) != "ok\n" {
			t.Fatalf("the child did not start its grandchild: %q %q", res.Stdout, res.Stderr)
		}
		if left := marked(marker); len(left) > 0 {
			for _, pid := range left {
				syscall.Kill(pid, syscall.SIGKILL)
			}
			t.Errorf("as root %v: processes of the run outlived it: %v", asRoot, left)
		}
	}
}

// Without the namespace (a kernel that refuses it), a run still runs, the
// warning is given once, and the setsid grandchild is what the namespace
// is for: it outlives the run (this shows TestSetsidGrandchildDiesWithTheRun
// sees such a straggler when there is one).
func TestWithoutPIDNamespace(t *testing.T) {
	var warned []string
	r := &Runner{Helper: self, Warn: func(m string) { warned = append(warned, m) }}
	r.nsOnce.Do(func() { r.nsErr = errors.New("simulated: a PID namespace: operation not permitted") })
	marker := newMarker(t)
	for range 2 {
		if res := mustRun(t, r, spec(true, "orphan", marker)); string(res.Stdout) != "ok\n" {
			t.Fatalf("%q %q", res.Stdout, res.Stderr)
		}
	}
	if len(warned) != 1 || warned[0] != WithoutPIDNamespace {
		t.Errorf("warnings: %q", warned)
	}
	left := marked(marker)
	for _, pid := range left {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	if len(left) != 2 {
		t.Errorf("%d stragglers without the namespace, want the 2 setsid grandchildren", len(left))
	}
}

// daemonReport is what a `daemon` subprocess (this binary as another uid) says.
type daemonReport struct {
	Containment string
	Stdout      string
	Err         string
	Confined    bool
}

// daemon runs one orphan run as whatever uid this process has, and reports.
func daemon(marker string) int {
	r := runner()
	var rep daemonReport
	if err := r.Containment(); err != nil {
		rep.Containment = err.Error()
	}
	res, err := r.Run(context.Background(), Spec{Program: self, Args: []string{"child", "orphan", marker}}, 10*time.Second)
	rep.Stdout = string(res.Stdout) + string(res.Stderr)
	if err != nil {
		rep.Err = err.Error()
	}
	cmd, err := r.Command(Spec{Program: self, Args: []string{"child", "wait"}})
	if err == nil {
		stdin, _ := cmd.StdinPipe()
		if err = cmd.Start(); err == nil {
			rep.Confined = Confined(cmd.Process.Pid)
			stdin.Close()
			cmd.Wait()
		}
	}
	if err != nil {
		rep.Err += err.Error()
	}
	json.NewEncoder(os.Stdout).Encode(rep)
	return 0
}

// nobody is the uid the tests run a daemon that is not root as.
const nobody = 65534

// A daemon that is not root gets its runs contained too, in a user
// namespace of its own where its uid is itself.
func TestNonRootDaemonContainsItsRuns(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to run the daemon as nobody")
	}
	marker := newMarker(t)
	cmd := exec.Command(self, "daemon", marker)
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var rep daemonReport
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if rep.Containment != "" {
		if os.Getenv("CLAWEDGE_REQUIRE_PIDNS") != "" {
			t.Fatal(rep.Containment)
		}
		t.Skipf("unprivileged runs are not contained here: %s", rep.Containment)
	}
	if rep.Err != "" || rep.Stdout != "ok\n" || !rep.Confined {
		t.Fatalf("%+v", rep)
	}
	if left := marked(marker); len(left) > 0 {
		for _, pid := range left {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		t.Errorf("processes of the run outlived it: %v", left)
	}
}

func TestConfined(t *testing.T) {
	if Confined(os.Getpid()) {
		t.Error("this process is confined")
	}
	plain := exec.Command("/usr/bin/sleep", "60")
	if err := plain.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { plain.Process.Kill(); plain.Wait() }()
	if Confined(plain.Process.Pid) {
		t.Error("a plain child is confined")
	}
	if !Confined(0) || !Confined(-1) || !Confined(1<<30) {
		t.Error("a pid that is not a process here is not confined")
	}

	r := runner()
	needContainment(t, r)
	cmd, err := r.Command(spec(false, "wait"))
	if err != nil {
		t.Fatal(err)
	}
	stdin, _ := cmd.StdinPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	if !Confined(cmd.Process.Pid) {
		t.Error("a contained child is not confined")
	}
	// The fallback of a daemon that may not follow the peer's ns link.
	mine, err := nsPIDDepth("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	if theirs, err := nsPIDDepth(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)); err != nil || theirs != mine+1 {
		t.Errorf("NSpid depth: a contained child %d (%v), this process %d", theirs, err, mine)
	}
	bad := filepath.Join(t.TempDir(), "status")
	os.WriteFile(bad, []byte("Name:\tx\n"), 0o644)
	if _, err := nsPIDDepth(bad); err == nil {
		t.Error("a status without NSpid read")
	}
}

// The program is its namespace's init: SIGXCPU at cpu_s does not end it,
// the SIGKILL a second later does, and the result still names the limit.
func TestExplainKill(t *testing.T) {
	for _, tc := range []struct {
		res  Result
		l    Limits
		want string
	}{
		{Result{Signal: "killed (SIGKILL)", killed: true, cpu: 2 * time.Second}, Limits{CPUSeconds: 1}, "CPU time limit exceeded"},
		{Result{Signal: "killed (SIGKILL)", killed: true, cpu: 100 * time.Millisecond}, Limits{CPUSeconds: 1}, "killed (SIGKILL)"},
		{Result{Signal: "killed (SIGKILL)", killed: true, cpu: 2 * time.Second, TimedOut: true}, Limits{CPUSeconds: 1}, "killed (SIGKILL)"},
		{Result{Signal: "killed (SIGKILL)", killed: true, cpu: 2 * time.Second}, Limits{}, "killed (SIGKILL)"},
	} {
		tc.res.explainKill(tc.l)
		if !strings.HasPrefix(tc.res.Signal, tc.want) {
			t.Errorf("%+v with %+v: %q", tc.res, tc.l, tc.res.Signal)
		}
	}
}

// The CPU limit, for real: a second of CPU ends the run, as the limit.
func TestCPULimitEndsTheRun(t *testing.T) {
	s := Spec{Program: "/bin/sh", Args: []string{"-c", "while :; do :; done"}, Read: []string{"/usr/bin"}, Limits: Limits{CPUSeconds: 1}}
	res, err := runner().Run(context.Background(), s, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if res.TimedOut || !strings.HasPrefix(res.Signal, "CPU time limit exceeded") {
		t.Fatalf("%+v", res)
	}
}
