// Package boottest boots the SD card image in QEMU's Raspberry Pi 3 B model
// and drives clawedge over the emulated UART. It needs the image, so it runs
// only when CLAWEDGE_IMAGE names one (scripts/image-test.sh sets it).
package boottest

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/clawedge/clawedge/image/disk"
	"github.com/clawedge/clawedge/update"
)

// console is the guest's primary UART as QEMU exposes it on a unix socket.
type console struct {
	t    *testing.T
	conn net.Conn
	mu   sync.Mutex
	buf  bytes.Buffer // everything received
	seen int          // buf offset that expect has consumed up to
	log  io.Writer
	done chan struct{}
}

func (c *console) readLoop() {
	defer close(c.done)
	b := make([]byte, 4096)
	for {
		n, err := c.conn.Read(b)
		c.mu.Lock()
		c.buf.Write(b[:n])
		c.log.Write(b[:n])
		c.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// expect waits until re matches output not yet consumed and consumes it.
func (c *console) expect(re string, timeout time.Duration) []string {
	c.t.Helper()
	return c.wait(re, timeout, true)
}

// saw waits until re matches anything received so far, consumed or not,
// and consumes nothing: for lines whose place among the others is not
// fixed (DHCP's, which runs beside the boot).
func (c *console) saw(re string, timeout time.Duration) []string {
	c.t.Helper()
	return c.wait(re, timeout, false)
}

func (c *console) wait(re string, timeout time.Duration, consume bool) []string {
	c.t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.Now().Add(timeout)
	for {
		c.mu.Lock()
		from := 0
		if consume {
			from = c.seen
		}
		rest := c.buf.Bytes()[from:]
		if loc := rx.FindSubmatchIndex(rest); loc != nil {
			m := rx.FindSubmatch(rest)
			if consume {
				c.seen += loc[1]
			}
			c.mu.Unlock()
			out := make([]string, len(m))
			for i, s := range m {
				out[i] = string(s)
			}
			return out
		}
		tail := string(rest[max(0, len(rest)-2000):])
		c.mu.Unlock()
		select {
		case <-c.done:
			c.t.Fatalf("QEMU exited while waiting for %q; last output:\n%s", re, tail)
		default:
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("no %q within %v; last output:\n%s", re, timeout, tail)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// send types a line as a person at a terminal would (Enter is CR).
func (c *console) send(line string) {
	c.t.Helper()
	if _, err := io.WriteString(c.conn, line+"\r"); err != nil {
		c.t.Fatal(err)
	}
}

type machine struct {
	cmd *exec.Cmd
	con *console
	web string // host:port on 127.0.0.1 that QEMU forwards to the guest's 8080 (the dashboard)
}

// boot starts QEMU on img and connects to the UART that Linux calls ttyS0.
//
// QEMU's raspi3b has two UARTs: the first -serial is the PL011 (Linux's
// ttyAMA; on a Pi 3 it is wired to Bluetooth, and its device tree hands it to
// the Bluetooth driver), the second is the mini UART, which Linux calls
// ttyS0 and the Pi's firmware calls the primary UART (serial0) once
// enable_uart=1. The image puts its consoles there, so the test does too.
func boot(t *testing.T, n int, img, kernel, dtb, cmdline string) *machine {
	sock := filepath.Join(t.TempDir(), "ttyS0.sock")
	logPath := filepath.Join(os.Getenv("CLAWEDGE_IMAGE_LOGS"), fmt.Sprintf("boot%d.log", n))
	if os.Getenv("CLAWEDGE_IMAGE_LOGS") == "" {
		logPath = filepath.Join(t.TempDir(), "console.log")
	}
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logf.Close() })
	dtb = qemuUSBHost(t, dtb)
	web := freeLocalAddr(t)
	// One host thread for the four emulated cores: as fast here (the
	// guest is mostly idle) and it avoided boots that printed nothing at
	// all under load, seen with the default thread per core.
	cmd := exec.Command("qemu-system-aarch64", "-M", "raspi3b", "-accel", "tcg,thread=single",
		"-kernel", kernel, "-dtb", dtb, "-append", cmdline,
		"-drive", "file="+img+",if=sd,format=raw",
		"-display", "none", "-monitor", "none", "-no-reboot",
		"-chardev", "socket,id=ttyS0,path="+sock+",server=on,wait=on",
		"-serial", "null", "-serial", "chardev:ttyS0",
		// Ethernet over USB (CDC, cdc_ether in the guest: usb0), NATed by
		// QEMU: the guest gets 10.0.2.15 by DHCP and reaches the host's
		// 127.0.0.1 at 10.0.2.2; the host's web reaches the guest's 8080.
		"-device", "usb-net,netdev=n0", "-netdev", "user,id=n0,hostfwd=tcp:"+web+"-:8080")
	cmd.Stdout, cmd.Stderr = logf, logf
	// QEMU dies with the test binary: a test timeout panics past t.Cleanup
	// and would leave it running, spinning a core.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	m := &machine{cmd: cmd, web: web}
	t.Cleanup(m.kill)
	var conn net.Conn
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		if conn, err = net.Dial("unix", sock); err == nil {
			break
		}
		if time.Since(start) > 10*time.Second {
			t.Fatalf("QEMU's console socket: %v", err)
		}
	}
	m.con = &console{t: t, conn: conn, log: logf, done: make(chan struct{})}
	go m.con.readLoop()
	return m
}

// qemuUSBHost returns a copy of dtb whose USB controller is bound by the
// upstream dwc2 driver in host mode (what config.txt's
// dtoverlay=dwc2,dr_mode=host does on a Pi) instead of the Pi's own dwc_otg.
// For QEMU only: with dwc_otg, QEMU's DWC2 model times out setting device
// addresses (12 s each) and usb-net enumerated ~50 s into the boot; with
// dwc2 it is there in a second, before init starts. The image keeps
// dwc_otg, the Pi's default, for real boards.
func qemuUSBHost(t *testing.T, dtb string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), filepath.Base(dtb))
	data, err := os.ReadFile(dtb)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, kv := range [][2]string{{"compatible", "brcm,bcm2835-usb"}, {"dr_mode", "host"}} {
		if b, err := exec.Command("fdtput", "-t", "s", out, "/soc/usb@7e980000", kv[0], kv[1]).CombinedOutput(); err != nil {
			t.Fatalf("fdtput (apt-get install device-tree-compiler): %v: %s", err, b)
		}
	}
	return out
}

