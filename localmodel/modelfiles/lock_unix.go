//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package modelfiles

import (
	"errors"
	"os"
	"syscall"
)

// lockFile takes an exclusive advisory lock on f, without waiting: two pulls
// of the same model must not append to the same .part. The lock goes with
// the file's close (or the process's death), so a crash leaves none behind.
func lockFile(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return ErrBusy
	}
	return err
}
