package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawedge/clawedge/image/disk"
)

// TestBuild makes a whole image from stand-in firmware, kernel and binaries
// and checks what the Pi's firmware and the kernel will look for.
func TestBuild(t *testing.T) {
	for _, tool := range []string{"mkfs.vfat", "mcopy", "mmd", "mdir", "mtype", "mksquashfs", "mkfs.ext4"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed (apt-get install dosfstools mtools squashfs-tools e2fsprogs)", tool)
		}
	}
	dir := t.TempDir()
	write := func(p, body string) {
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	fw, kernel := filepath.Join(dir, "firmware"), filepath.Join(dir, "kernel")
	for _, f := range firmwareFiles {
		write(filepath.Join(fw, f), f)
	}
	write(filepath.Join(fw, "start_x.elf"), "not wanted")
	for _, f := range []string{"vmlinuz", "bcm2710-rpi-3-b.dtb", "bcm2711-rpi-4-b.dtb", "overlays/uart1.dtbo", "LICENSE.linux"} {
		write(filepath.Join(kernel, f), f)
	}
	write(filepath.Join(dir, "clawedge"), "#!/bin/true\n")
	write(filepath.Join(dir, "init"), "#!/bin/true\n")
	// -add lays a tree over the root as it is, links kept (the Wi-Fi firmware's).
	write(filepath.Join(dir, "add/lib/firmware/cypress/cyfmac43455-sdio.bin"), "fw")
	os.MkdirAll(filepath.Join(dir, "add/lib/firmware/brcm"), 0o755)
	os.Symlink("../cypress/cyfmac43455-sdio.bin", filepath.Join(dir, "add/lib/firmware/brcm/brcmfmac43455-sdio.bin"))
	write(filepath.Join(dir, "update.pub"), "ed25519:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=\n")
	out := filepath.Join(dir, "sd.img")
	o := options{firmware: fw, kernel: kernel, clawedge: filepath.Join(dir, "clawedge"), init: filepath.Join(dir, "init"),
		config: "../config.yaml", add: filepath.Join(dir, "add"), certs: filepath.Join(dir, "none"), out: out, version: "v9", pubkey: filepath.Join(dir, "update.pub"),
		bootMiB: 40, rootMiB: 8, minPermMiB: 8}
	if err := build(o); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(out)
	if fi.Size() != 64*disk.MiB {
		t.Errorf("image %d bytes, want 64 MiB", fi.Size())
	}
	f, _ := os.Open(out)
	tab, err := disk.ReadTable(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if tab.DiskID != DiskID || len(tab.Partitions) != 4 || !tab.Partitions[0].Bootable || tab.Partitions[0].Type != disk.TypeFAT32LBA {
		t.Fatalf("table %+v", tab)
	}
	files, err := disk.ListFAT(out, tab.Partitions[0].Start)
	if err != nil {
		t.Fatal(err)
	}
	have := strings.Join(files, " ")
	// Slot A's files in its folder (os_prefix), the firmware's at the top.
	for _, want := range []string{"bootcode.bin", "start.elf", "fixup.dat", "start4.elf", "fixup4.dat", "slot-a/vmlinuz",
		"slot-a/bcm2710-rpi-3-b.dtb", "slot-a/bcm2711-rpi-4-b.dtb", "slot-a/overlays/uart1.dtbo", "config.txt", "slot-a/cmdline.txt", "clawedge.yaml.example", "workspace/README.txt"} {
		if !strings.Contains(" "+have+" ", " "+want+" ") {
			t.Errorf("boot partition lacks %s (has %s)", want, have)
		}
	}
	if strings.Contains(have, "start_x.elf") {
		t.Error("boot partition has firmware variants it does not need")
	}
	if k, _ := disk.ReadFAT(out, tab.Partitions[0].Start, "slot-a/vmlinuz"); len(k) < 2 || k[0] != 0x1f || k[1] != 0x8b {
		t.Errorf("slot A's kernel is not gzip'd: % x", k[:min(len(k), 4)])
	}
	cl, _ := disk.ReadFAT(out, tab.Partitions[0].Start, "slot-a/cmdline.txt")
	for _, want := range []string{"root=PARTUUID=c1a3ed9e-02", "rootfstype=squashfs", "init=/sbin/init", "console=ttyS0,115200", "clawedge.slot=a"} {
		if !strings.Contains(string(cl), want) {
			t.Errorf("cmdline.txt lacks %q: %s", want, cl)
		}
	}
	if strings.Count(strings.TrimRight(string(cl), "\n"), "\n") != 0 {
		t.Errorf("cmdline.txt must be one line: %q", cl)
	}
	ct, _ := disk.ReadFAT(out, tab.Partitions[0].Start, "config.txt")
	for _, want := range []string{"enable_uart=1", "kernel=vmlinuz", "arm_64bit=1", "\nos_prefix=slot-a/\n"} {
		if !strings.Contains(string(ct), want) {
			t.Errorf("config.txt lacks %q", want)
		}
	}
	// The root partition starts with a squashfs superblock ("hsqs").
	f, _ = os.Open(out)
	defer f.Close()
	magic := make([]byte, 4)
	f.ReadAt(magic, tab.Partitions[1].Start)
	if string(magic) != "hsqs" {
		t.Errorf("root partition starts with %q, want a squashfs", magic)
	}
	if us, err := exec.LookPath("unsquashfs"); err == nil {
		sq := filepath.Join(dir, "root.sq")
		b := make([]byte, tab.Partitions[1].Size)
		f.ReadAt(b, tab.Partitions[1].Start)
		os.WriteFile(sq, b, 0o644)
		ls, err := exec.Command(us, "-l", "-n", sq).CombinedOutput()
		if err != nil {
			t.Fatalf("unsquashfs: %v\n%s", err, ls)
		}
		for _, want := range []string{"/sbin/init", "/usr/bin/clawedge", "/etc/clawedge/config.yaml", "/etc/clawedge/update.pub", "/etc/clawedge/board", "/etc/resolv.conf", "/perm", "/boot", "/proc",
			"/lib/firmware/cypress/cyfmac43455-sdio.bin", "/lib/firmware/brcm/brcmfmac43455-sdio.bin"} {
			if !strings.Contains(string(ls), "squashfs-root"+want+"\n") {
				t.Errorf("root lacks %s", want)
			}
		}
	}
}
