// Package procfs reads the numeric "Key:   123 kB" and "Key: 9" lines of
// Linux's /proc files (/proc/meminfo, /proc/self/status).
package procfs

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

// Field is one numeric line's value: in bytes when the line gave kB
// (Bytes), else the count as written.
type Field struct {
	N     uint64
	Bytes bool
}

// Parse reads the numeric lines of a /proc file ("VmRSS:   12920 kB",
// "Threads: 9"). Other lines, and sizes in bytes past uint64, are skipped.
func Parse(s string) map[string]Field {
	m := map[string]Field{}
	for _, line := range strings.Split(s, "\n") {
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		f := strings.Fields(val)
		if len(f) == 0 || len(f) > 2 || (len(f) == 2 && f[1] != "kB") {
			continue
		}
		n, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			continue
		}
		if len(f) == 2 {
			if n > math.MaxUint64>>10 {
				continue
			}
			m[key] = Field{N: n << 10, Bytes: true}
			continue
		}
		m[key] = Field{N: n}
	}
	return m
}

// KB returns the size on the line "key: N kB" of the file at path, in
// bytes.
func KB(path, key string) (uint64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	f, ok := Parse(string(b))[key]
	if !ok || !f.Bytes {
		return 0, fmt.Errorf("%s: no %s line with a number of kB", path, key)
	}
	return f.N, nil
}

// OpenFDs counts the open file descriptors of this process without listing
// them when the kernel can say: since Linux 6.2 the size that stat(2) gives
// /proc/self/fd is the count (one bitmap walk in the kernel). On an older
// kernel (size 0) the directory is read in batches of 256 names, so the
// memory of a count does not grow with the count; its time still does, so a
// caller that is asked often (a scrape) caches the result.
func OpenFDs() (int, error) { return countFDs("/proc/self/fd", true) }

// countFDs counts the descriptors listed in dir; with stat, the size stat(2)
// gives the directory first.
func countFDs(dir string, stat bool) (int, error) {
	if fi, err := os.Stat(dir); stat && err == nil && fi.Size() > 0 {
		return int(fi.Size()), nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return 0, err
	}
	defer d.Close()
	n := 0
	for {
		names, err := d.Readdirnames(256)
		n += len(names)
		if err != nil {
			if errors.Is(err, io.EOF) {
				// The descriptor of the directory itself was listed too.
				return max(n-1, 0), nil
			}
			return 0, err
		}
	}
}
