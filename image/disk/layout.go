package disk

import (
	"bytes"
	"fmt"
	"io"
	"os"
)

// MiB is the alignment of every partition: SD cards erase in blocks of up to
// 4 MiB, and the first MiB keeps the partition table clear of the first one.
const MiB = 1 << 20

// Layout is the image: where each partition goes and the file that fills it.
type Layout struct {
	Size  int64 // the whole image, a power of two
	Table Table
	Files []string // Files[i] fills Table.Partitions[i]; "" leaves it zero
}

// Sizes asks for the boot and root partitions; /perm takes the rest of the
// image, which is the smallest power of two that holds MinPerm more.
type Sizes struct {
	Boot, Root, MinPerm int64
	// Slots splits Root into that many equal root partitions (A/B updates:
	// 2); 0 or 1 is one. /perm stays where one root would put it.
	Slots int
	// Size forces the image size (a power of two); 0 chooses it.
	Size int64
}

// Plan places boot (FAT32), the root slots (squashfs) and perm (ext4) one
// after another from 1 MiB, each MiB-aligned.
func Plan(s Sizes, diskID uint32) (Layout, error) {
	boot := Partition{Type: TypeFAT32LBA, Bootable: true, Start: MiB, Size: alignUp(s.Boot, MiB)}
	slots := max(s.Slots, 1)
	if slots > 2 {
		return Layout{}, fmt.Errorf("%d root slots: an MBR holds boot, two slots and /perm", slots)
	}
	parts := []Partition{boot}
	end := boot.End()
	each := alignUp(s.Root, MiB) / int64(slots) / MiB * MiB
	for range slots {
		p := Partition{Type: TypeLinux, Start: end, Size: each}
		parts = append(parts, p)
		end = p.End()
	}
	root := Partition{Start: boot.End(), Size: end - boot.End()}
	need := root.End() + alignUp(s.MinPerm, MiB)
	size := s.Size
	if size == 0 {
		size = NextPow2(need)
	}
	if size&(size-1) != 0 {
		return Layout{}, fmt.Errorf("image size %d is not a power of two", size)
	}
	if size < need {
		return Layout{}, fmt.Errorf("image size %d MiB is too small: boot, root and /perm need %d MiB", size/MiB, need/MiB)
	}
	perm := Partition{Type: TypeLinux, Start: root.End(), Size: size - root.End()}
	return Layout{Size: size, Table: Table{DiskID: diskID, Partitions: append(parts, perm)}}, nil
}

// NextPow2 is the smallest power of two >= n (n > 0).
func NextPow2(n int64) int64 {
	p := int64(1)
	for p < n {
		p <<= 1
	}
	return p
}

func alignUp(n, a int64) int64 { return (n + a - 1) / a * a }

// Write creates the image at path: zeroes (sparse), the partition table, and
// each partition's file copied to its place. A file larger than its
// partition is an error, never a silent truncation.
func (l Layout) Write(path string) error {
	if len(l.Files) != len(l.Table.Partitions) {
		return fmt.Errorf("%d partitions but %d files", len(l.Table.Partitions), len(l.Files))
	}
	mbr, err := l.Table.Marshal()
	if err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Truncate(l.Size); err != nil {
		return err
	}
	if _, err := f.WriteAt(mbr, 0); err != nil {
		return err
	}
	for i, name := range l.Files {
		if name == "" {
			continue
		}
		p := l.Table.Partitions[i]
		if err := copyInto(f, p, name); err != nil {
			return fmt.Errorf("partition %d: %w", i+1, err)
		}
	}
	if err := f.Sync(); err != nil {
		return err
	}
	return f.Close()
}

func copyInto(dst *os.File, p Partition, name string) error {
	src, err := os.Open(name)
	if err != nil {
		return err
	}
	defer src.Close()
	fi, err := src.Stat()
	if err != nil {
		return err
	}
	if fi.Size() > p.Size {
		return fmt.Errorf("%s is %d bytes, the partition %d", name, fi.Size(), p.Size)
	}
	// Chunks of zeroes are skipped: the image file stays sparse.
	buf := make([]byte, MiB)
	zero := make([]byte, MiB)
	for off := int64(0); ; off += MiB {
		n, err := io.ReadFull(src, buf)
		if n > 0 && !bytes.Equal(buf[:n], zero[:n]) {
			if _, werr := dst.WriteAt(buf[:n], p.Start+off); werr != nil {
				return werr
			}
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
