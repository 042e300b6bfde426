package boottest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clawedge/clawedge/channels/telegram/telegramtest"
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

// card copies the image for an update test; it returns the copy, where
// its boot partition starts, and QEMU's kernel and DTB.
func card(t *testing.T, env string) (img string, bootStart int64, kernel, dtb string) {
	src, bundle := os.Getenv("CLAWEDGE_IMAGE"), os.Getenv(env)
	if src == "" || bundle == "" {
		t.Skip("CLAWEDGE_IMAGE and " + env + " are not set: scripts/image-test.sh builds them and runs this")
	}
	qemuDir := os.Getenv("CLAWEDGE_QEMU_DIR")
	kernel, dtb = filepath.Join(qemuDir, "vmlinuz"), filepath.Join(qemuDir, "bcm2710-rpi-3-b.dtb")
	img, tab := copyCard(t, src, 0)
	bootStart = tab.Partitions[0].Start
	// Room for slot B's kernel (and a dropped bundle): the boot partition
	// of this image also carries the first test's model, which these do
	// not use.
	if out, err := exec.Command("mdel", "-i", img+"@@"+strconv.FormatInt(bootStart, 10), "::models/tiny.gguf").CombinedOutput(); err != nil {
		t.Fatalf("mdel: %v: %s", err, out)
	}
	return img, bootStart, kernel, dtb
}

// cardWithBundle is card with the bundle named by the environment
// variable env dropped on its boot partition as name.
func cardWithBundle(t *testing.T, env, name string) (img string, bootStart int64, kernel, dtb string) {
	img, bootStart, kernel, dtb = card(t, env)
	data, err := os.ReadFile(os.Getenv(env))
	if err != nil {
		t.Fatal(err)
	}
	if err := disk.WriteFAT(img, bootStart, name, data); err != nil {
		t.Fatal(err)
	}
	return img, bootStart, kernel, dtb
}

