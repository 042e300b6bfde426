package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// clawedge and the local-model runner run as this user, not as root: a
// flaw in them, or a tool a model was talked into calling, gets only what
// the user can reach. image/mkimage writes the matching /etc/passwd and
// /etc/group lines. Init keeps root for what needs it: mounts, the network
// setup, the clock, reboot.
const (
	appUser = "clawedge"
	appUID  = 1000
	appGID  = 1000
)

// appDevices are the device nodes clawedge may open, given to its group:
// the GPIO character devices, the UARTs (the Pi's own and USB adapters) and
// the I2C buses. Nothing else in /dev is theirs (no /dev/mem, no disks).
var appDevices = []string{"gpiochip*", "ttyS*", "ttyAMA*", "ttyUSB*", "ttyACM*", "i2c-*"}

// grantDevices gives the group appGID read and write access to the
// devices in dev that match appDevices, and returns how many.
func grantDevices(dev string) int {
	n := 0
	for _, pattern := range appDevices {
		paths, _ := filepath.Glob(filepath.Join(dev, pattern))
		for _, p := range paths {
			if os.Chown(p, 0, appGID) == nil && os.Chmod(p, 0o660) == nil {
				n++
			}
		}
	}
	return n
}

// ownState gives the user its state directory on /perm: the store, the
// config init saved from the boot partition, pulled models. Files an older
// image left owned by root are handed over too.
func ownState(dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, appUID, appGID)
	})
}

// appCredential is how the supervisor starts clawedge: as the user, with
// its group only.
func appCredential() *syscall.Credential {
	return &syscall.Credential{Uid: appUID, Gid: appGID, Groups: []uint32{}}
}
