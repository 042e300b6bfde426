package sandbox

import (
	"encoding/binary"
	"testing"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// seccompData is struct seccomp_data as the filter sees it. x/net/bpf's VM
// loads words big-endian (network order), the kernel natively: each word is
// written big-endian here at the offset where the kernel on a little-endian
// CPU finds it, a 64-bit argument as its low then its high half.
func seccompData(nr, arch uint32, args ...uint64) []byte {
	b := make([]byte, 64)
	binary.BigEndian.PutUint32(b[offNr:], nr)
	binary.BigEndian.PutUint32(b[offArch:], arch)
	for i, a := range args {
		binary.BigEndian.PutUint32(b[offArg0+8*i:], uint32(a))
		binary.BigEndian.PutUint32(b[offArg0+8*i+4:], uint32(a>>32))
	}
	return b
}

func TestFilterProgram(t *testing.T) {
	const arch, x32 = unix.AUDIT_ARCH_X86_64, 0x40000000
	allow, deny, kill := uint32(unix.SECCOMP_RET_ALLOW), retDeny, uint32(unix.SECCOMP_RET_KILL_PROCESS)
	for _, c := range []struct {
		name    string
		network bool
		data    []byte
		want    uint32
	}{
		{"read", false, seccompData(unix.SYS_READ, arch), allow},
		{"ptrace", false, seccompData(unix.SYS_PTRACE, arch), deny},
		{"last denied", false, seccompData(unix.SYS_NAME_TO_HANDLE_AT, arch), deny},
		{"unshare", true, seccompData(unix.SYS_UNSHARE, arch), deny},
		{"another arch", false, seccompData(unix.SYS_READ, unix.AUDIT_ARCH_I386), kill},
		{"x32 ABI", false, seccompData(unix.SYS_READ|x32, arch), kill},
		{"socket, network off", false, seccompData(unix.SYS_SOCKET, arch, unix.AF_UNIX, unix.SOCK_STREAM), deny},
		// AF_UNIX would reach the daemon's control socket by its path.
		{"unix socket", true, seccompData(unix.SYS_SOCKET, arch, unix.AF_UNIX, unix.SOCK_STREAM), deny},
		{"unix socket, high bits set", true, seccompData(unix.SYS_SOCKET, arch, 1<<32|unix.AF_UNIX, unix.SOCK_STREAM), deny},
		{"netlink socket", true, seccompData(unix.SYS_SOCKET, arch, unix.AF_NETLINK, unix.SOCK_DGRAM), deny},
		{"inet socket", true, seccompData(unix.SYS_SOCKET, arch, unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC), allow},
		{"inet6 datagram socket", true, seccompData(unix.SYS_SOCKET, arch, unix.AF_INET6, unix.SOCK_DGRAM), allow},
		{"inet socket, network off", false, seccompData(unix.SYS_SOCKET, arch, unix.AF_INET, unix.SOCK_STREAM), deny},
		{"stream socketpair", true, seccompData(unix.SYS_SOCKETPAIR, arch, unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC), allow},
		{"stream socketpair, network off", false, seccompData(unix.SYS_SOCKETPAIR, arch, unix.AF_UNIX, unix.SOCK_STREAM), allow},
		{"datagram socketpair", true, seccompData(unix.SYS_SOCKETPAIR, arch, unix.AF_UNIX, unix.SOCK_DGRAM), deny},
		{"seqpacket socketpair, network off", false, seccompData(unix.SYS_SOCKETPAIR, arch, unix.AF_UNIX, unix.SOCK_SEQPACKET), deny},
		{"datagram socketpair, stream in the high bits", true, seccompData(unix.SYS_SOCKETPAIR, arch, unix.AF_UNIX, 1<<32|unix.SOCK_DGRAM), deny},
		{"packet socket", true, seccompData(unix.SYS_SOCKET, arch, unix.AF_PACKET, unix.SOCK_DGRAM), deny},
		// The kernel reads int arguments as their low 32 bits.
		{"packet socket, high bits set", true, seccompData(unix.SYS_SOCKET, arch, 1<<32|unix.AF_PACKET, unix.SOCK_DGRAM), deny},
		{"raw socket", true, seccompData(unix.SYS_SOCKET, arch, unix.AF_INET, unix.SOCK_RAW), deny},
		{"raw socket with flags", true, seccompData(unix.SYS_SOCKET, arch, unix.AF_INET6, unix.SOCK_RAW|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC), deny},
		{"io_uring", true, seccompData(unix.SYS_IO_URING_SETUP, arch, 8, 0), deny},
		{"clone3", false, seccompData(unix.SYS_CLONE3, arch), retNoClone3},
		{"clone, a thread", false, seccompData(unix.SYS_CLONE, arch, unix.CLONE_VM|unix.CLONE_FS|unix.CLONE_FILES|unix.CLONE_SIGHAND|unix.CLONE_THREAD), allow},
		{"clone, fork", false, seccompData(unix.SYS_CLONE, arch, uint64(unix.SIGCHLD)), allow},
		{"clone, new user namespace", false, seccompData(unix.SYS_CLONE, arch, unix.CLONE_NEWUSER|uint64(unix.SIGCHLD)), deny},
		{"clone, new net namespace", true, seccompData(unix.SYS_CLONE, arch, unix.CLONE_NEWNET), deny},
		{"clone, new mount namespace", false, seccompData(unix.SYS_CLONE, arch, unix.CLONE_NEWNS), deny},
		{"clone, namespace flags in the high half only", false, seccompData(unix.SYS_CLONE, arch, uint64(unix.CLONE_NEWUSER)<<32), allow},
		{"raw socket, high bits set", true, seccompData(unix.SYS_SOCKET, arch, unix.AF_INET, 1<<40|unix.SOCK_RAW), deny},
	} {
		vm, err := bpf.NewVM(filter(arch, x32, c.network))
		if err != nil {
			t.Fatal(err)
		}
		got, err := vm.Run(c.data)
		if err != nil || uint32(got) != c.want {
			t.Errorf("%s: got %#x, %v; want %#x", c.name, got, err, c.want)
		}
	}
}

// On arm64, AArch32 code's calls come as AUDIT_ARCH_ARM, with arm's numbers
// (socket is 281, arm64's 198 is arm's lremovexattr): killed, whatever they are.
func TestFilterKillsAArch32OnArm64(t *testing.T) {
	vm, err := bpf.NewVM(filter(unix.AUDIT_ARCH_AARCH64, 0, true))
	if err != nil {
		t.Fatal(err)
	}
	for _, nr := range []uint32{3, 26, 120, 281, 435} { // read, ptrace, clone, socket, clone3 on arm
		if got, err := vm.Run(seccompData(nr, unix.AUDIT_ARCH_ARM)); err != nil || uint32(got) != unix.SECCOMP_RET_KILL_PROCESS {
			t.Errorf("AArch32 call %d: got %#x, %v; want kill", nr, got, err)
		}
	}
}

func TestAuditArch(t *testing.T) {
	for _, a := range []string{"amd64", "arm64", "arm"} {
		if _, _, err := auditArch(a); err != nil {
			t.Error(err)
		}
	}
	if _, _, err := auditArch("riscv64"); err == nil || err.Error() != "no seccomp filter for riscv64" {
		t.Errorf("riscv64: %v", err)
	}
}
