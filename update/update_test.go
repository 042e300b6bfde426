package update

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

const testBoard = "rpi-arm64"

// fixture is a board in a folder: a boot partition (a directory), two slot
// devices (files) and a stand-in /perm, with slot a running.
type fixture struct {
	t          testing.TB
	dir        string
	boot       DirFS
	slots      map[string]Slot
	perm       string
	pub        ed25519.PublicKey
	priv       ed25519.PrivateKey
	clock      time.Time
	bootCount  int
	lastReboot string
}

const testConfig = "arm_64bit=1\nos_prefix=slot-a/\nenable_uart=1\n[pi4]\narm_boost=1\n"

func newFixture(t testing.TB) *fixture {
	t.Helper()
	dir := t.TempDir()
	f := &fixture{t: t, dir: dir, boot: DirFS(filepath.Join(dir, "boot")), perm: filepath.Join(dir, "perm"),
		clock: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	f.pub, f.priv, _ = ed25519.GenerateKey(nil)
	f.slots = map[string]Slot{}
	for i, s := range []string{"a", "b"} {
		p := filepath.Join(dir, "slot-"+s+".img")
		if err := os.WriteFile(p, bytes.Repeat([]byte{byte('A' + i)}, 256<<10), 0o644); err != nil {
			t.Fatal(err)
		}
		f.slots[s] = Slot{Device: p, Root: "PARTUUID=c1a3ed9e-0" + string(rune('2'+i))}
	}
	write := func(name, body string) {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("boot/config.txt", testConfig)
	write("boot/slot-a/cmdline.txt", "console=ttyS0,115200 root=PARTUUID=c1a3ed9e-02 rootfstype=squashfs clawedge.slot=a ro\n")
	write("boot/slot-a/vmlinuz", "kernel of a")
	write("perm/clawedge/config.yaml", "board: {driver: sim}\n")
	write("perm/clawedge/data/clawedge.db", "store bytes")
	return f
}

func (f *fixture) keysFor() []ed25519.PublicKey { return []ed25519.PublicKey{f.pub} }

// updater is the updater as the running system builds it.
func (f *fixture) updater(current, version string) *Updater {
	return &Updater{Keys: []ed25519.PublicKey{f.pub}, Board: testBoard, Running: Version{Name: version},
		Current: current, Slots: f.slots, Boot: f.boot, Mode: ModeTryboot,
		BootID: "boot-" + string(rune('0'+f.bootCount)), Now: func() time.Time { return f.clock }}
}

// firmware plays the Pi firmware: tryboot.txt if the reboot asked for a
// try, else config.txt; its os_prefix picks the cmdline.txt whose
// clawedge.slot names the slot that runs.
func (f *fixture) firmware(tryboot bool) string {
	f.t.Helper()
	f.bootCount++
	name := ConfigTxt
	if tryboot {
		if _, err := os.Stat(filepath.Join(string(f.boot), TrybootTxt)); err == nil {
			name = TrybootTxt
		}
	}
	cfg, err := readFile(f.boot, name)
	if err != nil {
		f.t.Fatal(err)
	}
	cmdline, err := readFile(f.boot, OSPrefix(cfg)+CmdlineTxt)
	if err != nil {
		f.t.Fatal(err)
	}
	slot, ok := RunningSlot(string(cmdline))
	if !ok {
		f.t.Fatalf("no slot in %q", cmdline)
	}
	return slot
}

type bundleSpec struct {
	version, board string
	epoch          int64
	root, kernel   []byte
	key            ed25519.PrivateKey
}

func (f *fixture) spec(version string) bundleSpec {
	return bundleSpec{version: version, board: testBoard, root: bytes.Repeat([]byte("squashfs of "+version+" "), 4000),
		kernel: []byte("kernel of " + version), key: f.priv}
}

func makeBundle(t testing.TB, s bundleSpec) []byte {
	t.Helper()
	files := map[string][]byte{"root.squashfs": s.root, "vmlinuz": s.kernel}
	m := Manifest{Format: FormatVersion, Version: s.version, Epoch: s.epoch, Board: s.board}
	for _, name := range []string{"root.squashfs", "vmlinuz"} {
		target := TargetBoot
		if name == "root.squashfs" {
			target = TargetRoot
		}
		fe, err := Describe(name, target, bytes.NewReader(files[name]))
		if err != nil {
			t.Fatal(err)
		}
		m.Files = append(m.Files, fe)
	}
	var b bytes.Buffer
	if err := Write(&b, m, s.key, func(fe File) (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(files[fe.Name])), nil
	}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func bytesOpener(b []byte) Opener {
	return func(context.Context) (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
}

// snapshot is every file of the fixture (boot, slots, perm) and its sum.
func (f *fixture) snapshot() map[string]string {
	f.t.Helper()
	out := map[string]string{}
	filepath.WalkDir(f.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			f.t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		rel, _ := filepath.Rel(f.dir, p)
		out[rel] = hex.EncodeToString(sum[:])
		return nil
	})
	return out
}

func diff(a, b map[string]string) []string {
	var d []string
	for k, v := range a {
		if b[k] != v {
			d = append(d, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			d = append(d, k)
		}
	}
	sort.Strings(d)
	return d
}

// permUnchanged fails the test if a file of the stand-in /perm differs
// from the snapshot before: an update never writes it.
func (f *fixture) permUnchanged(before map[string]string) {
	f.t.Helper()
	for _, k := range diff(before, f.snapshot()) {
		if strings.HasPrefix(k, "perm"+string(filepath.Separator)) {
			f.t.Errorf("/perm changed: %s", k)
		}
	}
}

func (f *fixture) read(name string) string {
	b, err := os.ReadFile(filepath.Join(f.dir, name))
	if err != nil {
		f.t.Fatal(err)
	}
	return string(b)
}

func TestApplyTryCommit(t *testing.T) {
	f := newFixture(t)
	perm := f.snapshot()
	spec := f.spec("v0.3.0")
	bundle := makeBundle(t, spec)
	var phases []string
	u := f.updater("a", "v0.2.0")
	u.Progress = func(phase string, done, total int64) {
		if len(phases) == 0 || phases[len(phases)-1] != phase {
			phases = append(phases, phase)
		}
	}
	p, err := u.Apply(context.Background(), bytesOpener(bundle), false)
	if err != nil {
		t.Fatal(err)
	}
	if p.Slot != "b" || p.Manifest.Version != "v0.3.0" {
		t.Fatalf("plan %+v", p)
	}
	if got := strings.Join(phases, ","); got != "verifying,writing,reading back" {
		t.Errorf("progress phases %s", got)
	}
	if u.Mode.RebootArg() != "0 tryboot" {
		t.Errorf("reboot arg %q", u.Mode.RebootArg())
	}
	dev := f.read("slot-b.img")
	if !strings.HasPrefix(dev, string(spec.root)) {
		t.Error("slot b does not hold the new root")
	}
	if f.read("slot-a.img") != strings.Repeat("A", 256<<10) {
		t.Error("slot a was written")
	}
	if f.read("boot/slot-b/vmlinuz") != "kernel of v0.3.0" {
		t.Error("slot b's kernel")
	}
	if got := f.read("boot/slot-b/cmdline.txt"); got != "console=ttyS0,115200 root=PARTUUID=c1a3ed9e-03 rootfstype=squashfs clawedge.slot=b ro\n" {
		t.Errorf("slot b's cmdline.txt: %q", got)
	}
	if f.read("boot/config.txt") != testConfig {
		t.Error("config.txt changed before the try")
	}
	if got := f.read("boot/tryboot.txt"); got != strings.Replace(testConfig, "slot-a/", "slot-b/", 1) {
		t.Errorf("tryboot.txt: %q", got)
	}
	f.permUnchanged(perm) // /perm is never written

	// A restart of clawedge before the reboot settles nothing.
	if r, err := f.updater("a", "v0.2.0").Settle(); err != nil || r.Attempt != nil {
		t.Fatalf("settle in the same boot: %+v %v", r, err)
	}
	// reboot '0 tryboot': the firmware reads tryboot.txt.
	slot := f.firmware(true)
	if slot != "b" {
		t.Fatalf("try boot ran slot %s", slot)
	}
	ub := f.updater("b", "v0.3.0")
	r, err := ub.Settle()
	if err != nil || !r.Trying {
		t.Fatalf("settle on b: %+v %v", r, err)
	}
	// Another update while b is on trial would make it the default unproven.
	before := f.snapshot()
	if _, err := ub.Apply(context.Background(), bytesOpener(makeBundle(t, f.spec("v0.4.0"))), false); !errors.Is(err, ErrOnTrial) {
		t.Fatalf("update on trial: %v", err)
	}
	if d := diff(before, f.snapshot()); len(d) > 0 {
		t.Fatalf("refused update changed %v", d)
	}
	ok, err := ub.Commit()
	if err != nil || !ok {
		t.Fatalf("commit: %v %v", ok, err)
	}
	if _, err := os.Stat(filepath.Join(string(f.boot), TrybootTxt)); !errors.Is(err, fs.ErrNotExist) {
		t.Error("tryboot.txt left after commit")
	}
	// A plain reboot (a power cut) after the commit boots b.
	if slot := f.firmware(false); slot != "b" {
		t.Fatalf("after commit the firmware boots %s", slot)
	}
	if ok, _ := f.updater("b", "v0.3.0").Commit(); ok {
		t.Error("committed twice")
	}
	st, _ := LoadState(f.boot)
	if st.Attempt.Phase != PhaseCommitted || st.Slots["b"].Version != "v0.3.0" {
		t.Errorf("state %+v", st)
	}
}

func TestRollbackWhenNotHealthy(t *testing.T) {
	for _, tc := range []struct {
		name   string
		settle bool // the new slot got as far as Settle
		reason string
	}{
		{"exits at start", true, "did not report healthy"},
		{"kernel never starts", false, "did not start"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			perm := f.snapshot()
			defer f.permUnchanged(perm)
			if _, err := f.updater("a", "v0.2.0").Apply(context.Background(), bytesOpener(makeBundle(t, f.spec("v0.3.0"))), false); err != nil {
				t.Fatal(err)
			}
			if f.firmware(true) != "b" {
				t.Fatal("try boot did not run b")
			}
			if tc.settle {
				if r, err := f.updater("b", "v0.3.0").Settle(); err != nil || !r.Trying {
					t.Fatalf("%+v %v", r, err)
				}
				// clawedge exits at start: no Commit; the supervisor reboots.
			}
			if slot := f.firmware(false); slot != "a" {
				t.Fatalf("after a failed try the firmware boots %s", slot)
			}
			r, err := f.updater("a", "v0.2.0").Settle()
			if err != nil || !r.Failed {
				t.Fatalf("%+v %v", r, err)
			}
			if msg := r.Message(); !strings.Contains(msg, "update to v0.3.0 failed") || !strings.Contains(msg, tc.reason) || !strings.Contains(msg, "v0.2.0 on slot a") {
				t.Errorf("message %q", msg)
			}
			// Told once.
			if r, _ := f.updater("a", "v0.2.0").Settle(); r.Failed {
				t.Error("failure reported twice")
			}
			if f.firmware(true) != "a" {
				t.Error("a stale tryboot.txt would boot b again")
			}
		})
	}
}

func TestPowerCutWhileWriting(t *testing.T) {
	f := newFixture(t)
	bundle := makeBundle(t, f.spec("v0.3.0"))
	ctx, cancel := context.WithCancel(context.Background())
	u := f.updater("a", "v0.2.0")
	u.Progress = func(phase string, done, total int64) {
		if phase == "writing" && done > total/2 {
			cancel() // the cut: the process stops mid-write
		}
	}
	perm := f.snapshot()
	if _, err := u.Apply(ctx, bytesOpener(bundle), false); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
	if f.firmware(true) != "a" || f.firmware(false) != "a" {
		t.Fatal("a half-written slot is bootable")
	}
	f.permUnchanged(perm)
	r, err := f.updater("a", "v0.2.0").Settle()
	if err != nil {
		t.Fatal(err)
	}
	// The failed Apply already recorded why; the next boot has nothing new.
	st, _ := LoadState(f.boot)
	if st.Attempt.Phase != PhaseFailed || r.Trying {
		t.Errorf("state %+v report %+v", st.Attempt, r)
	}
}

func TestInterruptedWriteReportedAtBoot(t *testing.T) {
	f := newFixture(t)
	// As a power cut leaves it: the state says writing, nothing armed.
	st := State{Attempt: &Attempt{Slot: "b", From: "a", Version: "v0.3.0", Old: "v0.2.0", Mode: ModeTryboot, Phase: PhaseWriting, BootID: "old"}}
	if err := saveState(f.boot, st); err != nil {
		t.Fatal(err)
	}
	if f.firmware(true) != "a" {
		t.Fatal("boots b")
	}
	r, err := f.updater("a", "v0.2.0").Settle()
	if err != nil || !r.Failed || !strings.Contains(r.Message(), "interrupted while writing slot b") {
		t.Fatalf("%+v %v %q", r, err, r.Message())
	}
}

func TestRefusedBundlesWriteNothing(t *testing.T) {
	f := newFixture(t)
	good := makeBundle(t, f.spec("v0.3.0"))
	_, otherKey, _ := ed25519.GenerateKey(nil)
	tamper := func(b []byte, at int) []byte {
		c := bytes.Clone(b)
		c[at] ^= 1
		return c
	}
	spec := func(mod func(*bundleSpec)) []byte {
		s := f.spec("v0.3.0")
		mod(&s)
		return makeBundle(t, s)
	}
	cases := []struct {
		name   string
		bundle []byte
		want   error
	}{
		{"bad signature", spec(func(s *bundleSpec) { s.key = otherKey }), ErrSignature},
		{"manifest changed after signing", tamper(good, len(Magic)+4+10), ErrSignature},
		{"wrong sha256", tamper(good, len(good)-3), ErrChecksum},
		{"wrong sha256 in the root", tamper(good, len(good)-200), ErrChecksum},
		{"truncated in the payload", good[:len(good)-5], ErrTruncated},
		{"truncated in the signature", good[:len(Magic)+4+300], ErrTruncated},
		{"truncated in the header", good[:10], ErrNotBundle},
		{"data after the last file", append(bytes.Clone(good), 0), ErrTrailing},
		{"not a bundle", []byte("PK\x03\x04 a zip file, not a bundle at all"), ErrNotBundle},
		{"another board", spec(func(s *bundleSpec) { s.board = "rpi-armv6" }), ErrBoard},
		{"older version", spec(func(s *bundleSpec) { s.version = "v0.1.9" }), ErrOlder},
		{"same version", spec(func(s *bundleSpec) { s.version = "v0.2.0" }), ErrSame},
		{"unordered versions", spec(func(s *bundleSpec) { s.version = "7a08acc" }), ErrUnordered},
		{"root larger than the slot", spec(func(s *bundleSpec) { s.root = make([]byte, 300<<10) }), ErrTooBig},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := f.snapshot()
			_, err := f.updater("a", "v0.2.0").Apply(context.Background(), bytesOpener(tc.bundle), false)
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			if d := diff(before, f.snapshot()); len(d) > 0 {
				t.Errorf("refused bundle changed %v", d)
			}
		})
	}
}

func TestForce(t *testing.T) {
	f := newFixture(t)
	old := makeBundle(t, f.spec("v0.1.0"))
	if _, err := f.updater("a", "v0.2.0").Apply(context.Background(), bytesOpener(old), true); err != nil {
		t.Fatalf("--force with an older version: %v", err)
	}
	other := f.spec("v0.3.0")
	other.board = "pi5"
	if _, err := f.updater("a", "v0.2.0").Apply(context.Background(), bytesOpener(makeBundle(t, other)), true); !errors.Is(err, ErrBoard) {
		t.Fatalf("--force let another board's bundle through: %v", err)
	}
}

func TestBundleChangedBetweenPasses(t *testing.T) {
	f := newFixture(t)
	first, second := makeBundle(t, f.spec("v0.3.0")), makeBundle(t, f.spec("v0.4.0"))
	n := 0
	open := func(context.Context) (io.ReadCloser, error) {
		n++
		if n == 1 {
			return io.NopCloser(bytes.NewReader(first)), nil
		}
		return io.NopCloser(bytes.NewReader(second)), nil
	}
	if _, err := f.updater("a", "v0.2.0").Apply(context.Background(), open, false); err == nil || !strings.Contains(err.Error(), "changed between") {
		t.Fatalf("got %v", err)
	}
	if f.firmware(true) != "a" {
		t.Error("a bundle that changed under the updater is armed")
	}
}

func TestFallbackMode(t *testing.T) {
	f := newFixture(t)
	u := f.updater("a", "v0.2.0")
	u.Mode = ModeFallback
	if _, err := u.Apply(context.Background(), bytesOpener(makeBundle(t, f.spec("v0.3.0"))), false); err != nil {
		t.Fatal(err)
	}
	if u.Mode.RebootArg() != "" {
		t.Error("fallback reboots with an argument")
	}
	if f.firmware(false) != "b" {
		t.Fatal("fallback: the next plain boot is not b")
	}
	ub := f.updater("b", "v0.3.0")
	if r, err := ub.Settle(); err != nil || !r.Trying {
		t.Fatalf("%+v %v", r, err)
	}
	if OSPrefix([]byte(f.read("boot/config.txt"))) != "slot-a/" {
		t.Fatal("fallback: on trial, config.txt must point back at a")
	}
	if ok, err := ub.Commit(); err != nil || !ok {
		t.Fatal(ok, err)
	}
	if f.firmware(false) != "b" {
		t.Fatal("fallback: committed b is not the default")
	}
}

func TestCompare(t *testing.T) {
	for _, tc := range []struct {
		a, b Version
		c    int
		ok   bool
	}{
		{Version{Name: "v0.3.0"}, Version{Name: "v0.2.9"}, 1, true},
		{Version{Name: "v0.10.0"}, Version{Name: "v0.9.0"}, 1, true},
		{Version{Name: "v0.3.0-2-gabc1234"}, Version{Name: "v0.3.0-10-gdef5678"}, -1, true},
		{Version{Name: "v0.3.0-dirty"}, Version{Name: "v0.3.0"}, 0, true},
		{Version{Name: "abc1234", Epoch: 200}, Version{Name: "def5678", Epoch: 100}, 1, true},
		{Version{Name: "abc1234"}, Version{Name: "def5678", Epoch: 100}, 0, false},
		{Version{Name: "abc1234"}, Version{Name: "abc1234"}, 0, true},
		{Version{Name: "abc1234", Epoch: 5}, Version{Name: "def5678", Epoch: 5}, 0, false},
	} {
		c, ok := Compare(tc.a, tc.b)
		if c != tc.c || ok != tc.ok {
			t.Errorf("Compare(%v, %v) = %d %v, want %d %v", tc.a, tc.b, c, ok, tc.c, tc.ok)
		}
	}
}

func TestOSPrefixEdit(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"a=1\nos_prefix=slot-a/\n[pi4]\nos_prefix=x/\n", "a=1\nos_prefix=slot-b/\n[pi4]\nos_prefix=x/\n"},
		{"a=1\n[pi4]\nb=2\n", "a=1\nos_prefix=slot-b/\n[pi4]\nb=2\n"},
		{"a=1", "a=1\nos_prefix=slot-b/\n"},
		{"", "os_prefix=slot-b/\n"},
	} {
		got := string(withOSPrefix([]byte(tc.in), "slot-b/"))
		if got != tc.want {
			t.Errorf("withOSPrefix(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if p := OSPrefix([]byte(got)); p != "slot-b/" {
			t.Errorf("OSPrefix(%q) = %q", got, p)
		}
	}
}

