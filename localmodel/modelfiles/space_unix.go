//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package modelfiles

import (
	"errors"
	"syscall"
)

// DiskFree is the space an unprivileged process may still write in dir's file
// system, in bytes.
func DiskFree(dir string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}

func isNoSpace(err error) bool { return errors.Is(err, syscall.ENOSPC) }
