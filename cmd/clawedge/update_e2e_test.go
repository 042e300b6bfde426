package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// updateBoard is a board in a folder: a boot partition (a directory), two
// file-backed slots, the kernel's command line and a stand-in /perm.
type updateBoard struct{ dir string }

func newUpdateBoard(t *testing.T) updateBoard {
	b := updateBoard{t.TempDir()}
	for name, body := range map[string]string{
		"boot/config.txt":                "arm_64bit=1\nos_prefix=slot-a/\nenable_uart=1\n",
		"boot/slot-a/cmdline.txt":        "console=ttyS0,115200 root=PARTUUID=c1a3ed9e-02 ro clawedge.slot=a\n",
		"boot/slot-a/vmlinuz":            "old kernel",
		"slot-a.img":                     strings.Repeat("A", 1<<20),
		"slot-b.img":                     strings.Repeat("B", 1<<20),
		"cmdline":                        "console=ttyS0,115200 root=PARTUUID=c1a3ed9e-02 ro clawedge.slot=a\n",
		"boot_id":                        "first boot\n",
		"perm/clawedge/config.yaml":      "board: {driver: sim}\n",
		"perm/clawedge/data/clawedge.db": "store",
		"src/root.squashfs":              strings.Repeat("new root ", 20000),
		"src/boot/vmlinuz":               "new kernel",
		"src/boot/overlays/uart.dtbo":    "overlay",
	} {
		p := filepath.Join(b.dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

func (b updateBoard) flags(pub string) []string {
	return []string{"--boot", filepath.Join(b.dir, "boot"), "--slot-a", filepath.Join(b.dir, "slot-a.img"),
		"--slot-b", filepath.Join(b.dir, "slot-b.img"), "--cmdline", filepath.Join(b.dir, "cmdline"),
		"--boot-id", filepath.Join(b.dir, "boot_id"), "--board", "rpi-arm64", "--key", pub}
}

// sums is every file of the board but the bundle sources, with its sha256.
func (b updateBoard) sums(t *testing.T) map[string]string {
	out := map[string]string{}
	filepath.WalkDir(b.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.Contains(p, "/src/") || strings.Contains(p, "/keys") || strings.HasSuffix(p, ".update") {
			return err
		}
		data, _ := os.ReadFile(p)
		s := sha256.Sum256(data)
		out[p] = hex.EncodeToString(s[:])
		return nil
	})
	return out
}

func TestUpdateCLI(t *testing.T) {
	b := newUpdateBoard(t)
	keys := filepath.Join(b.dir, "keys")
	out := runCLI(t, 0, "", "update", "keygen", "--out", keys)
	if !strings.Contains(out, "update.key:  \"ed25519:") {
		t.Errorf("keygen: %s", out)
	}
	priv, pub := filepath.Join(keys, "clawedge-update.key"), filepath.Join(keys, "clawedge-update.pub")
	if fi, err := os.Stat(priv); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("private key: %v %v", fi, err)
	}
	bundle := filepath.Join(b.dir, "clawedge-v9.0.0.update")
	out = runCLI(t, 0, "", "update", "bundle", "--key", priv, "--version", "v9.0.0", "--root", filepath.Join(b.dir, "src/root.squashfs"),
		"--boot-dir", filepath.Join(b.dir, "src/boot"), "-o", bundle)
	if !strings.Contains(out, "v9.0.0 for rpi-arm64, 3 files") {
		t.Errorf("bundle: %s", out)
	}

	// --check writes nothing and says what would change. The test binary's
	// version ("dev") cannot be ordered against v9.0.0: --force is needed.
	before := b.sums(t)
	out = runCLI(t, 1, "", append([]string{"update", "--check", bundle}, b.flags(pub)...)...)
	if !strings.Contains(out, "cannot tell whether the bundle is newer") || !strings.Contains(out, "--force") {
		t.Errorf("check without --force: %s", out)
	}
	out = runCLI(t, 0, "", append([]string{"update", "--check", "--force", bundle}, b.flags(pub)...)...)
	for _, want := range []string{"bundle v9.0.0 for rpi-arm64: signature and 3 files verified", "root   root.squashfs", "boot   overlays/uart.dtbo", "would write slot b"} {
		if !strings.Contains(out, want) {
			t.Errorf("--check output lacks %q:\n%s", want, out)
		}
	}
	// Another key's bundle is refused with nothing written.
	other := filepath.Join(b.dir, "keys2")
	runCLI(t, 0, "", "update", "keygen", "--out", other)
	out = runCLI(t, 1, "", append([]string{"update", "--force", "--no-reboot", bundle}, b.flags(filepath.Join(other, "clawedge-update.pub"))...)...)
	if !strings.Contains(out, "signature does not verify") {
		t.Errorf("wrong key: %s", out)
	}
	if after := b.sums(t); len(after) != len(before) || !mapsEqual(before, after) {
		t.Fatal("--check or a refused bundle changed the board")
	}

	// By URL, over HTTP: written, read back, armed; /perm untouched.
	data, _ := os.ReadFile(bundle)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(data) }))
	defer srv.Close()
	_, stderr := runSplit(t, 0, append([]string{"update", "--force", "--no-reboot", srv.URL + "/clawedge-v9.0.0.update"}, b.flags(pub)...)...)
	for _, phase := range []string{"verifying", "writing", "reading back"} {
		if !strings.Contains(stderr, phase) {
			t.Errorf("no %s progress: %s", phase, stderr)
		}
	}
	slotB, _ := os.ReadFile(filepath.Join(b.dir, "slot-b.img"))
	if !bytes.HasPrefix(slotB, []byte(strings.Repeat("new root ", 20000))) {
		t.Error("slot b does not hold the new root")
	}
	if got, _ := os.ReadFile(filepath.Join(b.dir, "boot/tryboot.txt")); !strings.Contains(string(got), "os_prefix=slot-b/") {
		t.Errorf("tryboot.txt: %q", got)
	}
	after := b.sums(t)
	for p, s := range before {
		if strings.Contains(p, "/perm/") && after[p] != s {
			t.Errorf("%s changed", p)
		}
	}
	out = runCLI(t, 0, "", append([]string{"update", "status"}, b.flags(pub)...)...)
	for _, want := range []string{"slot A", "running, default", "slot B  v9.0.0", "armed for the next boot", "last attempt: dev -> v9.0.0 (slot b, tryboot): armed"} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
}

