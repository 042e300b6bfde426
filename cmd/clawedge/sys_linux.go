package main

import (
	"io"
	"os"
	"syscall"
	"unsafe"
)

// syscallNoCTTY keeps doctor's probe open of a tty from making it our controlling terminal.
const syscallNoCTTY = syscall.O_NOCTTY

// isTTY reports whether f has terminal settings (termios), as a terminal, a serial
// port, a USB serial adapter or a PTY does, and /dev/null, a file or a pipe does not:
// the same ioctl a serial port's open makes first. Being a character device is not
// enough (/dev/null is one).
func isTTY(f *os.File) bool {
	var t syscall.Termios
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), syscall.TCGETS, uintptr(unsafe.Pointer(&t)))
	return errno == 0
}

// isTerminal reports whether w is a terminal (progress redraws in place).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && isTTY(f)
}
