package sandbox

import (
	"fmt"
	"unsafe"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// Why go-seccomp-bpf: it is pure Go (the core builds with CGO_ENABLED=0, which
// rules out libseccomp-golang), it carries syscall tables for arm, arm64 and
// amd64, and Elastic maintains it for Beats/Auditbeat, where it confines
// production agents. Its one gap for us — a syscall from another
// architecture's ABI (32-bit code on an arm64 kernel) takes the default
// action — is closed by a second filter, foreignArch.

// denied are refused with EPERM whatever the settings: tracing other
// processes, changing mounts and namespaces, loading kernel code, eBPF, keys.
var denied = []string{
	"ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
	"mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen", "fsmount", "fsconfig", "fspick",
	"unshare", "setns",
	"kexec_load", "kexec_file_load", "reboot", "swapon", "swapoff",
	"init_module", "finit_module", "delete_module",
	"bpf", "perf_event_open", "userfaultfd",
	"add_key", "request_key", "keyctl",
	"acct", "settimeofday", "clock_settime", "adjtimex", "clock_adjtime",
	"open_by_handle_at", "name_to_handle_at",
}

// loadSeccomp installs the filter on the calling thread (the one that execs).
func loadSeccomp(network bool) error {
	info, err := arch.GetInfo("")
	if err != nil {
		return err
	}
	var names []string
	for _, n := range denied {
		if _, ok := info.SyscallNames[n]; ok { // not every ABI has every call
			names = append(names, n)
		}
	}
	groups := []seccomp.SyscallGroup{{Action: seccomp.ActionErrno, Names: names}}
	if network {
		// Sockets, but no raw IP or packet sockets (sniffing, spoofing).
		// The type argument carries flags, and the library compares whole
		// values, so SOCK_RAW is listed with each flag combination.
		raw := []seccomp.NameWithConditions{{Name: "socket", Conditions: seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.Equal, Value: unix.AF_PACKET}}}}
		for _, flags := range []uint64{0, unix.SOCK_CLOEXEC, unix.SOCK_NONBLOCK, unix.SOCK_CLOEXEC | unix.SOCK_NONBLOCK} {
			raw = append(raw, seccomp.NameWithConditions{Name: "socket", Conditions: seccomp.ArgumentConditions{{Argument: 1, Operation: seccomp.Equal, Value: unix.SOCK_RAW | flags}}})
		}
		groups = append(groups, seccomp.SyscallGroup{Action: seccomp.ActionErrno, NamesWithCondtions: raw})
	} else {
		groups = append(groups, seccomp.SyscallGroup{Action: seccomp.ActionErrno, Names: []string{"socket"}})
	}
	f := seccomp.Filter{Policy: seccomp.Policy{DefaultAction: seccomp.ActionAllow, Syscalls: groups}}
	if err := seccomp.LoadFilter(f); err != nil {
		return err
	}
	return foreignArch(uint32(info.ID))
}

// foreignArch kills a process that makes a system call through another
// architecture's ABI, which the filter above would let through.
func foreignArch(native uint32) error {
	prog, err := bpf.Assemble([]bpf.Instruction{
		bpf.LoadAbsolute{Off: 4, Size: 4}, // seccomp_data.arch
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: native, SkipTrue: 1},
		bpf.RetConstant{Val: unix.SECCOMP_RET_KILL_PROCESS},
		bpf.RetConstant{Val: unix.SECCOMP_RET_ALLOW},
	})
	if err != nil {
		return err
	}
	filters := make([]unix.SockFilter, len(prog))
	for i, in := range prog {
		filters[i] = unix.SockFilter{Code: in.Op, Jt: in.Jt, Jf: in.Jf, K: in.K}
	}
	fprog := unix.SockFprog{Len: uint16(len(filters)), Filter: &filters[0]}
	if _, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fprog))); e != 0 {
		return fmt.Errorf("foreign-architecture filter: %v", e)
	}
	return nil
}
