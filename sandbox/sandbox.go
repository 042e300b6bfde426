// Package sandbox runs one program confined: no-new-privs, Landlock path
// allowlists, a seccomp filter, rlimits, an unprivileged uid when the daemon
// is root, an empty environment except what is listed, a PID namespace (and
// process group) of its own, killed whole on timeout and when the program
// ends, and bounded captured output.
//
// The confinement is applied in the child, never to the daemon. Go cannot run
// code between fork and exec, so the child is the calling binary itself,
// re-executed with HelperArg as argv[1]: the binary's main calls Main first
// thing, which (in that mode only) reads the Spec from a pipe, confines
// itself, and execs the program. A failure before exec is reported on a
// close-on-exec status pipe, so the parent can tell "refused by the sandbox"
// from "the program ran and failed".
package sandbox

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// HelperArg is argv[1] of the re-executed helper. It is hidden: nobody types it.
const HelperArg = "__clawedge-sandbox-helper"

// Limits are the child's rlimits and the cap on its captured output. Zero
// leaves a limit unset (inherited), except OutputKB, which defaults to 64.
type Limits struct {
	CPUSeconds int `json:"cpu_s,omitempty"`     // RLIMIT_CPU: SIGXCPU then SIGKILL
	MemoryMB   int `json:"memory_mb,omitempty"` // RLIMIT_AS
	NProc      int `json:"nproc,omitempty"`     // RLIMIT_NPROC (per uid; root ignores it, hence a uid of the run's own)
	FSizeMB    int `json:"fsize_mb,omitempty"`  // RLIMIT_FSIZE: SIGXFSZ / EFBIG
	NoFile     int `json:"nofile,omitempty"`    // RLIMIT_NOFILE
	OutputKB   int `json:"output_kb,omitempty"` // stdout and stderr, each
}

// Spec is one confined run. Paths must be absolute and clean; Check refuses
// "..", relative paths and symlinks (a symlink in an allowlist would grant its
// target, which the reader of the config does not see).
type Spec struct {
	Program string   `json:"program"` // absolute path; never run through a shell
	Args    []string `json:"args"`    // argv[1:]
	Env     []string `json:"env"`     // "NAME=value": the child's whole environment
	Dir     string   `json:"dir"`     // working directory ("/" when empty)
	Read    []string `json:"read"`    // read (and execute) beneath these
	Write   []string `json:"write"`   // read and write beneath these
	Network bool     `json:"network"` // false: no sockets at all
	Limits  Limits   `json:"limits"`
	// UID and GID the child runs as; -1 keeps the caller's. Left 0, they
	// become a uid of the run's own (identity.go) when the caller is root,
	// so that rlimits such as nproc hold (the kernel does not apply them to
	// root) and count this run's processes alone, and the caller's own
	// otherwise.
	UID int `json:"uid"`
	GID int `json:"gid"`
	// LandlockABI is the Landlock ABI the helper uses; 0 means none (the
	// kernel has none, and the caller accepted the weaker confinement).
	LandlockABI int `json:"landlock_abi"`
}

// baseRead are read-only paths every program needs to be loaded: the dynamic
// loader, shared libraries and their cache, and OpenSSL's configuration,
// which a program linked with it (node among them) reads at its start and
// fails without. Missing ones are skipped.
var baseRead = []string{"/lib", "/lib64", "/usr/lib", "/usr/lib64", "/etc/ld.so.cache", "/etc/ssl/openssl.cnf", "/dev/zero", "/dev/urandom"}

// baseWrite are the paths every program may write: only the null device.
var baseWrite = []string{"/dev/null"}

// Check says what is wrong with s before anything runs.
func (s *Spec) Check() error {
	if s.Program == "" {
		return errors.New("sandbox: no program")
	}
	if strings.ContainsAny(s.Program, " \t\n;|&$`'\"<>(){}*?") {
		return fmt.Errorf("sandbox: program %q looks like a shell command: give the program's absolute path, and its arguments in args", s.Program)
	}
	// The program may be reached through a symlink (/bin/sh on a merged-/usr
	// system): what runs is its target, and Landlock grants exactly that.
	if !filepath.IsAbs(s.Program) || filepath.Clean(s.Program) != s.Program {
		return fmt.Errorf("sandbox: program %q is not an absolute, clean path", s.Program)
	}
	for _, p := range s.Read {
		if err := cleanPath("paths.read", p); err != nil {
			return err
		}
	}
	for _, p := range s.Write {
		if err := cleanPath("paths.write", p); err != nil {
			return err
		}
	}
	for _, e := range s.Env {
		if k, _, ok := strings.Cut(e, "="); !ok || k == "" {
			return fmt.Errorf("sandbox: environment entry %q is not NAME=value", e)
		}
	}
	return nil
}

// cleanPath refuses relative paths, ".." and other unclean forms, and
// symlinks anywhere in the path.
func cleanPath(what, p string) error {
	if !filepath.IsAbs(p) {
		return fmt.Errorf("sandbox: %s %q is not an absolute path", what, p)
	}
	if filepath.Clean(p) != p {
		return fmt.Errorf("sandbox: %s %q is not a clean path (no \"..\", \".\", \"//\" or trailing \"/\"): write %q", what, p, filepath.Clean(p))
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return nil // missing: nothing to grant; Landlock skips it
	}
	if real != p {
		return fmt.Errorf("sandbox: %s %q goes through a symlink to %q: list the real path", what, p, real)
	}
	return nil
}

// Result is how a run ended.
type Result struct {
	Stdout, Stderr []byte
	Truncated      bool   // output beyond Limits.OutputKB was dropped
	ExitCode       int    // -1 when killed by a signal
	Signal         string // "killed", "CPU time limit exceeded", ...
	TimedOut       bool   // the wall-clock timeout killed the process group
	Elapsed        time.Duration
	UID            int // who the program ran as; -1: the caller's uid

	killed bool          // by SIGKILL
	cpu    time.Duration // the program's, its reaped children's included
}

// Reason is a one-line account of a non-zero end, for the caller's error.
func (r Result) Reason() string {
	switch {
	case r.TimedOut:
		return "timed out (process group killed)"
	case r.Signal != "":
		return "killed by signal: " + r.Signal
	case r.ExitCode != 0:
		return fmt.Sprintf("exit status %d", r.ExitCode)
	}
	return "ok"
}

// ErrRefused wraps every refusal by the sandbox itself (a bad spec, a
// confinement that could not be set up): the program did not run.
var ErrRefused = errors.New("refused by the sandbox")
