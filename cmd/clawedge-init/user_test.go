package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestGrantDevices: the GPIO chips, UARTs and I2C buses go to clawedge's
// group; memory and disks stay root's alone.
func TestGrantDevices(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chown needs root")
	}
	dev := t.TempDir()
	for _, name := range []string{"gpiochip0", "ttyS0", "ttyAMA0", "ttyUSB0", "i2c-1", "mem", "gpiomem", "mmcblk0", "mmcblk0p3", "tty1"} {
		if err := os.WriteFile(filepath.Join(dev, name), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if n := grantDevices(dev); n != 5 {
		t.Errorf("granted %d devices, want 5", n)
	}
	for name, want := range map[string]bool{"gpiochip0": true, "ttyS0": true, "ttyAMA0": true, "ttyUSB0": true, "i2c-1": true,
		"mem": false, "gpiomem": false, "mmcblk0": false, "mmcblk0p3": false, "tty1": false} {
		fi, err := os.Stat(filepath.Join(dev, name))
		if err != nil {
			t.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		got := st.Gid == appGID && fi.Mode().Perm() == 0o660
		if got != want {
			t.Errorf("%s: gid %d mode %v; want granted = %v", name, st.Gid, fi.Mode().Perm(), want)
		}
	}
}

func TestOwnState(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chown needs root")
	}
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "data"), 0o750)
	os.WriteFile(filepath.Join(dir, "data", "clawedge.db"), nil, 0o600)
	os.WriteFile(filepath.Join(dir, "config.yaml"), nil, 0o600)
	if err := ownState(dir); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"", "data", "data/clawedge.db", "config.yaml"} {
		fi, _ := os.Stat(filepath.Join(dir, p))
		if st := fi.Sys().(*syscall.Stat_t); st.Uid != appUID || st.Gid != appGID {
			t.Errorf("%s owned by %d:%d", p, st.Uid, st.Gid)
		}
	}
}