// kill ends QEMU at once: to the guest, a power cut.
func (m *machine) kill() {
	if m.cmd.Process != nil {
		m.cmd.Process.Kill()
		m.cmd.Wait()
	}
	if m.con != nil {
		m.con.conn.Close()
	}
}

func TestBootInQEMU(t *testing.T) {
	src := os.Getenv("CLAWEDGE_IMAGE")
	if src == "" {
		t.Skip("CLAWEDGE_IMAGE is not set: scripts/image-test.sh builds the image and runs this")
	}
	qemuDir := os.Getenv("CLAWEDGE_QEMU_DIR") // the kernel and DTB, passed to QEMU explicitly
	kernel, dtb := filepath.Join(qemuDir, "vmlinuz"), filepath.Join(qemuDir, "bcm2710-rpi-3-b.dtb")
	if _, err := exec.LookPath("qemu-system-aarch64"); err != nil {
		t.Fatal("qemu-system-aarch64 is not installed (apt-get install qemu-system-arm)")
	}
	// Boot a copy: the test writes to /perm.
	// A card larger than the image: /perm grows to fill it at first boot.
	img, tab := copyCard(t, src, 512*disk.MiB)
	// The kernel command line is the image's own: the cmdline.txt of the
	// slot config.txt's os_prefix names, as the Pi's firmware passes it.
	cfgTxt, err := disk.ReadFAT(img, tab.Partitions[0].Start, "config.txt")
	if err != nil {
		t.Fatal(err)
	}
	cl, err := disk.ReadFAT(img, tab.Partitions[0].Start, update.OSPrefix(cfgTxt)+"cmdline.txt")
	if err != nil {
		t.Fatal(err)
	}
	cmdline := strings.TrimSpace(string(cl))
	banner := `clawedge \S+ ready on board periph \(type help\)`

	start := time.Now()
	m := boot(t, 1, img, kernel, dtb, cmdline)
	// fsck.fat, staged with the runner, finds the image's FAT sound.
	m.con.expect(`boot partition: checked, clean`, 150*time.Second)
	perm := tab.Partitions[len(tab.Partitions)-1] // after the root slots
	permMiB := perm.Size / disk.MiB
	grown := fmt.Sprintf("%d MiB", 512-perm.Start/disk.MiB)
	m.con.expect(fmt.Sprintf(`/perm: partition grown from %d MiB to %s`, permMiB, grown), 150*time.Second)
	m.con.expect(fmt.Sprintf(`/perm: file system grown from %d MiB to %s`, permMiB, grown), 30*time.Second)
	// Wi-Fi without a radio: the brcmfmac modules load and nl80211 answers.
	m.con.expect(`wifi: modules brcmutil brcmfmac brcmfmac-wcc brcmfmac-cyw loaded; nl80211 answers \(generic netlink family \d+\)`, 30*time.Second)
	m.con.expect(`starting clawedge with \S+ as clawedge \(uid 1000\)`, 30*time.Second) // not as root
	m.con.expect(banner, 30*time.Second)
	t.Logf("boot 1: console ready %.1fs after QEMU started", time.Since(start).Seconds())
	fmt.Fprintf(os.Stderr, "BOOT-TO-READY %.1f s\n", time.Since(start).Seconds())
	// QEMU's usb-net: DHCP on usb0 from QEMU's user-mode network.
	m.con.saw(`usb0: 10\.0\.2\.15/24 via 10\.0\.2\.2 \(DHCP`, 30*time.Second)
	m.con.send(`@gpio/write{pin="led";value=1}`)
	m.con.expect(`led = 1 \(high\)`, 20*time.Second)
	m.con.send(`@gpio/read{pin="led"}`)
	m.con.expect(`led = 1 \(high\)`, 20*time.Second)
	// status: clawedge's memory as the kernel counts it, and Wi-Fi without
	// a radio (QEMU has none) said as a fact.
	m.con.send(`status`)
	st := m.con.expect(`(?s)rss_kb: (\d+)\s+rss_anon_kb: (\d+).*?wifi: no radio \(wlan0 absent\).*?audit_entries`, 20*time.Second)
	fmt.Fprintf(os.Stderr, "CORE-RSS VmRSS %s kB, RssAnon %s kB\n", st[1], st[2])
	// First pairing with no terminal: no browser is paired yet, so the
	// daemon shows a code on the console and init writes it to the boot
	// partition, whence the card's holder reads it (dashboard_test.go).
	first := m.con.saw(`pair a phone with the dashboard \(web: \S+\): code (\d{8})`, 30*time.Second)[1]
	onCard(t, img, tab, first, true)
	checkDashboard(t, m) // dashboard_test.go; a browser paired: the file goes
	onCard(t, img, tab, first, false)
	// A call with an effect is in the audit trail, fsynced, before its reply
	// is written, so cutting the power now must lose it not. Read-only calls
	// (the read, status) are recorded in a group commit after they ran: a
	// power cut may lose those, which changed nothing.
	m.kill()

	// As a person would from a PC: a clawedge.yaml on the boot partition
	// that names the model in its models/ folder (scripts/image-test.sh
	// puts the tiny random-weight one there).
	def, err := os.ReadFile("../config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// Random weights would rarely choose a call: tool_choice required makes
	// the first step one (the policy allows only gpio/write, whose pin enum
	// is the one output, led), and the step limit makes the next the answer.
	// The reply limit leaves room for a call written a character a token.
	withModel := string(def) + "\nmodels:\n  local: {path: /boot/models/tiny.gguf, threads: 1, context: 2048}\n" +
		"policy: {default: deny, tools: {gpio/write: allow}}\n" +
		"agent: {tool_choice: required, max_iterations: 1, calls_per_output: 1, reply_tokens: 128}\n"
	if err := disk.WriteFAT(img, tab.Partitions[0].Start, "clawedge.yaml", []byte(withModel)); err != nil {
		t.Fatal(err)
	}

	start = time.Now()
	m = boot(t, 2, img, kernel, dtb, cmdline)
	m.con.expect(`model: /boot/models/tiny\.gguf \(\d+ MiB\), loaded at the first message`, 150*time.Second)
	// Under load this boot has taken over 70 s (docs/BENCHMARKS.md).
	m.con.expect(banner, 90*time.Second)
	t.Logf("boot 2: console ready %.1fs after QEMU started", time.Since(start).Seconds())
	m.con.send("audit")
	// The write, kept across the power cut, and the first pairing code's
	// issue (as the console, without the code), in either order: the daemon
	// issues the code while the console may already be writing.
	const pairIssued = `#\d+ \S+ console/first-boot/console @web/pair\{[^}\n]*\} -> ok: a code for web:phone \(owner\)`
	const ledWritten = `#\d+ \S+ console/ttyS0/console @gpio/write\{pin="led";value=1\} -> ok: led = 1 \(high\)`
	m.con.expect(`(?s)`+pairIssued+`.*?`+ledWritten+`|`+ledWritten+`.*?`+pairIssued, 20*time.Second)
	// Free text goes to the local model: clawedge-llm, llama.cpp and the C
	// runtime on the image load it and generate (random weights: what it
	// says is noise, but its first step is a call the constraint made
	// valid). The console answers lines in order, so status's answer marks
	// the end of the turn; no log line between may be a failure.
	lstart := time.Now()
	m.con.send("switch the led please")
	m.con.send(`status`)
	turn := m.con.expect(`(?s)local model loaded(.*?)local_model: tiny\.gguf, last reply: (prompt .*?tokens/s\)).*?audit_entries`, 180*time.Second)
	if bad := regexp.MustCompile(`level=(WARN|ERROR)|runner died|could not get an answer`).FindString(turn[1]); bad != "" {
		t.Errorf("the local model's turn on the image: %q in\n%s", bad, turn[1])
	}
	// The answer, then the note that the step limit ended the calls.
	if !regexp.MustCompile(`\S[^\n]*\n\(no more tools were called: the limit of 1 tool steps`).MatchString(turn[1]) {
		t.Errorf("no answer after the call:\n%s", turn[1])
	}
	fmt.Fprintf(os.Stderr, "LOCAL-TURN %.1f s\nLOCAL-SPEED %s\n", time.Since(lstart).Seconds(), turn[2])
	// The call moved the emulated GPIO line: read back through periph, it is
	// at the level the audited call wrote.
	m.con.send(`@gpio/read{pin="led"}`)
	level := m.con.expect(`led = ([01]) \((?:low|high)\)`, 20*time.Second)[1]
	m.con.send("audit")
	// The console answers in order: the pins' table marks the trail's end
	// (read-only calls are recorded after they ran, so no pending entry does).
	m.con.send("pins")
	// (Each reply's first line follows the console's "> " prompt.)
	trail := m.con.expect(`(?s)(#1 .*?)\n(?:> )?NAME\s+GPIO\s+MODE`, 20*time.Second)[1]
	// Each entry's own call follows its number, time and caller at the start
	// of its line; an entry's outcome may quote others (sys/audit's does).
	writes := regexp.MustCompile(`(?m)^#\d+ \S+ \S+ @gpio/write\{pin="led";value=([01])\} -> ok: led = [01]`).FindAllStringSubmatch(trail, -1)
	if len(writes) < 2 { // boot 1's, then the model's
		t.Fatalf("the model's call is not in the audit trail:\n%s", trail)
	}
	// The read just made is the trail's last (read-only calls are recorded
	// when the trail is read): compare within one listing, whatever else the
	// console printed before it.
	if reads := regexp.MustCompile(`(?m)^#\d+ \S+ \S+ @gpio/read\{pin="led"\} -> ok: led = ([01])`).FindAllStringSubmatch(trail, -1); len(reads) > 0 {
		level = reads[len(reads)-1][1]
	}
	if wrote := writes[len(writes)-1][1]; level != wrote {
		t.Errorf("the model's call wrote led=%s; it reads back %s; the turn:\n%s\nthe audit trail:\n%s", wrote, level, turn[1], trail)
	}
	m.kill()
}

// copyCard copies the image src to a card of size bytes (0: the image's own
// size) that the test may change, and reads its partition table.
func copyCard(t *testing.T, src string, size int64) (string, disk.Table) {
	t.Helper()
	img := filepath.Join(t.TempDir(), "sd.img")
	if err := exec.Command("cp", "--sparse=always", src, img).Run(); err != nil {
		t.Fatal(err)
	}
	if size > 0 {
		if err := os.Truncate(img, size); err != nil {
			t.Fatal(err)
		}
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
	return img, tab
}
