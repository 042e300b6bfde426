package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// releaseStartupPages unmaps from this process the pages of its own
// executable that only start-up used.
//
// Why: Go runs every package's init at start, and those functions lie
// scattered across the whole text; the kernel maps pages around each fault
// (fault-around, whole large folios on recent kernels), so a daemon that then
// sits idle keeps almost its entire 15 MB binary mapped — most of its VmRSS,
// for code that never runs again. MADV_DONTNEED on the read-only mappings of
// the executable drops only this process's page-table entries: the pages stay
// in the page cache (nothing is read from the SD card again), and whatever
// the daemon runs later maps back in with a minor fault. Writable mappings
// (.data, .bss) are never touched: dropping them would lose their contents.
//
// It returns the bytes of mappings released, for the log.
func releaseStartupPages() (int, error) {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return 0, err
	}
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	released := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// start-end perms offset dev inode path
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[5] != exe || strings.Contains(fields[1], "w") {
			continue
		}
		lo, hi, ok := strings.Cut(fields[0], "-")
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil || end <= start {
			return released, fmt.Errorf("/proc/self/maps: cannot read %q", fields[0])
		}
		if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, uintptr(start), uintptr(end-start), syscall.MADV_DONTNEED); errno != 0 {
			return released, fmt.Errorf("madvise %s: %w", fields[0], errno)
		}
		released += int(end - start)
	}
	return released, sc.Err()
}
