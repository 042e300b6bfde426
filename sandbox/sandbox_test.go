package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// self is a copy of this test binary in a directory every uid may enter, so
// that a child dropped to nobody can still exec it. It serves as the helper
// and, with argv[1] "child", as the program that tries to escape.
var self string

func TestMain(m *testing.M) {
	Main()
	if len(os.Args) > 2 && os.Args[1] == "child" {
		self = os.Args[0] // the program: the copy, by its absolute path
		os.Exit(child(os.Args[2], os.Args[3:]))
	}
	if len(os.Args) > 2 && os.Args[1] == "daemon" {
		self = os.Args[0]
		os.Exit(daemon(os.Args[2]))
	}
	dir, err := os.MkdirTemp("", "sandbox-test")
	if err != nil {
		panic(err)
	}
	os.Chmod(dir, 0o755)
	self = filepath.Join(dir, "sandbox.test")
	if err := copyFile(self, "/proc/self/exe"); err != nil {
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func copyFile(dst, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		return err
	}
	return out.Close()
}

// child is the confined program: it tries one thing and prints "ok" or the error.
func child(action string, args []string) int {
	var err error
	switch action {
	case "read":
		_, err = os.ReadFile(args[0])
	case "write":
		err = os.WriteFile(args[0], []byte("escaped"), 0o644)
	case "socket":
		var fd int
		fd, err = unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		unix.Close(fd)
	case "inetsocket":
		var fd int
		fd, err = unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
		unix.Close(fd)
	case "bind", "listen", "connect":
		// A TCP socket that binds 127.0.0.1:0, listens without binding (the
		// kernel would pick a port), or connects to the port args[0].
		var fd int
		if fd, err = unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0); err == nil {
			switch action {
			case "bind":
				err = unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}})
			case "listen":
				err = unix.Listen(fd, 1)
			case "connect":
				port, _ := strconv.Atoi(args[0])
				err = unix.Connect(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}, Port: port})
			}
			unix.Close(fd)
		}
	case "socketpair":
		typ := unix.SOCK_STREAM
		if args[0] == "dgram" {
			typ = unix.SOCK_DGRAM
		}
		var fds [2]int
		if fds, err = unix.Socketpair(unix.AF_UNIX, typ, 0); err == nil {
			unix.Close(fds[0])
			unix.Close(fds[1])
		}
	case "orphan":
		// A grandchild in a session of its own (setsid), out of the run's
		// process group; this returns once it runs.
		cmd := exec.Command(self, "child", "linger", args[0])
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		var out io.ReadCloser
		if out, err = cmd.StdoutPipe(); err == nil {
			if err = cmd.Start(); err == nil {
				line := make([]byte, 6)
				_, err = io.ReadFull(out, line)
			}
		}
	case "linger":
		fmt.Println("ready")
		time.Sleep(time.Hour) // not select{}: the runtime would call that a deadlock
	case "wait":
		io.Copy(io.Discard, os.Stdin)
	case "rawsocket":
		var fd int
		fd, err = unix.Socket(unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_ICMP)
		unix.Close(fd)
	case "packetsocket":
		// The domain with a high bit set: the kernel reads the low 32 bits,
		// AF_PACKET, so the filter must too.
		hi := uint64(1) << 32
		fd, _, e := unix.RawSyscall(unix.SYS_SOCKET, uintptr(hi|unix.AF_PACKET), unix.SOCK_DGRAM, 0)
		if e != 0 {
			err = e
		} else {
			unix.Close(int(fd))
		}
	case "unshare":
		err = unix.Unshare(unix.CLONE_NEWUSER)
	case "clonenewuser":
		// A child in a new user namespace, by clone as by unshare; it exits at once.
		pid, _, e := unix.RawSyscall6(unix.SYS_CLONE, unix.CLONE_NEWUSER|uintptr(unix.SIGCHLD), 0, 0, 0, 0, 0)
		if e == 0 && pid == 0 {
			unix.Exit(0)
		}
		if e != 0 {
			err = e
		}
	case "iouring":
		var params [120]byte
		_, _, e := unix.Syscall(unix.SYS_IO_URING_SETUP, 1, uintptr(unsafe.Pointer(&params)), 0)
		if e != 0 {
			err = e
		}
	case "ptrace":
		pid, _ := strconv.Atoi(args[0])
		err = unix.PtraceAttach(pid)
	case "kill":
		pid, _ := strconv.Atoi(args[0])
		err = unix.Kill(pid, unix.SIGTERM)
	case "env":
		fmt.Println(strings.Join(os.Environ(), "\n"))
	case "session":
		sid, _ := unix.Getsid(0)
		fmt.Println(sid)
	case "fill":
		var f *os.File
		if f, err = os.Create(args[0]); err == nil {
			chunk := make([]byte, 1<<20)
			for i := 0; i < 8 && err == nil; i++ {
				_, err = f.Write(chunk)
			}
			f.Close()
		}
	case "alloc":
		var b []byte
		b, err = unix.Mmap(-1, 0, 1536<<20, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
		if err == nil {
			unix.Munmap(b)
		}
	case "spam":
		fmt.Print(strings.Repeat("x", 100<<10))
	}
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	fmt.Println("ok")
	return 0
}

