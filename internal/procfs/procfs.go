// Package procfs reads the numeric "Key:   123 kB" and "Key: 9" lines of
// Linux's /proc files (/proc/meminfo, /proc/self/status).
package procfs

import (
	"fmt"
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
