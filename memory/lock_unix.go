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
