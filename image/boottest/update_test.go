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

// cardWithBundle copies the image and drops the bundle named by the
// environment variable env on its boot partition as name; it returns the
// copy, where its boot partition starts, and QEMU's kernel and DTB.
func cardWithBundle(t *testing.T, env, name string) (img string, bootStart int64, kernel, dtb string) {
	src, bundle := os.Getenv("CLAWEDGE_IMAGE"), os.Getenv(env)
	if src == "" || bundle == "" {
		t.Skip("CLAWEDGE_IMAGE and " + env + " are not set: scripts/image-test.sh builds them and runs this")
	}
	qemuDir := os.Getenv("CLAWEDGE_QEMU_DIR")
	kernel, dtb = filepath.Join(qemuDir, "vmlinuz"), filepath.Join(qemuDir, "bcm2710-rpi-3-b.dtb")
	img, tab := copyCard(t, src, 0)
	bootStart = tab.Partitions[0].Start
	// Room for the bundle and slot B's kernel: the boot partition of this
	// image also carries the first test's model, which these do not use.
	if out, err := exec.Command("mdel", "-i", img+"@@"+strconv.FormatInt(bootStart, 10), "::models/tiny.gguf").CombinedOutput(); err != nil {
		t.Fatalf("mdel: %v: %s", err, out)
	}
	data, err := os.ReadFile(bundle)
	if err != nil {
		t.Fatal(err)
	}
	if err := disk.WriteFAT(img, bootStart, name, data); err != nil {
		t.Fatal(err)
	}
	return img, bootStart, kernel, dtb
}

// TestUpdateInQEMU: image A (v0.0.1) finds a signed bundle of v0.0.2 dropped
// on its boot partition, installs it into slot B and reboots with
// '0 tryboot'; the harness, playing the firmware, boots slot B once; B comes
// up healthy and commits; a power cut after that boots B again.
func TestUpdateInQEMU(t *testing.T) {
	img, bootStart, kernel, dtb := cardWithBundle(t, "CLAWEDGE_UPDATE_BUNDLE", "clawedge-v0.0.2.update")
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

// TestRollbackInQEMU: v0.0.3's clawedge exits at start. Installed and tried
// like v0.0.2, its slot never says ready; init reboots it when its time is
// up (clawedge.health=20s, which the harness adds to the command line), the
// firmware boots config.txt's slot A, and A says the update failed.
func TestRollbackInQEMU(t *testing.T) {
	img, bootStart, kernel, dtb := cardWithBundle(t, "CLAWEDGE_BROKEN_BUNDLE", "clawedge-v0.0.3.update")
	cmdline, _ := firmware(t, img, bootStart, false)
	start := time.Now()
	m := boot(t, 21, img, kernel, dtb, cmdline)
	m.con.expect(`slot b now holds v0\.0\.3 \(verified and read back\)`, 270*time.Second)
	m.con.expect(`reboot: Restarting system with command '0 tryboot'`, 60*time.Second)
	m.cmd.Wait()

	cmdline, slot := firmware(t, img, bootStart, true)
	if slot != "b" {
		t.Fatalf("the try boot runs slot %s", slot)
	}
	m = boot(t, 22, img, kernel, dtb, cmdline+" clawedge.health=20s")
	m.con.expect(`trying update v0\.0\.3 on slot b`, 150*time.Second)
	m.con.expect(`exiting at start`, 60*time.Second)
	m.con.expect(`not ready within 20s of its boot: rebooting into the previous one`, 90*time.Second)
	m.con.expect(`reboot: Restarting system`, 60*time.Second)
	m.cmd.Wait()
	t.Logf("slot B given up %.1fs after the first boot started", time.Since(start).Seconds())

	cmdline, slot = firmware(t, img, bootStart, false) // a plain reboot: no tryboot flag
	if slot != "a" {
		t.Fatalf("after the failed try the firmware would boot slot %s", slot)
	}
	m = boot(t, 23, img, kernel, dtb, cmdline)
	m.con.expect(`update to v0\.0\.3 failed \(slot b did not report healthy\); still running v0\.0\.1 on slot a`, 150*time.Second)
	m.con.expect(`clawedge v0\.0\.1 ready on board periph`, 60*time.Second)
	m.kill()
}
