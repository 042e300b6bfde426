package main

import (
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// A Raspberry Pi has no battery-backed clock: it boots in 1970 until the
// network gives it the time. Timestamps in the audit trail must at least not
// go backwards across a reboot, so the time is saved on /perm now and then
// and restored at boot when it is later than what the kernel has. The image's
// build time (the mtime of /etc/clawedge) is the floor.
var clockFile = filepath.Join(stateDir, ".clock")

// clockState tells the daemon whether the time is real: "unsynced" from boot
// (the saved time is the last shutdown's, not now), "synced" once NTP has set
// it. The daemon holds its time-based automations while it says unsynced
// (cmd/clawedge/automations.go reads the same path). /run is a tmpfs: every
// boot starts unsynced.
var clockState = "/run/clawedge-clock"

func setClockState(s string) {
	if err := os.WriteFile(clockState, []byte(s+"\n"), 0o644); err != nil {
		logf("clock state: %v", err)
	}
}

func restoreClock() {
	setClockState("unsynced")
	now := time.Now()
	best := now
	for _, p := range []string{clockFile, "/etc/clawedge"} {
		if fi, err := os.Stat(p); err == nil && fi.ModTime().After(best) {
			best = fi.ModTime()
		}
	}
	if best.After(now) {
		tv := syscall.NsecToTimeval(best.UnixNano())
		if err := syscall.Settimeofday(&tv); err != nil {
			logf("set clock: %v", err)
			return
		}
		logf("clock set to %s (saved time; no network time yet)", best.UTC().Format(time.RFC3339))
	}
}

func saveClock() {
	now := time.Now()
	if err := os.Chtimes(clockFile, now, now); os.IsNotExist(err) {
		if f, err := os.Create(clockFile); err == nil {
			f.Close()
		}
	}
}

func saveClockEvery(d time.Duration) {
	for {
		saveClock()
		time.Sleep(d)
	}
}
