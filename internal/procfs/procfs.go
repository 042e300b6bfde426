// Package procfs reads the "Key:   123 kB" lines of Linux's /proc files
// (/proc/meminfo, /proc/self/status).
package procfs

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// KB returns the value of the line "key: N kB" of the file at path, in
// bytes.
func KB(path, key string) (uint64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), key+":")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) != 2 || fields[1] != "kB" {
			return 0, fmt.Errorf("%s: %s line %q: want a number of kB", path, key, sc.Text())
		}
		kb, err := strconv.ParseUint(fields[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %s: %v", path, key, err)
		}
		if kb > 1<<54 {
			return 0, fmt.Errorf("%s: %s: %d kB is out of range", path, key, kb)
		}
		return kb * 1024, nil
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, errors.New(path + ": no " + key + " line")
}
