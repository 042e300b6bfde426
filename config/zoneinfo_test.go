package config

import (
	"archive/zip"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The embedded database is Go's, zone for zone: when a Go upgrade brings new
// zone data, this fails until `go generate ./config` is run.
func TestZoneinfoMatchesGo(t *testing.T) {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Skipf("go env GOROOT: %v", err)
	}
	z, err := zip.OpenReader(filepath.Join(strings.TrimSpace(string(out)), "lib", "time", "zoneinfo.zip"))
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	for _, f := range z.File {
		r, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		want, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		got, ok, err := embeddedZone(f.Name)
		if err != nil || !ok || string(got) != string(want) {
			t.Errorf("%s: embedded %d bytes (found %v, err %v), Go has %d: run go generate ./config", f.Name, len(got), ok, err, len(want))
		}
	}
	if len(z.File) < 400 {
		t.Errorf("Go's zoneinfo.zip has only %d zones", len(z.File))
	}
}

// A board without /usr/share/zoneinfo (the SD image) still resolves zones.
func TestLoadZoneWithoutSystemZones(t *testing.T) {
	noSystem := func(name string) (*time.Location, error) {
		return nil, errors.New("unknown time zone " + name)
	}
	loc, err := loadZone("Europe/Berlin", noSystem)
	if err != nil {
		t.Fatal(err)
	}
	summer := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC).In(loc)
	winter := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC).In(loc)
	if _, off := summer.Zone(); off != 2*3600 {
		t.Errorf("Berlin in July: offset %d s, want 7200", off)
	}
	if name, off := winter.Zone(); off != 3600 || name != "CET" {
		t.Errorf("Berlin in January: %s %d s, want CET 3600", name, off)
	}
	if loc.String() != "Europe/Berlin" {
		t.Errorf("name %q", loc.String())
	}
	// A link (US/Pacific is America/Los_Angeles) shares its target's bytes.
	if _, err := loadZone("US/Pacific", noSystem); err != nil {
		t.Error(err)
	}
	if _, err := loadZone("Mars/Olympus", noSystem); err == nil || err.Error() != "unknown time zone Mars/Olympus" {
		t.Errorf("unknown zone: %v, want the system's error", err)
	}
	// A name that is an index line's prefix or has spaces is no zone.
	for _, name := range []string{"Europe", "Europe/Berlin 0 1", "", "../etc/passwd"} {
		if _, ok, err := embeddedZone(name); ok || err != nil {
			t.Errorf("embeddedZone(%q) = %v, %v; want not found", name, ok, err)
		}
	}
}

// The system's zone files come first: the embedded copy is not even opened.
func TestLoadZonePrefersSystem(t *testing.T) {
	calls := 0
	loc, err := loadZone("Europe/Berlin", func(name string) (*time.Location, error) {
		calls++
		return time.FixedZone("from-system", 0), nil
	})
	if err != nil || loc.String() != "from-system" || calls != 1 {
		t.Errorf("got %v, %v after %d calls", loc, err, calls)
	}
}
