package main

import (
	"os"
	"path/filepath"
	"testing"
)

// The SD image's init says "unsynced" until NTP has set the time; only then are
// time triggers trusted. Without the file (any other system) the clock is.
func TestClockSynced(t *testing.T) {
	old := clockStateFile
	defer func() { clockStateFile = old }()
	clockStateFile = filepath.Join(t.TempDir(), "clock")
	if !clockSynced() {
		t.Error("no state file: not trusted")
	}
	os.WriteFile(clockStateFile, []byte("unsynced\n"), 0o644)
	if clockSynced() {
		t.Error("unsynced: trusted")
	}
	os.WriteFile(clockStateFile, []byte("synced\n"), 0o644)
	if !clockSynced() {
		t.Error("synced: not trusted")
	}
}
