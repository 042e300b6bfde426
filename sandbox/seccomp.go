package sandbox

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// The filter is written here in classic BPF rather than built with a library:
// it is short, its syscall numbers are x/sys/unix's constants for the target
// architecture (go-seccomp-bpf, used before, built name tables of every
// architecture at init: 161 kB of heap in the daemon, which never loads a
// filter itself), and it checks what a library's generic rules got wrong for
// us: a call through another architecture's ABI is killed in the same
// filter, and socket's int arguments are compared on their low 32 bits, as
// the kernel reads them.

// denied are refused with EPERM whatever the settings: tracing other
// processes, changing mounts and namespaces, loading kernel code, eBPF, keys,
// serving on the network.
// All exist on amd64, arm64 and arm.
var denied = []uint32{
	unix.SYS_PTRACE, unix.SYS_PROCESS_VM_READV, unix.SYS_PROCESS_VM_WRITEV, unix.SYS_KCMP, unix.SYS_PIDFD_GETFD,
	unix.SYS_MOUNT, unix.SYS_UMOUNT2, unix.SYS_PIVOT_ROOT, unix.SYS_CHROOT, unix.SYS_MOVE_MOUNT, unix.SYS_OPEN_TREE,
	unix.SYS_FSOPEN, unix.SYS_FSMOUNT, unix.SYS_FSCONFIG, unix.SYS_FSPICK,
	unix.SYS_UNSHARE, unix.SYS_SETNS,
	unix.SYS_KEXEC_LOAD, unix.SYS_KEXEC_FILE_LOAD, unix.SYS_REBOOT, unix.SYS_SWAPON, unix.SYS_SWAPOFF,
	unix.SYS_INIT_MODULE, unix.SYS_FINIT_MODULE, unix.SYS_DELETE_MODULE,
	unix.SYS_BPF, unix.SYS_PERF_EVENT_OPEN, unix.SYS_USERFAULTFD,
	unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY, unix.SYS_KEYCTL,
	unix.SYS_ACCT, unix.SYS_SETTIMEOFDAY, unix.SYS_CLOCK_SETTIME, unix.SYS_ADJTIMEX, unix.SYS_CLOCK_ADJTIME,
	unix.SYS_OPEN_BY_HANDLE_AT, unix.SYS_NAME_TO_HANDLE_AT,
	// io_uring runs socket, openat and the rest in the kernel's own
	// workers, where this filter never sees them.
	unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER,
	// The network, where a run has it, is for connecting out: a child that
	// listened on a port of the board would be sent every cookie a browser
	// keeps for the board's host (cookies do not tell ports apart), the
	// dashboard's session among them. listen on an unbound socket binds it
	// to a port of the kernel's choice, so both are refused, and accept.
	unix.SYS_BIND, unix.SYS_LISTEN, unix.SYS_ACCEPT, unix.SYS_ACCEPT4,
}

// cloneNamespaces are clone's flags that make new namespaces: refused as
// unshare is (CLONE_NEWUSER needs no privilege and opens the rest).
// CLONE_NEWTIME is clone3's and unshare's only (0x80 is in clone's CSIGNAL).
const cloneNamespaces = unix.CLONE_NEWNS | unix.CLONE_NEWCGROUP | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC |
	unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET

// clone3 passes its flags in memory, which a filter cannot read: it gets
// ENOSYS, and the C library falls back to clone, whose flags are checked.
const retNoClone3 = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)

// auditArch is seccomp_data.arch of the native ABI; abiBits are syscall
// number bits that select another ABI of the same arch (x32 on amd64).
func auditArch(goarch string) (arch, abiBits uint32, err error) {
	switch goarch {
	case "amd64":
		return unix.AUDIT_ARCH_X86_64, 0x40000000, nil // __X32_SYSCALL_BIT
	case "arm64":
		return unix.AUDIT_ARCH_AARCH64, 0, nil
	case "arm":
		return unix.AUDIT_ARCH_ARM, 0, nil
	}
	return 0, 0, fmt.Errorf("no seccomp filter for %s", goarch)
}

// Offsets in struct seccomp_data: nr, arch, then the six arguments as u64
// (their low halves first: the targets are little-endian).
const (
	offNr   = 0
	offArch = 4
	offArg0 = 16
	offArg1 = 24
)

const retDeny = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)

