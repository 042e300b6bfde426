package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// mountEarly mounts the kernel's file systems and the tmpfs the read-only
// root needs for what changes at run time.
func mountEarly() {
	for _, m := range []struct {
		src, dir, fstype string
		flags            uintptr
		data             string
	}{
		{"proc", "/proc", "proc", syscall.MS_NOSUID | syscall.MS_NODEV | syscall.MS_NOEXEC, ""},
		{"sysfs", "/sys", "sysfs", syscall.MS_NOSUID | syscall.MS_NODEV | syscall.MS_NOEXEC, ""},
		{"devtmpfs", "/dev", "devtmpfs", syscall.MS_NOSUID, "mode=0755"},
		{"devpts", "/dev/pts", "devpts", syscall.MS_NOSUID | syscall.MS_NOEXEC, "gid=5,mode=0620,ptmxmode=0666"},
		{"tmpfs", "/dev/shm", "tmpfs", syscall.MS_NOSUID | syscall.MS_NODEV, "mode=1777"},
		{"tmpfs", "/tmp", "tmpfs", syscall.MS_NOSUID | syscall.MS_NODEV, "mode=1777,size=32m"},
		{"tmpfs", "/run", "tmpfs", syscall.MS_NOSUID | syscall.MS_NODEV, "mode=0755,size=16m"},
	} {
		os.MkdirAll(m.dir, 0o755) // fails on the read-only root for dirs it lacks: then mount says so
		if err := syscall.Mount(m.src, m.dir, m.fstype, m.flags, m.data); err != nil && !errors.Is(err, syscall.EBUSY) {
			logf("mount %s on %s: %v", m.fstype, m.dir, err)
		}
	}
}

// quietConsole keeps kernel messages below warnings off the console once
// the system is up: the same UART carries clawedge's console, and a driver's
// info line in the middle of a reply confuses people and scripts.
func quietConsole() {
	os.WriteFile("/proc/sys/kernel/printk", []byte("4"), 0)
}

// permPartition is /perm's partition number: after boot (1) and the root
// slots A (2) and B (3), the last, so that it can grow to fill the card.
const permPartition = 4

// mountDisks checks the boot partition and mounts it read-only at /boot, and /perm
// read-write. Both are found beside the root partition on the same disk
// (partitions 1 and 4; 2 and 3 are the root slots A and B), whatever the
// disk is called (mmcblk0 on an SD card, sda on USB boot).
func mountDisks() {
	disk, err := rootDisk()
	if err != nil {
		logf("cannot find the boot disk: %v; /boot and /perm are not mounted", err)
		permFallback()
		return
	}
	if dev, err := partition(disk, 1); err != nil {
		logf("boot partition: %v", err)
	} else {
		logf("%s", checkBoot(fsckFAT, dev)) // fsck.go: before the kernel meets a damaged FAT
		if err := syscall.Mount(dev, bootDir, "vfat", syscall.MS_RDONLY|syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, "umask=0022"); err != nil {
			logf("mount %s on %s: %v", dev, bootDir, err)
		}
	}
	dev, err := partition(disk, permPartition)
	if err == nil {
		growPermPartition(disk, permPartition)
		err = syscall.Mount(dev, permDir, "ext4", syscall.MS_NOATIME|syscall.MS_NOSUID|syscall.MS_NODEV, "")
	}
	if err != nil {
		logf("/perm: %v", err)
		permFallback()
		return
	}
	growPermFS(dev)
	if err := os.MkdirAll(stateDir, 0o750); err != nil {
		logf("%s: %v", stateDir, err)
	}
}

// permFallback puts a tmpfs on /perm so that clawedge still runs, loudly
// without persistence, rather than not at all.
func permFallback() {
	logf("WARNING: /perm is not available; the store is kept in memory and lost at power off")
	syscall.Mount("tmpfs", permDir, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, "mode=0755,size=32m")
	os.MkdirAll(stateDir, 0o750)
}

// rootDisk is the name in /sys/block of the disk that holds the root file
// system ("mmcblk0").
func rootDisk() (string, error) {
	var st syscall.Stat_t
	if err := syscall.Stat("/", &st); err != nil {
		return "", err
	}
	major, minor := unixMajor(st.Dev), unixMinor(st.Dev)
	link, err := filepath.EvalSymlinks(fmt.Sprintf("/sys/dev/block/%d:%d", major, minor))
	if err != nil {
		return "", err
	}
	return diskOf(link)
}

// diskOf returns the disk of a partition's /sys path:
// /sys/devices/.../block/mmcblk0/mmcblk0p2 -> mmcblk0.
func diskOf(sysPath string) (string, error) {
	parent := filepath.Base(filepath.Dir(sysPath))
	if parent == "block" || parent == "." || parent == "/" {
		return "", fmt.Errorf("%s is a whole disk, not a partition", sysPath)
	}
	return parent, nil
}

// partition returns the device of partition n of disk, by asking sysfs
// rather than guessing the name (mmcblk0p3 but sda3).
func partition(disk string, n int) (string, error) {
	return partitionIn("/sys/block", disk, n)
}

func partitionIn(sysBlock, disk string, n int) (string, error) {
	entries, err := os.ReadDir(filepath.Join(sysBlock, disk))
	if err != nil {
		return "", err
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(sysBlock, disk, e.Name(), "partition"))
		if err != nil {
			continue
		}
		if v, _ := strconv.Atoi(strings.TrimSpace(string(b))); v == n {
			return "/dev/" + e.Name(), nil
		}
	}
	return "", fmt.Errorf("%s has no partition %d", disk, n)
}

// The Linux dev_t encoding (glibc's gnu_dev_major/minor).
func unixMajor(dev uint64) uint32 { return uint32((dev>>8)&0xfff) | uint32((dev>>32)&^0xfff) }
func unixMinor(dev uint64) uint32 { return uint32(dev&0xff) | uint32((dev>>12)&^0xff) }