// runner is a Runner that uses the copy of this binary as its helper.
func runner() *Runner { return &Runner{Helper: self} }

// spec runs this binary's child action, as root unless asRoot is false.
func spec(asRoot bool, action string, args ...string) Spec {
	s := Spec{Program: self, Args: append([]string{"child", action}, args...),
		Limits: Limits{MemoryMB: 0, OutputKB: 16}}
	if asRoot {
		s.UID, s.GID = -1, -1
	}
	return s
}

func mustRun(t *testing.T, r *Runner, s Spec) Result {
	t.Helper()
	res, err := r.Run(context.Background(), s, 10*time.Second)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

// refused asserts that the child ran and reported the wanted errno.
func refused(t *testing.T, res Result, want error) {
	t.Helper()
	out := string(res.Stdout)
	if !strings.HasPrefix(out, "error: ") || !strings.Contains(out, want.Error()) {
		t.Fatalf("child was not refused with %q: exit %d, stdout %q, stderr %q", want, res.ExitCode, out, res.Stderr)
	}
}

func TestConfinedChildRunsAndSeesOnlyListedEnv(t *testing.T) {
	t.Setenv("CANARY_SECRET", "hunter2-canary")
	s := spec(false, "env")
	s.Env = []string{"LANG=C"}
	res := mustRun(t, runner(), s)
	if res.ExitCode != 0 || string(res.Stdout) != "LANG=C\nok\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", res.ExitCode, res.Stdout, res.Stderr)
	}
}

// needLandlock skips a test of Landlock's confinement on a kernel without it
// (TestWithoutLandlock covers that kernel), unless CLAWEDGE_REQUIRE_LANDLOCK is set.
func needLandlock(t *testing.T) {
	t.Helper()
	if LandlockABI() == 0 {
		if os.Getenv("CLAWEDGE_REQUIRE_LANDLOCK") != "" {
			t.Fatal("this kernel has no Landlock")
		}
		t.Skip("this kernel has no Landlock")
	}
}

func TestFilesOutsideTheAllowlistAreRefused(t *testing.T) {
	needLandlock(t)
	data := t.TempDir()
	db := filepath.Join(data, "clawedge.db")
	key := filepath.Join(data, "device.key")
	os.WriteFile(db, []byte("db"), 0o644)
	os.WriteFile(key, []byte("key"), 0o644)
	out := t.TempDir()
	// Run as root: Landlock holds for root too, not only file modes.
	for _, tc := range []struct{ action, path string }{
		{"read", db}, {"read", key}, {"read", "/etc/hostname"},
		{"write", filepath.Join(data, "new")}, {"write", "/etc/clawedge-escape"},
	} {
		s := spec(true, tc.action, tc.path)
		s.Write = []string{out}
		refused(t, mustRun(t, runner(), s), unix.EACCES)
	}
	// Inside the allowlist it works, and a symlink planted there leads nowhere.
	s := spec(true, "write", filepath.Join(out, "fine"))
	s.Write = []string{out}
	if res := mustRun(t, runner(), s); string(res.Stdout) != "ok\n" {
		t.Fatalf("write inside paths.write: %q %q", res.Stdout, res.Stderr)
	}
	os.Symlink(db, filepath.Join(out, "link"))
	s = spec(true, "read", filepath.Join(out, "link"))
	s.Write = []string{out}
	refused(t, mustRun(t, runner(), s), unix.EACCES)
	if _, err := os.Stat("/etc/clawedge-escape"); err == nil {
		os.Remove("/etc/clawedge-escape")
		t.Fatal("the child wrote /etc/clawedge-escape")
	}
}

func TestPathTricksInTheAllowlistAreRefused(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "etc")
	os.Symlink("/etc", link)
	for _, tc := range []struct {
		s    Spec
		want string
	}{
		{Spec{Program: self, Read: []string{dir + "/../../etc"}}, "not a clean path"},
		{Spec{Program: self, Write: []string{"tmp/x"}}, "not an absolute path"},
		{Spec{Program: self, Read: []string{link}}, "symlink"},
		{Spec{Program: self, Write: []string{link + "/passwd"}}, "symlink"},
		{Spec{Program: "/bin/sh -c 'cat /etc/shadow'"}, "shell command"},
		{Spec{Program: "sh"}, "not an absolute, clean path"},
	} {
		_, err := runner().Run(context.Background(), tc.s, time.Second)
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: got %v, want a refusal saying %q", tc.s, err, tc.want)
		}
	}
}