// filter assembles the program: another ABI is killed; the denied calls,
// clone making namespaces, socket (network off: all; on: all but IPv4 and
// IPv6, and raw ones of those) and socketpair but of streams get EPERM; the
// rest is allowed.
func filter(arch, abiBits uint32, network bool) []bpf.Instruction {
	var p []bpf.Instruction
	type fix struct {
		at    int
		label string
	}
	var fixes []fix
	labels := map[string]int{}
	jumpTo := func(cond bpf.JumpTest, val uint32, label string) {
		fixes = append(fixes, fix{len(p), label})
		p = append(p, bpf.JumpIf{Cond: cond, Val: val})
	}
	p = append(p, bpf.LoadAbsolute{Off: offArch, Size: 4})
	jumpTo(bpf.JumpNotEqual, arch, "kill")
	p = append(p, bpf.LoadAbsolute{Off: offNr, Size: 4})
	if abiBits != 0 {
		jumpTo(bpf.JumpBitsSet, abiBits, "kill")
	}
	for _, nr := range denied {
		jumpTo(bpf.JumpEqual, nr, "deny")
	}
	jumpTo(bpf.JumpEqual, unix.SYS_CLONE3, "enosys")
	// clone's flags are an unsigned long the kernel reads the low 32 bits of
	// (lower_32_bits in kernel/fork.c); its first argument on all three ABIs.
	p = append(p, bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: unix.SYS_CLONE, SkipTrue: 2},
		bpf.LoadAbsolute{Off: offArg0, Size: 4})
	jumpTo(bpf.JumpBitsSet, cloneNamespaces, "deny")
	p = append(p, bpf.LoadAbsolute{Off: offNr, Size: 4})
	jumpTo(bpf.JumpEqual, unix.SYS_SOCKETPAIR, "socketpair")
	jumpTo(bpf.JumpNotEqual, unix.SYS_SOCKET, "allow")
	if network {
		// IPv4 and IPv6 only. AF_UNIX above all: the daemon's control socket
		// is a path a child of a daemon that is not root may open (same uid),
		// or reach through /proc/<daemon>/root; AF_NETLINK, AF_PACKET and the
		// rest reach the kernel, not the network. glibc's getaddrinfo does
		// without netlink (it then assumes both address families).
		p = append(p, bpf.LoadAbsolute{Off: offArg0, Size: 4}) // domain
		jumpTo(bpf.JumpEqual, unix.AF_INET, "inet")
		jumpTo(bpf.JumpNotEqual, unix.AF_INET6, "deny")
		labels["inet"] = len(p)
		p = append(p, bpf.LoadAbsolute{Off: offArg1, Size: 4}, // type, with its flags
			bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: 0xf}) // SOCK_TYPE_MASK
		jumpTo(bpf.JumpEqual, unix.SOCK_RAW, "deny")
		p = append(p, bpf.RetConstant{Val: unix.SECCOMP_RET_ALLOW})
	} else {
		p = append(p, bpf.RetConstant{Val: retDeny})
	}
	// socketpair makes AF_UNIX sockets only. A stream pair is born connected
	// to itself and cannot connect again (EISCONN): a pipe, which asyncio's
	// and libuv's event loops need. A datagram or seqpacket end could be
	// sent, or reconnected, to any socket path: refused.
	labels["socketpair"] = len(p)
	p = append(p, bpf.LoadAbsolute{Off: offArg1, Size: 4},
		bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: 0xf})
	jumpTo(bpf.JumpEqual, unix.SOCK_STREAM, "allow")
	labels["deny"] = len(p)
	p = append(p, bpf.RetConstant{Val: retDeny})
	labels["enosys"] = len(p)
	p = append(p, bpf.RetConstant{Val: retNoClone3})
	labels["allow"] = len(p)
	p = append(p, bpf.RetConstant{Val: unix.SECCOMP_RET_ALLOW})
	labels["kill"] = len(p)
	p = append(p, bpf.RetConstant{Val: unix.SECCOMP_RET_KILL_PROCESS})
	for _, f := range fixes {
		j := p[f.at].(bpf.JumpIf)
		j.SkipTrue = uint8(labels[f.label] - f.at - 1) // < 256 instructions: fits
		p[f.at] = j
	}
	return p
}

// loadSeccomp installs the filter on the calling thread (the one that execs).
func loadSeccomp(network bool) error {
	arch, abiBits, err := auditArch(runtime.GOARCH)
	if err != nil {
		return err
	}
	prog, err := bpf.Assemble(filter(arch, abiBits, network))
	if err != nil {
		return err
	}
	filters := make([]unix.SockFilter, len(prog))
	for i, in := range prog {
		filters[i] = unix.SockFilter{Code: in.Op, Jt: in.Jt, Jf: in.Jf, K: in.K}
	}
	fprog := unix.SockFprog{Len: uint16(len(filters)), Filter: &filters[0]}
	if _, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fprog))); e != 0 {
		return fmt.Errorf("loading the filter: %v", e)
	}
	return nil
}
