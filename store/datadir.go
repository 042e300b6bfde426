package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// A data_dir that another user can write is a hijack: they can unlink
// clawedge.sock and answer `clawedge exec` themselves, or delete clawedge.db under
// the daemon. So the directory (and the store file) must belong to the user
// clawedge runs as and be writable by no one else.

// ErrUnsafeDir matches (errors.Is) the error for a data_dir, store file, or a
// file clawedge runs or loads (CheckTrusted) that another user could change.
var ErrUnsafeDir = errors.New("another user could change a file clawedge relies on")

// Ownership is what decides whether a path is safe: its mode and owner, and the
// uid of the process that is to trust it.
type Ownership struct {
	Path  string
	Mode  fs.FileMode
	Owner uint32
	UID   uint32 // this process's effective uid
}

// Unsafe says what is wrong (nil: nothing) and whether chmod alone repairs it
// (the path is ours, only its group/other write bits are set).
func (o Ownership) Unsafe() (problem error, chmodRepairs bool) {
	what := "data_dir"
	if !o.Mode.IsDir() {
		what = "store file"
	}
	if o.Owner != o.UID {
		return &unsafeDirError{fmt.Sprintf("%s %s belongs to uid %d, not to the user clawedge runs as (uid %d), who must be the only one able to change it; "+
			"run clawedge as uid %d, or give it to this user: sudo chown %d %s && sudo chmod go-w %s", what, o.Path, o.Owner, o.UID, o.Owner, o.UID, o.Path, o.Path)}, false
	}
	if o.Mode.Perm()&0o022 != 0 {
		return &unsafeDirError{fmt.Sprintf("%s %s is writable by group or others (mode %v): another user could replace clawedge.sock or clawedge.db; run: chmod go-w %s",
			what, o.Path, o.Mode.Perm(), o.Path)}, true
	}
	return nil, false
}

type unsafeDirError struct{ msg string }

func (e *unsafeDirError) Error() string        { return e.msg }
func (e *unsafeDirError) Is(target error) bool { return target == ErrUnsafeDir }

// OwnershipOf stats path (following a symlink: what matters is what is written).
func OwnershipOf(path string) (Ownership, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return Ownership{}, err
	}
	o := Ownership{Path: path, Mode: fi.Mode(), UID: uint32(os.Geteuid())}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		o.Owner = st.Uid
	} else {
		o.Owner = o.UID // no owners on this system
	}
	return o, nil
}

// CheckOwned returns nil when path (a data_dir or the store file) can be written
// only by this process's user. With repair, a path of ours that group or others
// may write is chmod'ed go-w and warn is told; otherwise, and for a path of
// another user, the error says what to run.
func CheckOwned(path string, repair bool, warn func(string)) error {
	o, err := OwnershipOf(path)
	if err != nil {
		return err
	}
	problem, chmodRepairs := o.Unsafe()
	if problem == nil {
		return nil
	}
	if !repair || !chmodRepairs {
		return problem
	}
	mode := o.Mode.Perm() &^ 0o022
	if err := os.Chmod(path, mode); err != nil {
		return fmt.Errorf("%w (chmod failed: %v)", problem, err)
	}
	if warn != nil {
		warn(fmt.Sprintf("%s was writable by group or others (mode %v), which would let another user replace clawedge.sock or clawedge.db; made it %v",
			path, o.Mode.Perm(), mode))
	}
	return nil
}

// CheckTrusted returns nil when path (a file clawedge runs or loads, such as the
// model runner or a model) and the folders it is in can be changed only by this
// process's user or root: otherwise another user could swap in their own
// runner (run as clawedge's user) or a crafted model file. A folder with the
// sticky bit (/tmp) is fine: others may add files there but not replace ours.
func CheckTrusted(path string) error {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return err
	}
	for _, p := range []string{real, filepath.Dir(real), filepath.Dir(path)} {
		o, err := OwnershipOf(p)
		if err != nil {
			return err
		}
		if err := o.Untrusted(path); err != nil {
			return err
		}
	}
	return nil
}

// Untrusted is CheckTrusted's decision for one path (the file, or a folder it
// is in); named is the path as configured, for the message.
func (o Ownership) Untrusted(named string) error {
	switch {
	case o.Owner != o.UID && o.Owner != 0:
		return &unsafeDirError{fmt.Sprintf("%s: %s belongs to uid %d, neither the user clawedge runs as (uid %d) nor root, who could replace it; "+
			"run: sudo chown %d %s", named, o.Path, o.Owner, o.UID, o.UID, o.Path)}
	case o.Mode.Perm()&0o022 != 0 && !(o.Mode.IsDir() && o.Mode&fs.ModeSticky != 0):
		return &unsafeDirError{fmt.Sprintf("%s: %s is writable by group or others (mode %v), who could replace it; run: chmod go-w %s",
			named, o.Path, o.Mode.Perm(), o.Path)}
	}
	return nil
}
