package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/clawedge/clawedge/image/disk"
)

func TestGrowTo(t *testing.T) {
	const M = disk.MiB
	tab := disk.Table{Partitions: []disk.Partition{
		{Start: 1 * M, Size: 96 * M}, {Start: 97 * M, Size: 64 * M}, {Start: 161 * M, Size: 95 * M}}}
	for _, tc := range []struct {
		n    int
		disk int64
		want int64
	}{
		{3, 256 * M, 0},                         // the image as written: nothing to gain
		{3, 256*M + 15*M, 0},                    // a card a little larger: left alone
		{3, 8 << 30, 8<<30 - 161*M},             // an 8 GiB card: to its end
		{3, 8<<30 + 1000, 8<<30 - 161*M},        // rounded down to a MiB
		{2, 8 << 30, 0},                         // not the last partition
		{4, 8 << 30, 0},                         // no such partition
		{3, 4 << 40, (1<<32-1)*512/M*M - 161*M}, // an MBR addresses 2 TiB
	} {
		if got := growTo(tab, tc.n, tc.disk); got != tc.want {
			t.Errorf("partition %d on %d bytes: %d, want %d", tc.n, tc.disk, got, tc.want)
		}
	}
}

// TestExt4Size reads the superblock of a real file system made by mkfs.ext4,
// as the image's /perm is.
func TestExt4Size(t *testing.T) {
	if _, err := exec.LookPath("mkfs.ext4"); err != nil {
		t.Skip("mkfs.ext4 not installed (e2fsprogs)")
	}
	img := filepath.Join(t.TempDir(), "perm.ext4")
	if err := disk.MakeExt4(img, 40*disk.MiB, "perm", t.TempDir()); err != nil {
		t.Fatal(err)
	}
	size, bs, err := ext4Size(img)
	if err != nil || size != 40*disk.MiB || bs < 1024 {
		t.Errorf("ext4Size = %d, %d, %v; want 40 MiB", size, bs, err)
	}
	junk := filepath.Join(t.TempDir(), "junk")
	os.WriteFile(junk, make([]byte, 4096), 0o644)
	if _, _, err := ext4Size(junk); err == nil {
		t.Error("zeros read as ext4")
	}
}
