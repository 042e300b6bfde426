package main

import (
	"syscall"
	"unsafe"
)

// upNetwork brings up loopback (the kernel gives it 127.0.0.1 and ::1 when
// it goes up); clawedge's control socket is a unix socket, but remote model
// servers on the board itself are reached over 127.0.0.1. Ethernet is
// configured by DHCP in the background (dhcp.go): a board without a cable,
// or QEMU's raspi3b without a NIC, boots all the same.
func upNetwork() {
	if err := ifUp("lo"); err != nil {
		logf("loopback: %v", err)
	}
	go dhcpAll()
}

// ifreqFlags is struct ifreq with the ifr_flags member of the union.
type ifreqFlags struct {
	name  [syscall.IFNAMSIZ]byte
	flags uint16
	_     [22]byte
}

func ifUp(name string) error {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	var req ifreqFlags
	copy(req.name[:], name)
	if err := ioctl(fd, syscall.SIOCGIFFLAGS, unsafe.Pointer(&req)); err != nil {
		return err
	}
	req.flags |= syscall.IFF_UP
	return ioctl(fd, syscall.SIOCSIFFLAGS, unsafe.Pointer(&req))
}

func ioctl(fd int, req uintptr, arg unsafe.Pointer) error {
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), req, uintptr(arg)); e != 0 {
		return e
	}
	return nil
}