func TestSocketsPtraceAndSignalsAreRefused(t *testing.T) {
	r := runner()
	refused(t, mustRun(t, r, spec(true, "socket")), unix.EPERM)
	s := spec(true, "rawsocket")
	s.Network = true
	refused(t, mustRun(t, r, s), unix.EPERM)
	s = spec(true, "packetsocket")
	s.Network = true
	refused(t, mustRun(t, r, s), unix.EPERM)
	refused(t, mustRun(t, r, spec(false, "unshare")), unix.EPERM)
	refused(t, mustRun(t, r, spec(false, "clonenewuser")), unix.EPERM)
	refused(t, mustRun(t, r, spec(false, "iouring")), unix.EPERM)
	// With the network on: IPv4 and IPv6, not AF_UNIX (the daemon's control
	// socket is a path); a stream socketpair, a pipe in effect, not a datagram one.
	s = spec(true, "socket")
	s.Network = true
	refused(t, mustRun(t, r, s), unix.EPERM)
	s = spec(true, "socketpair", "dgram")
	s.Network = true
	refused(t, mustRun(t, r, s), unix.EPERM)
	for _, action := range []string{"inetsocket", "socketpair"} {
		s = spec(true, action, "stream")
		s.Network = true
		if res := mustRun(t, r, s); string(res.Stdout) != "ok\n" {
			t.Fatalf("%s with network on: %q %q", action, res.Stdout, res.Stderr)
		}
	}
	// The network is for connecting out only: a child that listened on the
	// board would be sent the browser's cookies for the board's host (every
	// port of it), the dashboard's session among them.
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	s = spec(true, "connect", strconv.Itoa(l.Addr().(*net.TCPAddr).Port))
	s.Network = true
	if res := mustRun(t, r, s); string(res.Stdout) != "ok\n" {
		t.Fatalf("connect with network on: %q %q", res.Stdout, res.Stderr)
	}
	for _, action := range []string{"bind", "listen"} {
		s = spec(true, action)
		s.Network = true
		refused(t, mustRun(t, r, s), unix.EPERM)
	}
	daemon := strconv.Itoa(os.Getpid())
	refused(t, mustRun(t, r, spec(true, "ptrace", daemon)), unix.EPERM)
	// In its PID namespace the daemon has no pid: the number names no one.
	// Without the namespace, Landlock's signal scope refuses (ABI 6).
	want := unix.EPERM
	if r.Containment() == nil {
		want = unix.ESRCH
	}
	refused(t, mustRun(t, r, spec(true, "kill", daemon)), want)
}

// The child leads a session of its own: the daemon's controlling terminal,
// when it has one, is not the child's (/dev/tty and TIOCSTI reach nothing).
func TestChildHasItsOwnSession(t *testing.T) {
	res := mustRun(t, runner(), spec(true, "session"))
	mine, _ := unix.Getsid(0)
	if sid := strings.Fields(string(res.Stdout)); len(sid) != 2 || sid[0] == strconv.Itoa(mine) {
		t.Errorf("the child's session %q, the daemon's %d", res.Stdout, mine)
	}
}

func TestLimits(t *testing.T) {
	r := runner()
	out := filepath.Join(filepath.Dir(self), "out") // reachable by nobody
	os.Mkdir(out, 0o777)
	os.Chmod(out, 0o777)

	s := spec(false, "fill", filepath.Join(out, "big"))
	s.Write = []string{out}
	s.Limits.FSizeMB = 1
	res := mustRun(t, r, s)
	if fi, err := os.Stat(filepath.Join(out, "big")); err != nil || fi.Size() > 1<<20 {
		t.Fatalf("file past fsize: %v %v", fi, err)
	}
	if res.ExitCode == 0 && res.Signal == "" {
		t.Fatalf("filling the disk succeeded: %q", res.Stdout)
	}

	if !raceEnabled {
		s = spec(false, "alloc")
		s.Limits.MemoryMB = 1024 // the Go runtime of the child reserves ~600 MB of address space
		refused(t, mustRun(t, r, s), unix.ENOMEM)
	}

	// The CPU limit costs a CPU-second: cmd/clawedge's sys/exec escape test has it.

	s = spec(false, "spam")
	s.Limits.OutputKB = 4
	res = mustRun(t, r, s)
	if len(res.Stdout) != 4<<10 || !res.Truncated {
		t.Fatalf("output cap: %d bytes, truncated %v", len(res.Stdout), res.Truncated)
	}
}

