//go:build unix

package memory

import (
	"io/fs"
	"os"
	"syscall"
)

// locked runs fn holding the workspace's lock file (flock), which the daemon
// and `clawedge memory` both take before they change MEMORY.md.
func (w *Workspace) locked(fn func() error) error {
	// Read-only and readable by all (it is empty): whoever made it, root
	// running the CLI or the daemon's user, the other can take it.
	f, err := os.OpenFile(w.path(lockFile), os.O_CREATE|os.O_RDONLY, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return fn()
}

func inode(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ino
	}
	return 0
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// keepOwner gives the new file the owner of the one it replaces (or of the
// workspace directory): `sudo clawedge memory add` must not leave the
// daemon's user a MEMORY.md it cannot read.
func keepOwner(tmp, path, dir string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	fi, err := os.Stat(path)
	if err != nil {
		if fi, err = os.Stat(dir); err != nil {
			return nil
		}
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return os.Chown(tmp, int(st.Uid), int(st.Gid))
	}
	return nil
}
