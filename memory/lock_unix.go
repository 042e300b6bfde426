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
	f, err := os.OpenFile(w.path(lockFile), os.O_CREATE|os.O_RDWR, 0o600)
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
