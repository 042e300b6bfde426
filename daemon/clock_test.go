package daemon

import (
	"os"
	"path/filepath"
	"testing"
)

// The SD image's init says "unsynced" until NTP has set the time; only then are
// time triggers trusted. Without the file (any other system) the clock is.
func TestClockSynced(t *testing.T) {
	old := ClockStateFile
	defer func() { ClockStateFile = old }()
	ClockStateFile = filepath.Join(t.TempDir(), "clock")
	if !ClockSynced() {
		t.Error("no state file: not trusted")
	}
	os.WriteFile(ClockStateFile, []byte("unsynced\n"), 0o644)
	if ClockSynced() {
		t.Error("unsynced: trusted")
	}
	os.WriteFile(ClockStateFile, []byte("synced\n"), 0o644)
	if !ClockSynced() {
		t.Error("synced: not trusted")
	}
}