func TestForkBombIsBoundedAndTheGroupIsKilled(t *testing.T) {
	s := Spec{Program: "/bin/sh", Args: []string{"-c", "i=0; while [ $i -lt 64 ]; do /bin/sleep 1000 & i=$((i+1)); done; echo spawned"},
		Read: []string{"/usr/bin"}, Limits: Limits{NProc: 8}}
	res, err := runner().Run(context.Background(), s, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(bytes.ToLower(res.Stderr), []byte("fork")) {
		t.Fatalf("no fork failure under nproc: stdout %q stderr %q", res.Stdout, res.Stderr)
	}
	// No sleep outlives the run: the group was killed.
	uid := res.UID
	if uid < 0 {
		uid = os.Geteuid()
	}
	out, _ := exec.Command("pgrep", "-u", strconv.Itoa(uid), "-f", "sleep 1000").Output()
	if len(bytes.TrimSpace(out)) > 0 {
		t.Fatalf("stragglers left: %s", out)
	}
}

func TestTimeoutKillsTheGroup(t *testing.T) {
	s := Spec{Program: "/bin/sh", Args: []string{"-c", "/bin/sleep 1000 & /bin/sleep 1000"}, Read: []string{"/usr/bin"}}
	res, err := runner().Run(context.Background(), s, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || res.ExitCode == 0 {
		t.Fatalf("%+v", res)
	}
}

func TestWithoutLandlock(t *testing.T) {
	var warned []string
	r := &Runner{Helper: self, ABI: func() int { return 0 }, Warn: func(m string) { warned = append(warned, m) }}
	for range 2 {
		_, err := r.Run(context.Background(), spec(true, "env"), time.Second)
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "allow_without_landlock") {
			t.Fatalf("got %v", err)
		}
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "NOT confined") {
		t.Fatalf("warnings: %q", warned)
	}
	// Accepted: it runs, file access unconfined, but seccomp still holds.
	r.AllowWithoutLandlock = true
	res := mustRun(t, r, spec(true, "read", "/etc/hostname"))
	if string(res.Stdout) != "ok\n" {
		t.Fatalf("%q %q", res.Stdout, res.Stderr)
	}
	refused(t, mustRun(t, r, spec(true, "socket")), unix.EPERM)
}

// A non-root daemon keeps its uid (it could not change it; asking used to
// refuse every run); root's children get a uid of their own, from the
// range, given back after; an explicit uid stays.
func TestSettleUID(t *testing.T) {
	for _, tc := range []struct{ uid, gid, euid, wantUID, wantGID int }{
		{0, 0, 1000, -1, -1},
		{-1, -1, 0, -1, -1},
		{1234, 1234, 0, 1234, 1234},
	} {
		s := Spec{UID: tc.uid, GID: tc.gid}
		release, err := settleUID(&s, tc.euid)
		if err != nil {
			t.Fatal(err)
		}
		release()
		if s.UID != tc.wantUID || s.GID != tc.wantGID {
			t.Errorf("%+v: got %d:%d", tc, s.UID, s.GID)
		}
	}
	var a, b Spec
	ra, _ := settleUID(&a, 0)
	rb, _ := settleUID(&b, 0)
	for _, s := range []Spec{a, b} {
		if s.UID < FirstRunUID || s.UID >= FirstRunUID+RunUIDs || s.GID != s.UID {
			t.Fatalf("root's child runs as %d:%d, not a uid of the range", s.UID, s.GID)
		}
	}
	if a.UID == b.UID {
		t.Fatalf("two runs at once share uid %d", a.UID)
	}
	if !runUIDs.used[a.UID] {
		t.Fatalf("uid %d not held while its run is under way", a.UID)
	}
	ra()
	rb()
	if runUIDs.used[a.UID] || runUIDs.used[b.UID] {
		t.Fatal("uids not given back after their runs")
	}
}

// A run granted a protected path, or a folder holding one, or running a
// program from one, does not start; a grant beside it does.
func TestProtectedPathsAreNeverGranted(t *testing.T) {
	data := t.TempDir()
	r := runner()
	r.Protected = []string{data}
	for _, s := range []Spec{
		{Program: "/bin/true", Read: []string{data}},
		{Program: "/bin/true", Write: []string{filepath.Join(data, "skills")}},
		{Program: "/bin/true", Read: []string{filepath.Dir(data)}},
		{Program: filepath.Join(data, "prog")},
	} {
		_, err := r.Run(context.Background(), s, 5*time.Second)
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), data) {
			t.Errorf("%+v: got %v, want a refusal naming %s", s, err, data)
		}
	}
	res := mustRun(t, r, Spec{Program: "/bin/true", Read: []string{"/usr/bin"}})
	if res.ExitCode != 0 {
		t.Fatalf("a run beside the protected path: %+v", res)
	}
}
