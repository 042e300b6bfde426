package update

import (
	"fmt"
	"io"
	"os"
)

// Device is where a slot's root file system goes: a block device
// (/dev/mmcblk0p3) or, in tests and benchmarks, a file standing in for one.
type Device interface {
	io.WriterAt
	io.ReaderAt
	Size() (int64, error)
	Sync() error
	Close() error
}

// OpenDevice opens a block device or a regular file for writing. A regular
// file keeps its size (it stands in for a partition of that size).
func OpenDevice(path string) (Device, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	return fileDevice{f}, nil
}

type fileDevice struct{ *os.File }

// Size is the file's size, or a block device's (whose Stat says 0).
func (d fileDevice) Size() (int64, error) {
	n, err := d.File.Seek(0, io.SeekEnd)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", d.Name(), err)
	}
	return n, nil
}