// TestUpdateCLI goes on: what clawedge-init runs as root at the next boots.
func TestUpdateSettleCommitCLI(t *testing.T) {
	b := newUpdateBoard(t)
	keys := filepath.Join(b.dir, "keys")
	runCLI(t, 0, "", "update", "keygen", "--out", keys)
	pub := filepath.Join(keys, "clawedge-update.pub")
	bundle := filepath.Join(b.dir, "v9.update")
	runCLI(t, 0, "", "update", "bundle", "--key", filepath.Join(keys, "clawedge-update.key"), "--version", "v9.0.0",
		"--root", filepath.Join(b.dir, "src/root.squashfs"), "--boot-dir", filepath.Join(b.dir, "src/boot"), "-o", bundle)
	runCLI(t, 0, "", append([]string{"update", "--force", "--no-reboot", bundle}, b.flags(pub)...)...)
	settle := append([]string{"update", "settle"}, b.flags(pub)...)
	if out := runCLI(t, 0, "", settle...); out != "" {
		t.Fatalf("settle in the boot that applied: %q", out)
	}
	boot := func(slot, id string) {
		os.WriteFile(filepath.Join(b.dir, "cmdline"), []byte("root=x clawedge.slot="+slot+"\n"), 0o644)
		os.WriteFile(filepath.Join(b.dir, "boot_id"), []byte(id), 0o644)
	}
	// The try boot runs b; it never gets ready; the next boot is a again.
	boot("b", "second")
	if out := runCLI(t, 0, "", settle...); !strings.HasPrefix(out, "trying: trying update v9.0.0 on slot b") {
		t.Fatalf("settle on the try boot: %q", out)
	}
	boot("a", "third")
	if out := runCLI(t, 0, "", settle...); !strings.HasPrefix(out, "failed: update to v9.0.0 failed (slot b did not report healthy); still running dev on slot a") {
		t.Fatalf("settle after the failed try: %q", out)
	}
	// Again, and this time b gets ready: commit.
	runCLI(t, 0, "", append([]string{"update", "--force", "--no-reboot", bundle}, b.flags(pub)...)...)
	boot("b", "fourth")
	runCLI(t, 0, "", settle...)
	if out := runCLI(t, 0, "", append([]string{"update", "commit"}, b.flags(pub)...)...); out != "update committed: slot B is now the default\n" {
		t.Fatalf("commit: %q", out)
	}
	out := runCLI(t, 0, "", append([]string{"update", "status"}, b.flags(pub)...)...)
	if !strings.Contains(out, "slot B  v9.0.0") || !strings.Contains(out, "running, default") || !strings.Contains(out, "committed") {
		t.Errorf("status after commit:\n%s", out)
	}
}

func mapsEqual(a, b map[string]string) bool {
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
