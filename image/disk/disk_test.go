package disk

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestTableRoundTrip(t *testing.T) {
	tab := Table{DiskID: 0xc1a3ed9e, Partitions: []Partition{
		{Type: TypeFAT32LBA, Bootable: true, Start: MiB, Size: 96 * MiB},
		{Type: TypeLinux, Start: 97 * MiB, Size: 64 * MiB},
		{Type: TypeLinux, Start: 161 * MiB, Size: 95 * MiB},
	}}
	b, err := tab.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != 512 || b[510] != 0x55 || b[511] != 0xaa {
		t.Fatal("not a 512-byte sector with the boot signature")
	}
	got, err := ReadTable(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, tab) {
		t.Errorf("read back %+v, want %+v", got, tab)
	}
	if u := tab.PartUUID(2); u != "c1a3ed9e-02" {
		t.Errorf("PartUUID(2) = %q", u)
	}
}

func TestTableRejects(t *testing.T) {
	for name, ps := range map[string][]Partition{
		"unaligned":   {{Type: TypeLinux, Start: 1000, Size: MiB}},
		"overlapping": {{Type: TypeLinux, Start: MiB, Size: 2 * MiB}, {Type: TypeLinux, Start: 2 * MiB, Size: MiB}},
		"over mbr":    {{Type: TypeLinux, Start: 0, Size: MiB}},
		"five":        make([]Partition, 5),
	} {
		if _, err := (Table{Partitions: ps}).Marshal(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := ReadTable(bytes.NewReader(make([]byte, 512))); err == nil {
		t.Error("read a table from zeroes")
	}
}

func TestPlan(t *testing.T) {
	l, err := Plan(Sizes{Boot: 96 * MiB, Root: 64*MiB - 5, MinPerm: 64 * MiB}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if l.Size != 256*MiB {
		t.Errorf("size %d MiB, want 256", l.Size/MiB)
	}
	ps := l.Table.Partitions
	if ps[0].Start != MiB || ps[1].Start != 97*MiB || ps[1].Size != 64*MiB || ps[2].Start != 161*MiB || ps[2].End() != l.Size {
		t.Errorf("layout %v", ps)
	}
	// A/B: the same 64 MiB as two 32 MiB slots; /perm keeps its place.
	ab, err := Plan(Sizes{Boot: 96 * MiB, Root: 64 * MiB, MinPerm: 64 * MiB, Slots: 2}, 1)
	if err != nil {
		t.Fatal(err)
	}
	ps = ab.Table.Partitions
	if len(ps) != 4 || ps[1].Start != 97*MiB || ps[1].Size != 32*MiB || ps[2].Start != 129*MiB || ps[2].Size != 32*MiB ||
		ps[3].Start != 161*MiB || ps[3].End() != ab.Size || ab.Size != l.Size {
		t.Errorf("A/B layout %v", ps)
	}
	if _, err := Plan(Sizes{Boot: MiB, Root: 4 * MiB, MinPerm: MiB, Slots: 3}, 1); err == nil {
		t.Error("accepted three slots")
	}
	if _, err := Plan(Sizes{Boot: MiB, Root: MiB, MinPerm: MiB, Size: 3 * MiB}, 1); err == nil {
		t.Error("accepted a size that is not a power of two")
	}
	if _, err := Plan(Sizes{Boot: 8 * MiB, Root: 8 * MiB, MinPerm: MiB, Size: 16 * MiB}, 1); err == nil {
		t.Error("accepted a size too small")
	}
	for n, want := range map[int64]int64{1: 1, 2: 2, 3: 4, 255 * MiB: 256 * MiB, 256 * MiB: 256 * MiB} {
		if got := NextPow2(n); got != want {
			t.Errorf("NextPow2(%d) = %d, want %d", n, got, want)
		}
	}
}

func TestWriteRejectsOversizedFile(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big")
	os.WriteFile(big, make([]byte, 2*MiB), 0o644)
	l, _ := Plan(Sizes{Boot: MiB, Root: MiB, MinPerm: MiB}, 1)
	l.Files = []string{big, "", ""}
	if err := l.Write(filepath.Join(dir, "img")); err == nil {
		t.Error("wrote a 2 MiB file into a 1 MiB partition")
	}
}

func need(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed (apt-get install dosfstools mtools e2fsprogs fdisk)", tool)
		}
	}
}

// TestImage writes a small image the way mkimage does and reads it back with
// other tools: sfdisk for the table, mtools for the FAT; and finds ext4's
// superblock where /perm starts.
func TestImage(t *testing.T) {
	need(t, "mkfs.vfat", "mcopy", "mmd", "mdir", "mtype", "mkfs.ext4")
	dir := t.TempDir()
	src := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o644)
		return p
	}
	boot := filepath.Join(dir, "boot.fat")
	if err := MakeFAT(boot, 40*MiB, "BOOT", []FATFile{
		{src("config.txt", "enable_uart=1\n"), "config.txt"},
		{src("cmdline.txt", "console=ttyS0,115200\n"), "cmdline.txt"},
		{src("uart.dtbo", "x"), "overlays/uart.dtbo"},
	}); err != nil {
		t.Fatal(err)
	}
	perm := filepath.Join(dir, "perm.ext4")
	os.MkdirAll(filepath.Join(dir, "permdir", "clawedge"), 0o755)
	if err := MakeExt4(perm, 8*MiB, "perm", filepath.Join(dir, "permdir")); err != nil {
		t.Fatal(err)
	}
	root := src("root.bin", strings.Repeat("r", 1000))
	l, err := Plan(Sizes{Boot: 40 * MiB, Root: MiB, MinPerm: 8 * MiB}, 0xc1a3ed9e)
	if err != nil {
		t.Fatal(err)
	}
	l.Files = []string{boot, root, perm}
	img := filepath.Join(dir, "sd.img")
	if err := l.Write(img); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(img)
	if fi.Size() != 64*MiB {
		t.Errorf("image is %d bytes, want 64 MiB", fi.Size())
	}
	f, _ := os.Open(img)
	defer f.Close()
	tab, err := ReadTable(f)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(tab, l.Table) {
		t.Errorf("table read back %+v, want %+v", tab, l.Table)
	}
	if sf, err := exec.LookPath("sfdisk"); err == nil {
		out, err := exec.Command(sf, "--dump", img).CombinedOutput()
		if err != nil {
			t.Fatalf("sfdisk: %v\n%s", err, out)
		}
		for _, want := range []string{
			"label-id: 0xc1a3ed9e",
			"sd.img1 : start=        2048, size=       81920, type=c, bootable",
			"sd.img2 : start=       83968, size=        2048, type=83",
			"sd.img3 : start=       86016, size=       45056, type=83",
		} {
			if !strings.Contains(string(out), want) {
				t.Errorf("sfdisk --dump lacks %q:\n%s", want, out)
			}
		}
	}
	files, err := ListFAT(img, MiB)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"cmdline.txt", "config.txt", "overlays/", "overlays/uart.dtbo"}; !reflect.DeepEqual(files, want) {
		// mdir -/ -b lists directories with or without a trailing slash
		// depending on the mtools version: accept both.
		alt := []string{"cmdline.txt", "config.txt", "overlays", "overlays/uart.dtbo"}
		if !reflect.DeepEqual(files, alt) {
			t.Errorf("FAT files %q, want %q", files, want)
		}
	}
	got, err := ReadFAT(img, MiB, "config.txt")
	if err != nil || string(got) != "enable_uart=1\n" {
		t.Errorf("config.txt = %q, %v", got, err)
	}
	rb := make([]byte, 1000)
	f.ReadAt(rb, l.Table.Partitions[1].Start)
	if string(rb) != strings.Repeat("r", 1000) {
		t.Error("root partition does not hold the root file")
	}
	// ext4's superblock is 1024 bytes in, its magic 0xef53 at offset 0x38.
	sb := make([]byte, 2)
	f.ReadAt(sb, l.Table.Partitions[2].Start+1024+0x38)
	if sb[0] != 0x53 || sb[1] != 0xef {
		t.Errorf("no ext4 superblock at /perm's start (% x)", sb)
	}
}
