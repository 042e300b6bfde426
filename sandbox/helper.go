package sandbox

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Main turns this process into the sandbox helper when it was started as one
// (argv[1] is HelperArg), and returns at once otherwise. A binary that uses
// Runner calls it first thing in main. The helper never returns: it execs the
// program or exits 127 after writing why on the status pipe.
func Main() {
	if len(os.Args) < 2 || os.Args[1] != HelperArg {
		return
	}
	if len(os.Args) > 2 && os.Args[2] == probeArg {
		os.Exit(0) // started in a namespace: Containment asks no more
	}
	// Everything per-thread (no-new-privs, the seccomp filter) is set on this
	// thread, and execve runs on it.
	runtime.LockOSThread()
	// The status pipe (Run) is fd 4; without one (Command), stderr.
	status := os.Stderr
	if _, err := unix.FcntlInt(4, unix.F_GETFD, 0); err == nil {
		unix.CloseOnExec(4)
		status = os.NewFile(4, "status")
	}
	err := helper(status)
	fmt.Fprintf(status, "%v", err)
	os.Exit(127)
}

func helper(status *os.File) error {
	in := os.NewFile(3, "spec")
	data, err := io.ReadAll(io.LimitReader(in, 1<<20))
	in.Close()
	if err != nil {
		return fmt.Errorf("reading the spec: %v", err)
	}
	var s Spec
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("reading the spec: %v", err)
	}
	dir := s.Dir
	if dir == "" {
		dir = "/"
	}
	if err := os.Chdir(dir); err != nil {
		return err
	}
	if err := setLimits(s.Limits); err != nil {
		return err
	}
	if s.UID >= 0 {
		// Groups first: after setuid the process may no longer change them.
		if err := syscall.Setgroups(nil); err != nil {
			return fmt.Errorf("dropping groups: %v", err)
		}
		if err := syscall.Setgid(s.GID); err != nil {
			return fmt.Errorf("setgid %d: %v", s.GID, err)
		}
		if err := syscall.Setuid(s.UID); err != nil {
			return fmt.Errorf("setuid %d: %v", s.UID, err)
		}
		// A change of uid clears the parent-death signal the daemon
		// asked for: set again, a daemon killed outright still takes the
		// run with it (its PID namespace, whatever the run started).
		if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0, 0, 0); err != nil {
			return fmt.Errorf("parent-death signal: %v", err)
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no-new-privs: %v", err)
	}
	if s.LandlockABI > 0 {
		if err := restrictPaths(&s); err != nil {
			return fmt.Errorf("landlock: %v", err)
		}
	}
	if err := loadSeccomp(s.Network); err != nil {
		return fmt.Errorf("seccomp: %v", err)
	}
	return execLimited(&s, status)
}

// execLimited sets the address-space limit (memory_mb) and execs the program,
// with no Go code in between. Past the limit, any new mapping fails, and this
// helper's runtime already holds far more address space than a small limit:
// a runtime that then grew the heap (a new span, span metadata), or started
// a thread (its stack comes from the heap), died with "fatal error: runtime:
// cannot allocate memory" before the program ran, the more often the busier
// the machine. So everything exec needs is allocated first, the runtime is
// made quiet (one P, which this goroutine holds, so no other goroutine runs
// and no thread is started for one; no GC, so no mark workers), and the limit
// and the exec are two raw system calls from a function that cannot grow its
// stack. Should the exec fail, the error goes out by raw calls too.
func execLimited(s *Spec, status *os.File) error {
	path, err := syscall.BytePtrFromString(s.Program)
	if err != nil {
		return fmt.Errorf("exec %s: %v", s.Program, err)
	}
	argv, err := syscall.SlicePtrFromStrings(append([]string{s.Program}, s.Args...))
	if err != nil {
		return fmt.Errorf("exec %s: %v", s.Program, err)
	}
	envv, err := syscall.SlicePtrFromStrings(s.Env)
	if err != nil {
		return fmt.Errorf("exec %s: %v", s.Program, err)
	}
	prefix := []byte("exec " + s.Program + ": ")
	var lim *unix.Rlimit
	if s.Limits.MemoryMB > 0 {
		v := uint64(s.Limits.MemoryMB) << 20
		lim = &unix.Rlimit{Cur: v, Max: v}
	}
	runtime.GOMAXPROCS(1)
	debug.SetGCPercent(-1)
	errno, limited := rawExec(lim, path, &argv[0], &envv[0])
	if !limited {
		return fmt.Errorf("memory limit: %v", errno)
	}
	msg := errno.Error() // a string of the errno table: no allocation
	fd := status.Fd()
	syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&prefix[0])), uintptr(len(prefix)))
	syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(unsafe.StringData(msg))), uintptr(len(msg)))
	syscall.RawSyscall(syscall.SYS_EXIT_GROUP, 127, 0, 0)
	panic("unreachable")
}

// rawExec sets lim (if any) on RLIMIT_AS and execs: it returns only on
// failure, saying whether the limit was set. nosplit: growing the stack
// could need memory past the limit; the linker checks the calls below it fit.
//
//go:nosplit
func rawExec(lim *unix.Rlimit, path *byte, argv, envv **byte) (errno syscall.Errno, limited bool) {
	if lim != nil {
		if _, _, e := syscall.RawSyscall6(unix.SYS_PRLIMIT64, 0, unix.RLIMIT_AS, uintptr(unsafe.Pointer(lim)), 0, 0, 0); e != 0 {
			return e, false
		}
	}
	_, _, e := syscall.RawSyscall(syscall.SYS_EXECVE, uintptr(unsafe.Pointer(path)), uintptr(unsafe.Pointer(argv)), uintptr(unsafe.Pointer(envv)))
	return e, true
}

// setLimits sets every rlimit but the address space (see execLimited).
func setLimits(l Limits) error {
	if l.NoFile == 0 {
		restoreNoFile()
	}
	type lim struct {
		name     string
		resource int
		v        uint64
	}
	cpu := uint64(l.CPUSeconds)
	for _, x := range []lim{
		{"cpu_s", unix.RLIMIT_CPU, cpu},
		{"nproc", unix.RLIMIT_NPROC, uint64(l.NProc)},
		{"fsize_mb", unix.RLIMIT_FSIZE, uint64(l.FSizeMB) << 20},
		{"nofile", unix.RLIMIT_NOFILE, uint64(l.NoFile)},
	} {
		if x.v == 0 {
			continue
		}
		hard := x.v
		if x.resource == unix.RLIMIT_CPU {
			hard++ // SIGXCPU at the soft limit says why; SIGKILL a second later if caught
		}
		if err := prlimit(x.resource, x.v, hard); err != nil {
			return fmt.Errorf("limit %s: %v", x.name, err)
		}
	}
	return nil
}

// restoreNoFile puts back the soft RLIMIT_NOFILE the helper started with,
// which Go's runtime raised at its start (for itself; old programs may use
// select and its fixed fd_set). syscall.Exec restores it before its execve,
// which execLimited's raw one cannot do, syscall keeping the value to
// itself: an exec of "" (ENOENT at once, nothing else happens) has it
// restored. A NoFile set instead replaces it (and tells syscall so).
func restoreNoFile() { syscall.Exec("", nil, nil) }

func prlimit(resource int, soft, hard uint64) error {
	return unix.Prlimit(0, resource, &unix.Rlimit{Cur: soft, Max: hard}, nil)
}
