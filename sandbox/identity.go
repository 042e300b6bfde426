package sandbox

import (
	"fmt"
	"math/rand/v2"
	"sync"
)

// Under a root daemon every run gets a uid and gid of its own, taken from a
// range clawedge reserves for it and given back when the run's last process
// is gone. A uid shared with the rest of the machine (nobody, as before)
// shares its RLIMIT_NPROC count, which the kernel keeps per uid for the whole
// machine: twenty unrelated processes of nobody made every run with nproc 16
// fail to fork. It also shares its files and its signals: one run could kill
// another's processes, or a nobody daemon's. A run's own uid owns nothing
// else on the machine, so its limits count its own processes only.
//
// The range, 0x7C500000 to 0x7C50FFFF, lies where neither Debian (users below
// 60000, nobody at 65534) nor systemd (dynamic users 61184-65519, containers
// 524288-1879048191, the foreign range from 2147352576) hands out uids. No
// passwd entry names them: a run's files show the number.
const (
	FirstRunUID = 0x7C500000
	RunUIDs     = 1 << 16
)

// runUIDs are the uids of the runs of this process under way. Two processes
// (two daemons, or test binaries run side by side) draw at random from the
// 65,536, so that they meet on one only by chance; meeting, two runs would
// count their processes together, which is what every run did before.
var runUIDs = uidPool{used: map[int]bool{}}

type uidPool struct {
	mu   sync.Mutex
	used map[int]bool
}

// take returns a uid of the range that no run of this process holds.
func (p *uidPool) take() (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.used) >= RunUIDs/2 {
		return 0, fmt.Errorf("%d sandboxed runs at once: no uid of their own left for another", len(p.used))
	}
	for {
		uid := FirstRunUID + rand.IntN(RunUIDs)
		if !p.used[uid] {
			p.used[uid] = true
			return uid, nil
		}
	}
}

// give returns uid to the pool once the run's processes are all gone.
func (p *uidPool) give(uid int) {
	p.mu.Lock()
	delete(p.used, uid)
	p.mu.Unlock()
}

// settleUID settles who a spec runs as. A spec that names a uid keeps it
// (-1: the caller's own). One that names none (0, 0) runs as the caller when
// the caller is not root (it could not change uid, and asking would refuse
// every run), and as a uid of its own from the range when it is: release
// gives that back and is to be called once the run's processes are gone.
func settleUID(s *Spec, euid int) (release func(), err error) {
	none := func() {}
	if s.UID != 0 || s.GID != 0 {
		return none, nil
	}
	if euid != 0 {
		s.UID, s.GID = -1, -1
		return none, nil
	}
	uid, err := runUIDs.take()
	if err != nil {
		return none, err
	}
	s.UID, s.GID = uid, uid
	return func() { runUIDs.give(uid) }, nil
}
