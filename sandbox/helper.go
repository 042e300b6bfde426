package sandbox

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"syscall"

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
	// Everything per-thread (no-new-privs, the seccomp filter) is set on this
	// thread, and execve runs on it.
	runtime.LockOSThread()
	// The status pipe (Run) is fd 4; without one (Command), stderr.
	status := os.Stderr
	if _, err := unix.FcntlInt(4, unix.F_GETFD, 0); err == nil {
		unix.CloseOnExec(4)
		status = os.NewFile(4, "status")
	}
	err := helper()
	fmt.Fprintf(status, "%v", err)
	os.Exit(127)
}

func helper() error {
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
	// Last: the Go runtime of this helper needs more address space than a
	// small program does.
	if s.Limits.MemoryMB > 0 {
		if err := setrlimit(unix.RLIMIT_AS, uint64(s.Limits.MemoryMB)<<20); err != nil {
			return fmt.Errorf("memory limit: %v", err)
		}
	}
	argv := append([]string{s.Program}, s.Args...)
	err = syscall.Exec(s.Program, argv, s.Env)
	return fmt.Errorf("exec %s: %v", s.Program, err)
}

// setLimits sets every rlimit but the address space (see helper).
func setLimits(l Limits) error {
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

// setrlimit sets soft and hard limit alike, so that the child cannot raise it.
func setrlimit(resource int, v uint64) error { return prlimit(resource, v, v) }

func prlimit(resource int, soft, hard uint64) error {
	return unix.Prlimit(0, resource, &unix.Rlimit{Cur: soft, Max: hard}, nil)
}
