package doctor

import (
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/clawedge/clawedge/localmodel/modelfiles"
)

// Clock: the audit trail, schedules and TLS all trust the clock, and a
// Raspberry Pi has no battery-backed one. A clock earlier than floor (when
// this program was installed) is wrong for certain; one the kernel says is
// not synchronized (adjtimex) may drift, which is worth a warning only.
func Clock(now, floor time.Time, synced func() (bool, error)) Check {
	c := Check{What: "clock"}
	if now.Before(floor) {
		c.Info = fmt.Sprintf("the clock says %s, before this program was installed (%s)",
			now.UTC().Format(time.RFC3339), floor.UTC().Format(time.RFC3339))
		c.Fix = "set the time: connect the network and enable NTP (timedatectl set-ntp true), or date -s"
		return c
	}
	c.OK, c.Info = true, now.UTC().Format(time.RFC3339)+", synchronized"
	ok, err := synced()
	switch {
	case err != nil:
		c.Info = now.UTC().Format(time.RFC3339) + " (synchronization unknown: " + err.Error() + ")"
	case !ok:
		c.Warn = true
		c.Info = now.UTC().Format(time.RFC3339) + ", not synchronized with network time"
		c.Fix = "enable NTP (timedatectl set-ntp true) and let the board reach the network"
	}
	return c
}

// KernelSynced asks the kernel whether its clock is synchronized (adjtimex
// returns TIME_ERROR when it is not).
func KernelSynced() (bool, error) {
	var tx syscall.Timex
	state, err := syscall.Adjtimex(&tx)
	if err != nil {
		return false, err
	}
	const timeError = 5 // TIME_ERROR in <sys/timex.h>
	return state != timeError, nil
}

// InstalledAt is the executable's modification time: the clock cannot be
// earlier than when this program was put on the machine.
func InstalledAt() time.Time {
	exe, err := os.Executable()
	if err != nil {
		return time.Time{}
	}
	fi, err := os.Stat(exe)
	if err != nil {
		return time.Time{}
	}
	return fi.ModTime()
}

// Disk space below which doctor fails, and the share below which it warns:
// the store needs room to commit, and a full disk stops the audit trail.
const (
	minFreeBytes  = 100 << 20
	warnFreeShare = 0.05
	diskFix       = "free some space (old models: clawedge model rm; logs), or move data_dir to a larger disk"
)

func Disk(dir string, statfs func(string, *syscall.Statfs_t) error) Check {
	c := Check{What: "disk space"}
	var st syscall.Statfs_t
	if err := statfs(dir, &st); err != nil {
		c.Info, c.Fix = err.Error(), "set data_dir to a folder that exists"
		return c
	}
	free := st.Bavail * uint64(st.Bsize)
	total := st.Blocks * uint64(st.Bsize)
	c.Info = fmt.Sprintf("%s free of %s at %s", modelfiles.FormatBytes(int64(free)), modelfiles.FormatBytes(int64(total)), dir)
	switch {
	case free < minFreeBytes:
		c.Info += fmt.Sprintf(": below %s, the store cannot be trusted to commit", modelfiles.FormatBytes(minFreeBytes))
		c.Fix = diskFix
	case total > 0 && float64(free) < warnFreeShare*float64(total):
		c.OK, c.Warn, c.Fix = true, true, diskFix
	default:
		c.OK = true
	}
	return c
}
