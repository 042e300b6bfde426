// Package disk lays out clawedge's SD card image: an MBR partition table
// with a FAT32 boot partition (the Raspberry Pi firmware reads only that),
// a read-only squashfs root and an ext4 /perm partition, in one file whose
// size is a power of two (QEMU's SD card model insists on it).
//
// It writes the partition table itself; the file systems are made by the
// usual tools (mkfs.vfat and mcopy, mksquashfs, mkfs.ext4), which need no
// root and no loop devices.
package disk

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// SectorSize is the only sector size SD cards and the Pi firmware use.
const SectorSize = 512

// MBR partition types.
const (
	TypeFAT32LBA byte = 0x0c
	TypeLinux    byte = 0x83
)

// Partition is one MBR entry, in bytes (multiples of SectorSize).
type Partition struct {
	Type     byte
	Bootable bool
	Start    int64
	Size     int64
}

func (p Partition) String() string {
	return fmt.Sprintf("type 0x%02x start %d size %d", p.Type, p.Start, p.Size)
}

// End is the first byte after the partition.
func (p Partition) End() int64 { return p.Start + p.Size }

// Table is an MBR: the disk signature (which Linux shows as the PARTUUID
// prefix, root=PARTUUID=c1a3ed9e-02) and up to four primary partitions.
type Table struct {
	DiskID     uint32
	Partitions []Partition
}

// PartUUID is how Linux names partition n (1-based) of this table.
func (t Table) PartUUID(n int) string { return fmt.Sprintf("%08x-%02x", t.DiskID, n) }

// Marshal encodes the table as the 512-byte first sector. Partitions must be
// sector-aligned, in order and not overlapping; CHS fields are filled with the
// "use LBA" values, as every tool since the 1990s does.
func (t Table) Marshal() ([]byte, error) {
	if len(t.Partitions) > 4 {
		return nil, fmt.Errorf("an MBR holds 4 primary partitions, not %d", len(t.Partitions))
	}
	b := make([]byte, SectorSize)
	binary.LittleEndian.PutUint32(b[440:], t.DiskID)
	prevEnd := int64(SectorSize)
	for i, p := range t.Partitions {
		if p.Start%SectorSize != 0 || p.Size%SectorSize != 0 || p.Size <= 0 {
			return nil, fmt.Errorf("partition %d (%v): not whole sectors", i+1, p)
		}
		if p.Start < prevEnd {
			return nil, fmt.Errorf("partition %d (%v) overlaps what precedes it", i+1, p)
		}
		if p.End()/SectorSize > 1<<32-1 {
			return nil, fmt.Errorf("partition %d (%v): beyond the 2 TiB an MBR can address", i+1, p)
		}
		prevEnd = p.End()
		e := b[446+16*i : 446+16*(i+1)]
		if p.Bootable {
			e[0] = 0x80
		}
		copy(e[1:4], []byte{0xfe, 0xff, 0xff})
		e[4] = p.Type
		copy(e[5:8], []byte{0xfe, 0xff, 0xff})
		binary.LittleEndian.PutUint32(e[8:], uint32(p.Start/SectorSize))
		binary.LittleEndian.PutUint32(e[12:], uint32(p.Size/SectorSize))
	}
	b[510], b[511] = 0x55, 0xaa
	return b, nil
}

// ReadTable decodes the MBR at the start of r; empty entries are skipped.
func ReadTable(r io.ReaderAt) (Table, error) {
	b := make([]byte, SectorSize)
	if _, err := r.ReadAt(b, 0); err != nil {
		return Table{}, err
	}
	if b[510] != 0x55 || b[511] != 0xaa {
		return Table{}, errors.New("no MBR boot signature (55 aa)")
	}
	t := Table{DiskID: binary.LittleEndian.Uint32(b[440:])}
	for i := range 4 {
		e := b[446+16*i : 446+16*(i+1)]
		if e[4] == 0 {
			continue
		}
		t.Partitions = append(t.Partitions, Partition{
			Type:     e[4],
			Bootable: e[0] == 0x80,
			Start:    int64(binary.LittleEndian.Uint32(e[8:])) * SectorSize,
			Size:     int64(binary.LittleEndian.Uint32(e[12:])) * SectorSize,
		})
	}
	return t, nil
}
