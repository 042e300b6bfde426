package daemon

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
// for code that never runs again. MADV_DONTNEED on a mapping of the
// executable drops only this process's page-table entries: the pages stay in
// the page cache (nothing is read from the SD card again), and whatever the
// daemon runs later maps back in with a minor fault.
//
// Only a mapping whose every page is still the file's is released: not a
// writable one (.data, .bss), and not a read-only one holding pages this
// process wrote before they became read-only (RELRO: the relocated pointers
// of an externally linked build, such as a race-detector test binary;
// MADV_DONTNEED would put the file's unrelocated bytes back under them). The
// kernel counts such pages as Anonymous in /proc/self/smaps.
//
// It returns the bytes of mappings released, for the log.
func releaseStartupPages() (int, error) {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return 0, err
	}
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var clean []span
	var cur *span // the executable's read-only mapping being read, if any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if fields := strings.Fields(line); len(fields) >= 5 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":") {
			// A mapping's header: start-end perms offset dev inode [path].
			cur = nil
			if len(fields) >= 6 && fields[5] == exe && !strings.Contains(fields[1], "w") {
				s, err := parseSpan(fields[0])
				if err != nil {
					return 0, err
				}
				clean = append(clean, s)
				cur = &clean[len(clean)-1]
			}
			continue
		}
		if v, ok := strings.CutPrefix(line, "Anonymous:"); ok && cur != nil && strings.TrimSpace(v) != "0 kB" {
			cur.written = true
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	released := 0
	for _, s := range clean {
		if s.written {
			continue
		}
		if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, s.start, s.end-s.start, syscall.MADV_DONTNEED); errno != 0 {
			return released, fmt.Errorf("madvise %#x-%#x: %w", s.start, s.end, errno)
		}
		released += int(s.end - s.start)
	}
	return released, nil
}

// span is one mapping of the executable; written when some of its pages are
// this process's own copies.
type span struct {
	start, end uintptr
	written    bool
}

func parseSpan(r string) (span, error) {
	lo, hi, _ := strings.Cut(r, "-")
	start, err1 := strconv.ParseUint(lo, 16, 64)
	end, err2 := strconv.ParseUint(hi, 16, 64)
	if err1 != nil || err2 != nil || end <= start {
		return span{}, fmt.Errorf("/proc/self/smaps: cannot read the range %q", r)
	}
	return span{start: uintptr(start), end: uintptr(end)}, nil
}
