package update

import (
	"context"
	"crypto/rand"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkApply is one update of a file-backed 32 MiB slot: a bundle of a
// 24 MiB root (random bytes: squashfs does not compress further) and a
// 10 MiB kernel, verified, written, synced, read back and armed.
// Reports the bundle's size and MB/s of payload (docs/BENCHMARKS.md).
func BenchmarkApply(b *testing.B) {
	f := newFixture(b)
	root, kernel := make([]byte, 24<<20), make([]byte, 10<<20)
	rand.Read(root)
	rand.Read(kernel)
	bundle := makeBundle(b, bundleSpec{version: "v1.0.0", board: testBoard, root: root, kernel: kernel, key: f.priv})
	dir := b.TempDir()
	boot := DirFS(filepath.Join(dir, "boot"))
	os.MkdirAll(filepath.Join(string(boot), "slot-a"), 0o755)
	os.WriteFile(filepath.Join(string(boot), ConfigTxt), []byte(testConfig), 0o644)
	os.WriteFile(filepath.Join(string(boot), "slot-a", CmdlineTxt), []byte("root=PARTUUID=x-02 clawedge.slot=a\n"), 0o644)
	slotB := filepath.Join(dir, "slot-b.img")
	if err := os.WriteFile(slotB, make([]byte, 32<<20), 0o644); err != nil {
		b.Fatal(err)
	}
	u := &Updater{Keys: f.keysFor(), Board: testBoard, Running: Version{Name: "v0.9.0"}, Current: "a", Mode: ModeTryboot, Boot: boot,
		Slots: map[string]Slot{"b": {Device: slotB, Root: "PARTUUID=x-03"}}}
	b.SetBytes(int64(len(root) + len(kernel)))
	b.ResetTimer()
	for range b.N {
		if _, err := u.Apply(context.Background(), bytesOpener(bundle), true); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(bundle)), "bundle-bytes")
}
