package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clawedge/clawedge/sandbox"
)

// escapee is a sys/exec program that tries to reach the daemon. It is Go,
// built for the test, so that it needs nothing the machine may lack.
const escapee = `package main

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

func main() {
	switch os.Args[1] {
	case "connect": // a unix socket, by its path
		fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
		if err != nil {
			fail("socket: %v", err)
		}
		if err := syscall.Connect(fd, &syscall.SockaddrUnix{Name: os.Args[2]}); err != nil {
			fail("connect %s: %v", os.Args[2], err)
		}
		fmt.Println("escaped: connected to", os.Args[2])
	case "fds": // a socket among the inherited descriptors
		var names []string
		if ents, err := os.ReadDir("/proc/self/fd"); err == nil {
			for _, e := range ents {
				names = append(names, e.Name())
			}
		}
		for fd := 0; fd < 1024; fd++ {
			names = append(names, strconv.Itoa(fd))
		}
		for _, name := range names {
			fd, _ := strconv.Atoi(name)
			var st syscall.Stat_t
			if syscall.Fstat(fd, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFSOCK {
				continue
			}
			if _, err := syscall.Write(fd, []byte("{\"line\":\"@sys/status{}\"}\n")); err == nil {
				fmt.Println("escaped: fd", fd, "is a socket it could write to")
				return
			}
			fmt.Println("fd", fd, "is a socket")
		}
		fail("no usable socket among the inherited descriptors")
	case "orphan": // a grandchild in a session of its own
		cmd := exec.Command(os.Args[0], "linger", os.Args[2])
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		out, err := cmd.StdoutPipe()
		if err == nil {
			err = cmd.Start()
		}
		if err != nil {
			fail("starting the grandchild: %v", err)
		}
		ready := make([]byte, 6)
		if _, err := out.Read(ready); err != nil {
			fail("the grandchild: %v", err)
		}
		fmt.Println("the grandchild runs")
	case "linger":
		fmt.Println("ready")
		time.Sleep(time.Hour)
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "error: "+format+"\n", args...)
	os.Exit(1)
}
`

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

// A sys/exec child, with the network on, reaches no socket of the daemon:
// not the control socket by its path, nor through /proc/<daemon>/root, nor
// an inherited descriptor; and a grandchild that leaves the run's session
// does not outlive the call, nor the daemon. The daemon runs as root (its
// children as nobody) and as nobody (its children under its own uid, which
// owns the socket: only the seccomp filter stands in the way).
func TestSysExecEscapeToTheDaemon(t *testing.T) {
	if sandbox.LandlockABI() == 0 && os.Getenv("CLAWEDGE_REQUIRE_LANDLOCK") == "" {
		t.Skip("this kernel has no Landlock (sys/exec refuses every call without it)")
	}
	// A directory every uid may enter: the daemon as nobody runs from it.
	dir, err := os.MkdirTemp("", "escape")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	src := filepath.Join(dir, "escapee.go")
	os.WriteFile(src, []byte(escapee), 0o644)
	prog := filepath.Join(dir, "escapee")
	build := exec.Command("go", "build", "-o", prog, src)
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the escapee: %v\n%s", err, out)
	}
	bin := filepath.Join(dir, "clawedge")
	if data, err := os.ReadFile(binPath); err != nil || os.WriteFile(bin, data, 0o755) != nil {
		t.Fatalf("copying the binary: %v", err)
	}

	for _, asNobody := range []bool{false, true} {
		t.Run(map[bool]string{false: "root", true: "nobody"}[asNobody], func(t *testing.T) {
			if asNobody && os.Geteuid() != 0 {
				t.Skip("needs root, to run the daemon as nobody")
			}
			escapeTheDaemon(t, dir, bin, prog, asNobody)
		})
	}
}

func escapeTheDaemon(t *testing.T, dir, bin, prog string, asNobody bool) {
	name := "root"
	if asNobody {
		name = "nobody"
	}
	dataDir := filepath.Join(dir, "data-"+name)
	os.Mkdir(dataDir, 0o700)
	cfgPath := filepath.Join(dir, name+".yaml")
	os.WriteFile(cfgPath, []byte(fmt.Sprintf(`data_dir: %s
console: {stdin: false}
policy: {tools: {"sys/exec": allow}}
exec:
  mode: full
  network: true
  paths: {read: [/usr/bin]}
  limits: {memory_mb: 4096} # the escapee is Go, whose runtime reserves much address space
`, dataDir)), 0o644)
	var cred *syscall.Credential
	if asNobody {
		os.Chown(dataDir, 65534, 65534)
		cred = &syscall.Credential{Uid: 65534, Gid: 65534}
	}
	out := &lockedBuffer{}
	d := exec.Command(bin, "run", "--config", cfgPath)
	d.Dir = dir
	d.Env = append(os.Environ(), "XDG_CONFIG_HOME="+dir, "HOME="+dir)
	d.Stdout, d.Stderr = out, out
	d.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- d.Wait() }()
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			d.Process.Signal(syscall.SIGTERM)
			select {
			case <-done:
			case <-time.After(15 * time.Second):
				d.Process.Kill()
				<-done
				t.Errorf("the daemon did not stop after SIGTERM\n%s", out)
			}
		}
	}
	defer stop()
	sock := filepath.Join(dataDir, "clawedge.sock")
	waitForSocket(t, sock)
	call := func(args ...string) string {
		q := make([]string, len(args))
		for i, a := range args {
			q[i] = strconv.Quote(a)
		}
		return fmt.Sprintf(`@sys/exec{program=%q;args=(%s)}`, prog, strings.Join(q, ","))
	}
	viaProc := fmt.Sprintf("/proc/%d/root%s", d.Process.Pid, sock)
	for _, tc := range []struct{ name, line, want string }{
		{"the control socket by its path", call("connect", sock), "socket: operation not permitted"},
		{"the control socket through /proc/<daemon>/root", call("connect", viaProc), "socket: operation not permitted"},
		{"an inherited descriptor", call("fds"), "no usable socket among the inherited descriptors"},
	} {
		got := runCLI(t, 1, "", "exec", "--config", cfgPath, tc.line)
		if !strings.Contains(got, tc.want) || strings.Contains(got, "escaped") {
			t.Errorf("%s: %s\nwant it to say %q", tc.name, got, tc.want)
		}
	}

	marker := fmt.Sprintf("marker-%s-%d", name, time.Now().UnixNano())
	if got := runCLI(t, 0, "", "exec", "--config", cfgPath, call("orphan", marker)); !strings.Contains(got, "the grandchild runs") {
		t.Fatalf("the orphan call: %s", got)
	}
	if left := marked(marker); len(left) > 0 {
		for _, pid := range left {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		t.Errorf("processes of the run outlived the call: %v", left)
	}
	stop()
	if left := marked(marker); len(left) > 0 {
		for _, pid := range left {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		t.Errorf("processes of the run outlived the daemon: %v", left)
	}
	if strings.Contains(out.String(), sandbox.WithoutPIDNamespace) {
		t.Errorf("the daemon ran its children without a PID namespace:\n%s", out)
	}

	audit := runCLI(t, 0, "", "audit", "--config", cfgPath, "-n", "10")
	if n := strings.Count(audit, "-> failed: sys/exec"); n != 3 {
		t.Errorf("%d refusals audited, want 3:\n%s", n, audit)
	}
	if !strings.Contains(audit, "orphan") || strings.Count(audit, "-> ok") != 1 {
		t.Errorf("the orphan call is not audited as run:\n%s", audit)
	}
}
