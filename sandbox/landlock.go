package sandbox

import (
	"fmt"
	"os"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// LandlockABI is the kernel's Landlock ABI version, 0 when it has none (too
// old, not built in, or not in the lsm= list).
func LandlockABI() int {
	v, err := llsys.LandlockGetABIVersion()
	if err != nil || v < 0 {
		return 0
	}
	return v
}

// configs are go-landlock's configurations per ABI version (the access rights
// each handles); a kernel newer than the library gets the newest it knows.
var configs = []landlock.Config{landlock.V1, landlock.V2, landlock.V3, landlock.V4, landlock.V5,
	landlock.V6, landlock.V7, landlock.V8, landlock.V9, landlock.V10, landlock.V11}

// The rights a rule grants, as go-landlock's RODirs, RWDirs, ROFiles and
// RWFiles do: reading is executing, reading files and listing directories;
// writing adds making, removing and truncating, not linking or renaming
// across directories (refer) nor connecting to socket paths (resolve unix).
const (
	fsRead  = llsys.AccessFSExecute | llsys.AccessFSReadFile | llsys.AccessFSReadDir
	fsWrite = llsys.AccessFSWriteFile | llsys.AccessFSRemoveDir | llsys.AccessFSRemoveFile | llsys.AccessFSMakeChar |
		llsys.AccessFSMakeDir | llsys.AccessFSMakeReg | llsys.AccessFSMakeSock | llsys.AccessFSMakeFifo |
		llsys.AccessFSMakeBlock | llsys.AccessFSMakeSym | llsys.AccessFSTruncate
	fsFile = llsys.AccessFSExecute | llsys.AccessFSWriteFile | llsys.AccessFSTruncate | llsys.AccessFSReadFile
)

// restrictPaths confines the calling thread, the one that execs, and so the
// program, to the spec's paths, as seccomp is: go-landlock would confine
// every thread of the helper, through libpsx when built with cgo, which
// lists /proc/<getpid()>/task and finds there, in a PID namespace of its own
// with the daemon's /proc, another process's threads, and waits for them
// forever. From ABI 4 TCP bind and connect are denied too when the network
// is off (seccomp denies the sockets themselves); from ABI 6 the child may
// not signal processes or reach abstract sockets outside its domain, the
// daemon included. No-new-privs must be set already.
func restrictPaths(s *Spec) error {
	cfg := configs[min(s.LandlockABI, len(configs))-1]
	attr := llsys.RulesetAttr{HandledAccessFS: uint64(cfg.HandledAccessFS), Scoped: uint64(cfg.Scoped)}
	if !s.Network {
		attr.HandledAccessNet = uint64(cfg.HandledAccessNet) // and no rule grants any
	}
	fd, err := llsys.LandlockCreateRuleset(&attr, 0)
	if err != nil {
		return fmt.Errorf("creating the ruleset: %v", err)
	}
	defer syscall.Close(fd)
	add := func(paths []string, write bool) error {
		for _, p := range paths {
			fi, err := os.Stat(p)
			if err != nil {
				continue // missing: nothing to grant
			}
			access := uint64(fsRead)
			if write {
				access |= fsWrite
			}
			if !fi.IsDir() {
				access &= fsFile
			}
			if s.LandlockABI >= 5 && (write || fi.Mode()&os.ModeDevice != 0) {
				access |= llsys.AccessFSIoctlDev
			}
			access &= attr.HandledAccessFS
			if access == 0 {
				continue
			}
			if err := addPath(fd, p, access); err != nil {
				return err
			}
		}
		return nil
	}
	for _, l := range []struct {
		paths []string
		write bool
	}{{baseRead, false}, {[]string{s.Program}, false}, {s.Read, false}, {s.Write, true}, {baseWrite, true}} {
		if err := add(l.paths, l.write); err != nil {
			return err
		}
	}
	if err := llsys.LandlockRestrictSelf(fd, 0); err != nil {
		return fmt.Errorf("restricting: %v", err)
	}
	return nil
}

func addPath(ruleset int, path string, access uint64) error {
	fd, err := syscall.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		if err == syscall.ENOENT {
			return nil // gone since the Stat
		}
		return fmt.Errorf("%s: %v", path, err)
	}
	defer syscall.Close(fd)
	rule := llsys.PathBeneathAttr{ParentFd: fd, AllowedAccess: access}
	if err := llsys.LandlockAddPathBeneathRule(ruleset, &rule, 0); err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	return nil
}
