package update

import (
	"fmt"
	"time"
)

// HealthTimeout bounds how long a tried slot may take to report healthy
// (config loaded, store open, board open, channels up) before whoever
// supervises it reboots, which brings back the old slot.
const HealthTimeout = 3 * time.Minute

// InitSocket is clawedge-init's notify socket on the SD image: the daemon
// (unprivileged there) says READY=1 on it, which commits a slot on trial,
// and hands it "update URL" requests as RequestKey lines, which init (root)
// installs. Only a signed, newer bundle for the board is installed, whoever
// writes the line.
const InitSocket = "/run/clawedge-init.notify"

// The SD image's layout (image/mkimage): its boot partition's mount point,
// its two root slots, and where a boot is named.
const (
	ImageBoot   = "/boot"
	ImageBootID = "/proc/sys/kernel/random/boot_id"
)

// ImageSlots are the SD image's root slots (partitions 2 and 3).
var ImageSlots = map[string]Slot{
	"a": {Device: "/dev/mmcblk0p2", Root: "PARTUUID=c1a3ed9e-02"},
	"b": {Device: "/dev/mmcblk0p3", Root: "PARTUUID=c1a3ed9e-03"},
}

// RequestKey starts a line on InitSocket asking for an update from a URL.
const RequestKey = "CLAWEDGE_UPDATE="

// PairingKey starts a line on InitSocket with the dashboard's first pairing
// code and its expiry ("CODE RFC3339"), which init writes to the boot
// partition as PairingFile; with nothing after it, init removes the file.
const PairingKey = "CLAWEDGE_PAIRING="

// SetupConfigEnv names, in the daemon's environment on the image, the
// config file the dashboard's setup page writes (on /perm: the image's
// default config is on the read-only root).
const SetupConfigEnv = "CLAWEDGE_SETUP_CONFIG"

// PairingFile is the first pairing code's file on the boot partition.
const PairingFile = "clawedge-pairing.txt"

// Report is what Settle found about the last attempt.
type Report struct {
	Attempt *Attempt // nil: no attempt in progress or just ended
	// Failed is set once, by the boot that found the attempt failed: that
	// boot tells the console and the owners.
	Failed bool
	// Trying is set while the running slot is on trial: it must call
	// Commit once healthy, within HealthTimeout.
	Trying bool
}

// Message is a one-line account for the console and the owners.
func (r Report) Message() string {
	a := r.Attempt
	switch {
	case a == nil:
		return ""
	case r.Failed:
		return fmt.Sprintf("update to %s failed (%s); still running %s on slot %s", a.Version, a.Reason, a.Old, a.From)
	case r.Trying:
		return fmt.Sprintf("trying update %s on slot %s: it is kept once healthy", a.Version, a.Slot)
	}
	return ""
}

// Settle runs early at every boot: it ends an attempt the boot shows has
// failed (the old slot is running again), and puts a tried slot on trial.
// In fallback mode it is what switches config.txt back to the old slot.
func (u *Updater) Settle() (Report, error) {
	st, err := LoadState(u.Boot)
	if err != nil || st.Attempt == nil {
		return Report{}, err
	}
	a := st.Attempt
	if a.BootID != "" && a.BootID == u.BootID {
		return Report{}, nil // not rebooted since it was written
	}
	fail := func(reason string) (Report, error) {
		a.Phase, a.Ended, a.Reason = PhaseFailed, u.now(), reason
		if err := u.disarm(); err != nil {
			return Report{}, err
		}
		return Report{Attempt: a, Failed: true}, saveState(u.Boot, st)
	}
	switch a.Phase {
	case PhaseWriting:
		return fail("interrupted while writing slot " + a.Slot)
	case PhaseArmed:
		if u.Current != a.Slot {
			return fail("slot " + a.Slot + " did not start")
		}
		a.Phase = PhaseTrying
		if a.Mode == ModeFallback {
			// The next boot is the old slot again, unless this one commits.
			if err := u.setDefault(a.From); err != nil {
				return Report{}, err
			}
		}
		return Report{Attempt: a, Trying: true}, saveState(u.Boot, st)
	case PhaseTrying:
		if u.Current != a.Slot {
			return fail("slot " + a.Slot + " did not report healthy")
		}
		return Report{Attempt: a, Trying: true}, nil
	}
	return Report{}, nil
}

// Commit keeps the running slot: called once clawedge is healthy. It does
// nothing unless the running slot is on trial. It reports whether it
// committed.
func (u *Updater) Commit() (bool, error) {
	st, err := LoadState(u.Boot)
	if err != nil {
		return false, err
	}
	a := st.Attempt
	if a == nil || a.Phase != PhaseTrying || a.Slot != u.Current {
		return false, nil
	}
	if err := u.setDefault(u.Current); err != nil {
		return false, err
	}
	if err := u.Boot.Remove(TrybootTxt); err != nil {
		return false, err
	}
	a.Phase, a.Ended = PhaseCommitted, u.now()
	return true, saveState(u.Boot, st)
}
