package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unsafe"

	"github.com/clawedge/clawedge/image/disk"
)

// /perm grows to fill the card at first boot: the image is small to
// download and write, the card is not. Only the last partition grows, and
// only into free space after it, so nothing on the card is ever moved. Each
// boot checks again, so a power cut half way is finished at the next boot.

// growTo is the new size in bytes of partition n (1-based) of t on a disk
// of diskBytes, or 0 when it stays: it must be the last partition, and it
// grows to the end of the disk rounded down to a MiB when that adds at least
// 16 MiB (a card a little larger than the image is left alone).
func growTo(t disk.Table, n int, diskBytes int64) int64 {
	if n < 1 || n > len(t.Partitions) {
		return 0
	}
	p := t.Partitions[n-1]
	for _, q := range t.Partitions {
		if q.Start > p.Start {
			return 0
		}
	}
	end := min(diskBytes, (1<<32-1)*disk.SectorSize) / disk.MiB * disk.MiB
	if end-p.End() < 16*disk.MiB {
		return 0
	}
	return end - p.Start
}

// growPartition enlarges partition n of /dev/<name> to fill the disk: the
// MBR entry, then the kernel's view (BLKPG), without a reboot. It returns
// the old and new sizes, or zeros when there is nothing to do.
func growPartition(name string, n int) (from, to int64, err error) {
	sectors, err := os.ReadFile(filepath.Join("/sys/block", name, "size"))
	if err != nil {
		return 0, 0, err
	}
	s, err := strconv.ParseInt(strings.TrimSpace(string(sectors)), 10, 64)
	if err != nil {
		return 0, 0, err
	}
	f, err := os.OpenFile("/dev/"+name, os.O_RDWR, 0)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	t, err := disk.ReadTable(f)
	if err != nil {
		return 0, 0, err
	}
	to = growTo(t, n, s*512)
	if to == 0 {
		return 0, 0, nil
	}
	p := t.Partitions[n-1]
	mbr := make([]byte, disk.SectorSize)
	if _, err := f.ReadAt(mbr, 0); err != nil {
		return 0, 0, err
	}
	binary.LittleEndian.PutUint32(mbr[446+16*(n-1)+12:], uint32(to/disk.SectorSize))
	if _, err := f.WriteAt(mbr, 0); err != nil {
		return 0, 0, err
	}
	if err := f.Sync(); err != nil {
		return 0, 0, err
	}
	part := blkpgPartition{start: p.Start, length: to, pno: int32(n)}
	arg := blkpgIoctlArg{op: blkpgResizePartition, datalen: int32(unsafe.Sizeof(part)), data: unsafe.Pointer(&part)}
	if err := ioctl(int(f.Fd()), blkpg, unsafe.Pointer(&arg)); err != nil {
		return 0, 0, fmt.Errorf("BLKPG resize: %w (the table says %d MiB; the next boot will use it)", err, to/disk.MiB)
	}
	return p.Size, to, nil
}

// The kernel's <linux/blkpg.h>.
const (
	blkpg                = 0x1269
	blkpgResizePartition = 3
)

type blkpgIoctlArg struct {
	op      int32
	flags   int32
	datalen int32
	data    unsafe.Pointer
}

type blkpgPartition struct {
	start, length int64
	pno           int32
	devname       [64]byte
	volname       [64]byte
}

// ext4IocResizeFS is EXT4_IOC_RESIZE_FS, _IOW('f', 16, __u64): grow a
// mounted ext4 file system to the given count of blocks.
const ext4IocResizeFS = 0x40086610

// ext4Size reads the size in bytes and the block size of the ext4 file
// system on dev from its superblock (at 1024; s_blocks_count_lo at 0x04,
// s_log_block_size at 0x18, s_blocks_count_hi at 0x150 with the 64bit
// feature, bit 0x80 of s_feature_incompat at 0x60).
func ext4Size(dev string) (size, blockSize int64, err error) {
	f, err := os.Open(dev)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sb := make([]byte, 1024)
	if _, err := f.ReadAt(sb, 1024); err != nil {
		return 0, 0, err
	}
	return ext4SizeOf(sb)
}

func ext4SizeOf(sb []byte) (size, blockSize int64, err error) {
	if binary.LittleEndian.Uint16(sb[0x38:]) != 0xef53 {
		return 0, 0, fmt.Errorf("no ext4 superblock")
	}
	blocks := uint64(binary.LittleEndian.Uint32(sb[0x04:]))
	if binary.LittleEndian.Uint32(sb[0x60:])&0x80 != 0 {
		blocks |= uint64(binary.LittleEndian.Uint32(sb[0x150:])) << 32
	}
	blockSize = 1024 << binary.LittleEndian.Uint32(sb[0x18:])
	return int64(blocks) * blockSize, blockSize, nil
}

// growPerm grows partition n of disk and the /perm file system on it.
// Called before /perm is mounted (the table), then after (the file system).
func growPermPartition(name string, n int) {
	from, to, err := growPartition(name, n)
	switch {
	case err != nil:
		logf("/perm: growing its partition: %v", err)
	case to != 0:
		logf("/perm: partition grown from %d MiB to %d MiB to fill the card", from/disk.MiB, to/disk.MiB)
	}
}

func growPermFS(dev string) {
	sectors, err := os.ReadFile(filepath.Join("/sys/class/block", filepath.Base(dev), "size"))
	if err != nil {
		return
	}
	s, _ := strconv.ParseInt(strings.TrimSpace(string(sectors)), 10, 64)
	size, bs, err := ext4Size(dev)
	if err != nil {
		logf("/perm: %v", err)
		return
	}
	if s*512-size < disk.MiB {
		return // it fills its partition
	}
	blocks := uint64(s * 512 / bs)
	d, err := os.Open(permDir)
	if err != nil {
		return
	}
	defer d.Close()
	if err := ioctl(int(d.Fd()), ext4IocResizeFS, unsafe.Pointer(&blocks)); err != nil {
		logf("/perm: growing the file system: %v", err)
		return
	}
	logf("/perm: file system grown from %d MiB to %d MiB", size/disk.MiB, int64(blocks)*bs/disk.MiB)
}
