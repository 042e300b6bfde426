package update

import (
	"fmt"
	"syscall"
	"unsafe"
)

// Reboot syncs and restarts with an argument for the firmware ("0 tryboot":
// partition 0, then the one-shot tryboot flag), as reboot(2)'s
// LINUX_REBOOT_CMD_RESTART2 passes it; "" is a plain restart. It needs
// CAP_SYS_BOOT and returns only on failure.
func Reboot(arg string) error {
	syscall.Sync()
	if arg == "" {
		return syscall.Reboot(syscall.LINUX_REBOOT_CMD_RESTART)
	}
	p, err := syscall.BytePtrFromString(arg)
	if err != nil {
		return err
	}
	_, _, errno := syscall.Syscall6(syscall.SYS_REBOOT, syscall.LINUX_REBOOT_MAGIC1, syscall.LINUX_REBOOT_MAGIC2,
		syscall.LINUX_REBOOT_CMD_RESTART2, uintptr(unsafe.Pointer(p)), 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// WithWritable runs fn with the file system at dir mounted read-write when
// it is mounted read-only (as the SD image mounts /boot), and puts it back
// read-only after, so that a power cut at any other time finds a clean FAT.
// A dir that is writable already is left alone.
func WithWritable(dir string, fn func() error) error {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil || st.Flags&0x1 == 0 { // ST_RDONLY
		return fn()
	}
	if err := syscall.Mount("", dir, "", syscall.MS_REMOUNT, ""); err != nil {
		return fmt.Errorf("%s is read-only and cannot be remounted read-write: %w", dir, err)
	}
	err := fn()
	// Back to read-only before returning, so that what the caller says next
	// ("update committed") is true of the card: the remount flushes the FAT,
	// both of its copies and the volume's dirty flag. A power cut right after
	// the message found a FAT that mtools could not decode.
	syscall.Sync()
	if rerr := syscall.Mount("", dir, "", syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); rerr != nil && err == nil {
		err = fmt.Errorf("%s: back to read-only: %w", dir, rerr)
	}
	return err
}
