package daemon

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/clawedge/clawedge/grammar"
)

func rssFileKiB(t *testing.T) int {
	t.Helper()
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "RssFile:"); ok {
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			if err != nil {
				t.Fatalf("RssFile: %q", v)
			}
			return n
		}
	}
	t.Fatal("no RssFile in /proc/self/status")
	return 0
}

// TestReleaseStartupPages: the executable's read-only pages leave this
// process's RSS, and the code they hold still runs afterwards (it maps back
// in on use); the writable data is untouched (a package variable keeps its
// value). Under -race the test binary is externally linked, with relocated
// read-only pointers (RELRO) the release must leave alone: when it did not,
// the binary crashed at exit (racefini jumped to 0), so a clean exit of this
// package's race run is the rest of the check.
func TestReleaseStartupPages(t *testing.T) {
	before := rssFileKiB(t)
	n, err := releaseStartupPages()
	if err != nil {
		t.Fatal(err)
	}
	after := rssFileKiB(t)
	if n < 1<<20 {
		t.Errorf("released %d bytes of mappings, want the executable's text and rodata (MBs)", n)
	}
	if after >= before {
		t.Errorf("RssFile %d KiB after, %d KiB before: nothing left the RSS", after, before)
	}
	t.Logf("RssFile %d -> %d KiB (%d bytes of mappings)", before, after, n)
	if ClockStateFile != "/run/clawedge-clock" {
		t.Errorf("package data lost: ClockStateFile %q", ClockStateFile)
	}
	runtime.GC() // the collector walks stacks through the pclntab just released
	cmd, err := grammar.Parse(`@gpio/write{pin="led";value=1}`, grammar.ParseOptions{})
	if err != nil || len(cmd.Stages) != 1 {
		t.Errorf("parsing after the release: %+v, %v", cmd, err)
	}
}