func TestKeys(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "keys")
	priv, pub, err := KeyGen(dir)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(priv)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("private key mode %v %v", fi.Mode(), err)
	}
	k, err := ReadPrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ReadPublicKey(pub)
	if err != nil || !p.Equal(k.Public()) {
		t.Fatalf("public key %v", err)
	}
	if _, _, err := KeyGen(dir); err == nil || !strings.Contains(err.Error(), "not replacing") {
		t.Errorf("second keygen: %v", err)
	}
	for _, bad := range []string{"", "ed25519:", "ed25519:AAAA", "rsa:" + FormatKey(p)[8:]} {
		if _, err := ParseKey(bad); err == nil {
			t.Errorf("ParseKey(%q) accepted", bad)
		}
	}
	if _, err := ReadPrivateKey(pub); err == nil || strings.Contains(err.Error(), FormatKey(p)[8:]) {
		t.Errorf("a public key read as private: %v", err)
	}
}

func TestManifestChecks(t *testing.T) {
	sum := strings.Repeat("ab", 32)
	root := File{Name: "root.squashfs", Target: TargetRoot, Size: 1, SHA256: sum}
	for _, tc := range []struct {
		name string
		m    Manifest
		want string
	}{
		{"no root", Manifest{Format: 1, Version: "v1", Board: "b", Files: []File{{Name: "k", Target: TargetBoot, SHA256: sum}}}, "exactly one"},
		{"climbs out", Manifest{Format: 1, Version: "v1", Board: "b", Files: []File{root, {Name: "../config.txt", Target: TargetBoot, SHA256: sum}}}, `files[1] "../config.txt"`},
		{"twice", Manifest{Format: 1, Version: "v1", Board: "b", Files: []File{root, {Name: "K", Target: TargetBoot, SHA256: sum}, {Name: "k", Target: TargetBoot, SHA256: sum}}}, "listed twice"},
		{"bad sum", Manifest{Format: 1, Version: "v1", Board: "b", Files: []File{{Name: "r", Target: TargetRoot, SHA256: "AB"}}}, "sha256"},
		{"format", Manifest{Format: 2, Version: "v1", Board: "b", Files: []File{root}}, "format 2"},
		{"target", Manifest{Format: 1, Version: "v1", Board: "b", Files: []File{root, {Name: "x", Target: "perm", SHA256: sum}}}, `target "perm"`},
	} {
		if err := tc.m.Check(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}