// TestUpdateInQEMU: image A (v0.0.1) long-polls a fake Bot API on the host
// (over usb-net; QEMU's user network shows the host as 10.0.2.2) and
// answers its owner; the owner sends "update URL" naming a signed bundle of
// v0.0.2 that an HTTP server on the host serves; init installs it into
// slot B and reboots with '0 tryboot'; the harness, playing the firmware,
// boots slot B once; B comes up healthy (its Telegram channel up too) and
// commits; a power cut after that boots B again. (A dropped bundle is
// installed in TestRollbackInQEMU.)
func TestUpdateInQEMU(t *testing.T) {
	img, bootStart, kernel, dtb := card(t, "CLAWEDGE_UPDATE_BUNDLE")
	bundle := os.Getenv("CLAWEDGE_UPDATE_BUNDLE")
	fi, err := os.Stat(bundle)
	if err != nil {
		t.Fatal(err)
	}
	var gets atomic.Int32
	files := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/clawedge-v0.0.2.update" {
			http.NotFound(w, r)
			return
		}
		gets.Add(1)
		http.ServeFile(w, r, bundle)
	}))
	t.Cleanup(files.Close)
	tg := telegramtest.New(t)
	owner := telegramtest.User{ID: 4242, FirstName: "Ada", Username: "ada"}
	def, err := os.ReadFile("../config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf("%s\ntelegram: {token: %q, api_url: %q, allow_users: [%d]}\npolicy: {owners: [\"telegram:%d\"]}\n",
		def, tg.Token, guestURL(t, tg.URL), owner.ID, owner.ID)
	if err := disk.WriteFAT(img, bootStart, "clawedge.yaml", []byte(cfg)); err != nil {
		t.Fatal(err)
	}
	cmdline, slot := firmware(t, img, bootStart, false)
	if slot != "a" {
		t.Fatalf("a new card boots slot %s", slot)
	}
	start := time.Now()
	m := boot(t, 11, img, kernel, dtb, cmdline)
	m.con.expect(`clawedge v0\.0\.1 ready on board periph`, 150*time.Second)
	tg.Text(owner, nil, "/start")
	tg.Text(owner, nil, `@gpio/read{pin="led"}`)
	tg.Wait(t, 60*time.Second, "the answers to /start and @gpio/read", func() bool { return len(tg.Sent(owner.ID)) >= 2 })
	if got := tg.Sent(owner.ID); !strings.HasPrefix(got[0], "Hello Ada") || !strings.Contains(got[1], "led = 0 (low)") {
		t.Fatalf("Telegram answers %q", got)
	}
	url := guestURL(t, files.URL) + "/clawedge-v0.0.2.update"
	applied := time.Now()
	tg.Text(owner, nil, "update "+url)
	m.con.expect(`installing the update `+regexp.QuoteMeta(url), 60*time.Second)
	m.con.expect(`slot b now holds v0\.0\.2 \(verified and read back\)`, 120*time.Second)
	applyTime := time.Since(applied)
	m.con.expect(`reboot: Restarting system with command '0 tryboot'`, 60*time.Second)
	m.cmd.Wait() // -no-reboot: the reboot ends QEMU
	// The answer is sys/update's, in a code block like every call's.
	if got := tg.Sent(owner.ID); len(got) < 3 || !strings.Contains(got[2], "Update requested") {
		t.Errorf("the reply to update URL: %q", got)
	}
	if n := gets.Load(); n != 2 {
		t.Errorf("the bundle was fetched %d times, want 2 (verify, then write)", n)
	}
	t.Logf("update installed and the try boot asked for in %.1fs", time.Since(start).Seconds())

	cmdline, slot = firmware(t, img, bootStart, true)
	if slot != "b" {
		t.Fatalf("the try boot runs slot %s", slot)
	}
	rebooted := time.Now()
	m = boot(t, 12, img, kernel, dtb, cmdline)
	m.con.expect(`trying update v0\.0\.2 on slot b`, 150*time.Second)
	m.con.expect(`clawedge v0\.0\.2 ready on board periph`, 60*time.Second)
	m.con.expect(`update committed: slot B is now the default`, 60*time.Second)
	fmt.Fprintf(os.Stderr, "UPDATE bundle %d bytes, applied in %.1f s (request to read back), reboot to commit %.1f s\n",
		fi.Size(), applyTime.Seconds(), time.Since(rebooted).Seconds())
	m.kill() // a power cut after the commit

	cmdline, slot = firmware(t, img, bootStart, false)
	if slot != "b" {
		t.Fatalf("after the commit the firmware boots slot %s", slot)
	}
	if _, err := disk.ReadFAT(img, bootStart, "tryboot.txt"); err == nil {
		t.Error("tryboot.txt left after the commit")
	}
	m = boot(t, 13, img, kernel, dtb, cmdline)
	m.con.expect(`clawedge v0\.0\.2 ready on board periph`, 150*time.Second)
	m.kill()
}

// guestURL is a URL of a server on the host's 127.0.0.1 as the guest
// reaches it: QEMU's user network forwards 10.0.2.2 there.
func guestURL(t *testing.T, hostURL string) string {
	t.Helper()
	u, err := neturl.Parse(hostURL)
	if err != nil || u.Hostname() != "127.0.0.1" {
		t.Fatalf("%q is not on 127.0.0.1", hostURL)
	}
	u.Host = "10.0.2.2:" + u.Port()
	return u.String()
}

// TestRollbackInQEMU: v0.0.3's clawedge exits at start. Its bundle, dropped
// on the boot partition, is installed at boot (and renamed .installed) and
// tried through tryboot like v0.0.2; its slot never says ready; init reboots it when its time is
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

	files, _ := disk.ListFAT(img, bootStart)
	if !strings.Contains(strings.Join(files, " "), "clawedge-v0.0.3.update.installed") {
		t.Errorf("the dropped bundle was not marked installed: %v", files)
	}

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

// TestPowerCutWhileWritingInQEMU: the power is cut while slot B is being
// written (the dropped v0.0.3 bundle); the firmware, with or without the
// try boot flag, boots slot A; init checks the boot partition before
// mounting it and repairs what the cut left (the dirty bit at least: /boot
// was mounted read-write), A says the update was interrupted, and installs
// the bundle, still there, again: the FAT is sound, so the kernel reports
// no error removing the half-written slot and the install gets to its try
// boot.
func TestPowerCutWhileWritingInQEMU(t *testing.T) {
	img, bootStart, kernel, dtb := cardWithBundle(t, "CLAWEDGE_BROKEN_BUNDLE", "clawedge-v0.0.3.update")
	cmdline, _ := firmware(t, img, bootStart, false)
	m := boot(t, 24, img, kernel, dtb, cmdline)
	m.con.expect(`boot partition: checked, clean`, 150*time.Second) // so the repair below is the cut's
	m.con.expect(`installing the update /boot/clawedge-v0\.0\.3\.update`, 150*time.Second)
	m.con.expect(`writing +[1-9]\d*%`, 120*time.Second)
	m.kill()
	for _, tryboot := range []bool{false, true} {
		if _, slot := firmware(t, img, bootStart, tryboot); slot != "a" {
			t.Fatalf("after a power cut while writing B the firmware (tryboot %v) boots slot %s", tryboot, slot)
		}
	}
	m = boot(t, 25, img, kernel, dtb, cmdline)
	m.con.expect(`boot partition: checked, repaired [1-9]\d* problems?`, 150*time.Second)
	m.con.expect(`update to v0\.0\.3 failed \(interrupted while writing slot b\); still running v0\.0\.1 on slot a`, 60*time.Second)
	reinstalled := time.Now()
	out := m.con.expect(`(?s)installing the update /boot/clawedge-v0\.0\.3\.update(.*?)slot b now holds v0\.0\.3 \(verified and read back\)`, 180*time.Second)
	m.con.expect(`reboot: Restarting system with command '0 tryboot'`, 60*time.Second)
	m.cmd.Wait()
	t.Logf("the same bundle installed again after the repair in %.1fs", time.Since(reinstalled).Seconds())
	if bad := regexp.MustCompile(`FAT-fs \(\w+\): (error|Filesystem has been set read-only).*`).FindString(out[1]); bad != "" {
		t.Errorf("the kernel still finds the boot partition damaged after the repair: %q", bad)
	}
	if _, slot := firmware(t, img, bootStart, true); slot != "b" {
		t.Errorf("after the install the try boot would run slot %s", slot)
	}
}
