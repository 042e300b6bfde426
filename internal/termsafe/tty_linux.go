package termsafe

import (
	"io"
	"os"
	"syscall"
	"unsafe"
)

// IsTTY reports whether f has terminal settings (termios), as a terminal, a serial
// port, a USB serial adapter or a PTY does, and /dev/null, a file or a pipe does not:
// the same ioctl a serial port's open makes first. Being a character device is not
// enough (/dev/null is one).
func IsTTY(f *os.File) bool {
	var t syscall.Termios
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), syscall.TCGETS, uintptr(unsafe.Pointer(&t)))
	return errno == 0
}

// IsTerminal reports whether w is a terminal (progress redraws in place).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && IsTTY(f)
}
