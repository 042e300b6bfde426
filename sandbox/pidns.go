package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
)

// Each run is put in a PID namespace of its own, whose init is the helper and
// then the program it execs. When that init dies, whatever ends it, the
// kernel kills every other process of the namespace, and its wait returns
// only once they are all gone: a grandchild that left the process group
// with setsid(), which the group kill misses, dies with the run too. No
// mount namespace goes with it: the child keeps the daemon's /proc.
//
// A daemon that is not root may make one only inside a user namespace of
// its own (CLONE_NEWUSER), where its uid and gid are mapped to themselves:
// the child keeps the daemon's uid, as it did, and setgroups is denied
// there. The capabilities the helper holds in that namespace go at the exec
// of the program, whose uid is not the namespace's root; no-new-privs and
// the seccomp filter (which refuses namespaces) are set before it.

// WithoutPIDNamespace is the message a kernel that refuses the PID namespace
// gets, once.
const WithoutPIDNamespace = "the kernel refused a PID namespace for sandboxed children (unprivileged user namespaces disabled, or a container's seccomp profile): runs are killed by process group only, and a child's process that calls setsid() can outlive its run"

// probeArg, after HelperArg, makes the helper exit 0 at once: Containment
// starts it so to learn whether the kernel grants the namespace.
const probeArg = "probe"

// nsAttr is the SysProcAttr of a helper: a session of its own, killed with
// the daemon, and (contained) in a new PID namespace.
func nsAttr(contained bool) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{
		// Its own session, and so its own group, killed whole; and no
		// controlling terminal (the daemon's, run from a shell, would let
		// it open /dev/tty and type into that shell with TIOCSTI).
		Setsid:    true,
		Pdeathsig: syscall.SIGKILL, // and with the daemon
	}
	if !contained {
		return a
	}
	a.Cloneflags = syscall.CLONE_NEWPID
	if uid := os.Geteuid(); uid != 0 {
		gid := os.Getegid()
		a.Cloneflags |= syscall.CLONE_NEWUSER
		a.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		a.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		a.GidMappingsEnableSetgroups = false
	}
	return a
}

// nsRefused says whether err, from starting a helper in a namespace, is the
// kernel refusing the namespace: EPERM (no privilege, user namespaces
// disabled, a seccomp profile), EINVAL (not built in), ENOSPC or EUSERS
// (max_*_namespaces reached), EACCES (writing the uid map).
func nsRefused(err error) bool {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return false
	}
	switch errno {
	case syscall.EPERM, syscall.EINVAL, syscall.ENOSPC, syscall.EUSERS, syscall.EACCES:
		return true
	}
	return false
}

// Containment says whether runs are contained by a PID namespace: nil when
// the kernel grants one (asked once, by starting the helper in one), else
// why not. Run then falls back to killing the process group.
func (r *Runner) Containment() error {
	r.nsOnce.Do(func() {
		helper, err := r.helperPath()
		if err != nil {
			r.nsErr = err
			return
		}
		cmd := &exec.Cmd{Path: helper, Args: []string{helper, HelperArg, probeArg}, Env: []string{}, Dir: "/",
			SysProcAttr: nsAttr(true)}
		if err := cmd.Run(); err != nil {
			r.nsErr = fmt.Errorf("a PID namespace: %w", err)
		}
	})
	return r.nsErr
}

// fellBack records a run that had to do without the namespace, warning once.
func (r *Runner) fellBack() {
	r.nsWarnOnce.Do(func() {
		if r.Warn != nil {
			r.Warn(WithoutPIDNamespace)
		}
	})
}

// Confined reports whether the process pid is outside this process's PID
// namespace, or in another user namespace: a child of a contained run (or one of its descendants) seen
// from the daemon. A control socket calls it with its peer's pid from
// SO_PEERCRED (which the kernel gives in the reader's namespace, 0 for a
// peer it cannot see there) and refuses a confined peer, so that a child
// that reached the socket anyway cannot use it.
//
// It compares the namespaces /proc/<pid>/ns/pid and /proc/self/ns/pid lead
// to (device and inode). Where that link may not be followed (a peer of
// another uid: the check is ptrace's), it compares how many pids the two
// have in /proc/<pid>/status (NSpid: one per namespace from /proc's down
// to the process's own), readable by all. A pid that is not positive, or
// whose /proc entry is gone, is confined: there is no process of ours to
// vouch for. Without /proc/self (no /proc mounted) nothing can be told,
// and it returns false.
func Confined(pid int) bool {
	if pid <= 0 {
		return true
	}
	self, err := os.Stat("/proc/self/ns/pid")
	if err != nil {
		return false
	}
	// A user namespace of its own (a daemon that is not root puts its runs
	// in one) is another world too: its root is not ours.
	if selfUser, err := os.Stat("/proc/self/ns/user"); err == nil {
		if peerUser, err := os.Stat(fmt.Sprintf("/proc/%d/ns/user", pid)); err == nil && !os.SameFile(selfUser, peerUser) {
			return true
		}
	}
	peer, err := os.Stat(fmt.Sprintf("/proc/%d/ns/pid", pid))
	if err == nil {
		return !os.SameFile(self, peer)
	}
	mine, err := nsPIDDepth("/proc/self/status")
	if err != nil {
		return false
	}
	theirs, err := nsPIDDepth(fmt.Sprintf("/proc/%d/status", pid))
	return err != nil || theirs != mine
}

// nsPIDDepth is the number of pids on the NSpid line of a /proc status file.
func nsPIDDepth(status string) (int, error) {
	data, err := os.ReadFile(status)
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "NSpid:"); ok {
			if n := len(strings.Fields(rest)); n > 0 {
				return n, nil
			}
		}
	}
	return 0, fmt.Errorf("%s: no NSpid line", status)
}
