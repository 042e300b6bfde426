package boottest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clawedge/clawedge/image/disk"
	"github.com/clawedge/clawedge/update"
)

// firmware plays the Pi firmware's choice of slot: tryboot.txt when the
// last boot ended in `reboot '0 tryboot'` (and the file is there), else
// config.txt; its os_prefix names the folder whose cmdline.txt the kernel
// gets. (The kernel itself is the same in both slots here: QEMU is given
// it directly.)
func firmware(t *testing.T, img string, boot int64, tryboot bool) (cmdline, slot string) {
	t.Helper()
	name := "config.txt"
	if tryboot {
		if _, err := disk.ReadFAT(img, boot, "tryboot.txt"); err == nil {
			name = "tryboot.txt"
		}
	}
	cfg, err := disk.ReadFAT(img, boot, name)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := disk.ReadFAT(img, boot, update.OSPrefix(cfg)+"cmdline.txt")
	if err != nil {
		t.Fatal(err)
	}
	slot, ok := update.RunningSlot(string(cl))
	if !ok {
		t.Fatalf("%s names no slot: %q", name, cl)
	}
	return strings.TrimSpace(string(cl)), slot
}

// TestUpdateInQEMU: image A (v0.0.1) finds a signed bundle of v0.0.2 dropped
// on its boot partition, installs it into slot B and reboots with
// '0 tryboot'; the harness, playing the firmware, boots slot B once; B comes
// up healthy and commits; a power cut after that boots B again.
func TestUpdateInQEMU(t *testing.T) {
	src, bundle := os.Getenv("CLAWEDGE_IMAGE"), os.Getenv("CLAWEDGE_UPDATE_BUNDLE")
	if src == "" || bundle == "" {
		t.Skip("CLAWEDGE_IMAGE and CLAWEDGE_UPDATE_BUNDLE are not set: scripts/image-test.sh builds them and runs this")
	}
	qemuDir := os.Getenv("CLAWEDGE_QEMU_DIR")
	kernel, dtb := filepath.Join(qemuDir, "vmlinuz"), filepath.Join(qemuDir, "bcm2710-rpi-3-b.dtb")
	img := filepath.Join(t.TempDir(), "sd.img")
	if err := exec.Command("cp", "--sparse=always", src, img).Run(); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(img)
	if err != nil {
		t.Fatal(err)
	}
	tab, err := disk.ReadTable(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	bootStart := tab.Partitions[0].Start
	// Room for the bundle and slot B's kernel: the boot partition of this
	// image also carries the other test's model, which this one does not use.
	if out, err := exec.Command("mdel", "-i", img+"@@"+strconv.FormatInt(bootStart, 10), "::models/tiny.gguf").CombinedOutput(); err != nil {
		t.Fatalf("mdel: %v: %s", err, out)
	}
	data, err := os.ReadFile(bundle)
	if err != nil {
		t.Fatal(err)
	}
	if err := disk.WriteFAT(img, bootStart, "clawedge-v0.0.2.update", data); err != nil {
		t.Fatal(err)
	}

	cmdline, slot := firmware(t, img, bootStart, false)
	if slot != "a" {
		t.Fatalf("a new card boots slot %s", slot)
	}
	start := time.Now()
	m := boot(t, 11, img, kernel, dtb, cmdline)
	m.con.expect(`installing the update /boot/clawedge-v0\.0\.2\.update`, 150*time.Second)
	m.con.expect(`slot b now holds v0\.0\.2 \(verified and read back\)`, 120*time.Second)
	m.con.expect(`reboot: Restarting system with command '0 tryboot'`, 60*time.Second)
	m.cmd.Wait() // -no-reboot: the reboot ends QEMU
	t.Logf("update installed and the try boot asked for in %.1fs", time.Since(start).Seconds())

	cmdline, slot = firmware(t, img, bootStart, true)
	if slot != "b" {
		t.Fatalf("the try boot runs slot %s", slot)
	}
	m = boot(t, 12, img, kernel, dtb, cmdline)
	m.con.expect(`trying update v0\.0\.2 on slot b`, 150*time.Second)
	m.con.expect(`clawedge v0\.0\.2 ready on board periph`, 60*time.Second)
	m.con.expect(`update committed: slot B is now the default`, 60*time.Second)
	t.Logf("slot B committed %.1fs after QEMU started", time.Since(start).Seconds())
	m.kill() // a power cut after the commit

	cmdline, slot = firmware(t, img, bootStart, false)
	if slot != "b" {
		t.Fatalf("after the commit the firmware boots slot %s", slot)
	}
	if _, err := disk.ReadFAT(img, bootStart, "tryboot.txt"); err == nil {
		t.Error("tryboot.txt left after the commit")
	}
	files, _ := disk.ListFAT(img, bootStart)
	if !strings.Contains(strings.Join(files, " "), "clawedge-v0.0.2.update.installed") {
		t.Errorf("the dropped bundle was not marked installed: %v", files)
	}
	m = boot(t, 13, img, kernel, dtb, cmdline)
	m.con.expect(`clawedge v0\.0\.2 ready on board periph`, 150*time.Second)
	m.kill()
}
