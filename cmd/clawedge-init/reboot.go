package main

import (
	"syscall"
	"time"
)

// shutdown ends the system after clawedge has stopped: the clock is saved,
// every other process is asked to stop and then killed, /perm is synced and
// remounted read-only so that the next boot finds a clean journal, and the
// kernel reboots or powers off.
func shutdown(cmd int) {
	stopAll()
	halt(cmd)
}

// stopAll is shutdown but the last step: a reboot with an argument for the
// firmware (an update's try boot) follows it.
func stopAll() {
	saveClock()
	syscall.Kill(-1, syscall.SIGTERM)
	time.Sleep(200 * time.Millisecond)
	syscall.Kill(-1, syscall.SIGKILL)
	syscall.Sync()
	for _, dir := range []string{permDir, bootDir} {
		if err := syscall.Mount("", dir, "", syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
			logf("remount %s read-only: %v", dir, err)
		}
	}
	syscall.Sync()
}

func halt(cmd int) {
	if err := syscall.Reboot(cmd); err != nil {
		logf("reboot(%#x): %v", cmd, err)
	}
	select {} // PID 1 never returns
}
