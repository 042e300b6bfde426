package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawedge/clawedge/update"
)

// The daemon's pairing lines on the boot partition: a code is written with
// its expiry, readable by its owner only where the file system keeps modes;
// a new code overwrites it; an empty line removes it; a line that is not a
// code and a time writes nothing.
func TestPairingFile(t *testing.T) {
	boot := t.TempDir()
	path := filepath.Join(boot, update.PairingFile)
	if err := pairingLine(boot, "12345678 2026-12-01T10:00:00Z"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(b), "    12345678\n") || !strings.Contains(string(b), "before 2026-12-01 10:00 UTC") {
		t.Fatalf("the file: %q %v", b, err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode().Perm())
	}
	if err := pairingLine(boot, "87654321 2026-12-02T10:00:00Z"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); strings.Contains(string(b), "12345678") || !strings.Contains(string(b), "87654321") {
		t.Errorf("not overwritten: %q", b)
	}
	for _, bad := range []string{"1234 2026-12-02T10:00:00Z", "abcdefgh 2026-12-02T10:00:00Z", "12345678", "12345678 tomorrow", "12345678 2026-12-02T10:00:00Z\x1b[2J"} {
		if err := pairingLine(boot, bad); err == nil {
			t.Errorf("%q taken", bad)
		}
	}
	if b, _ := os.ReadFile(path); !strings.Contains(string(b), "87654321") {
		t.Errorf("a refused line changed the file: %q", b)
	}
	if err := pairingLine(boot, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("not removed: %v", err)
	}
	if err := pairingLine(boot, ""); err != nil {
		t.Errorf("removing twice: %v", err)
	}
}

// FuzzPairingLine: a line on the notify socket (writable by all) never
// panics, and what reaches the card is a code of 8 digits and a time.
func FuzzPairingLine(f *testing.F) {
	f.Add("12345678 2026-12-01T10:00:00Z")
	f.Add("")
	f.Add("1234567 x")
	f.Add("12345678 2026-12-01T10:00:00+02:00 extra")
	boot := f.TempDir()
	f.Fuzz(func(t *testing.T, value string) {
		path := filepath.Join(boot, update.PairingFile)
		os.Remove(path)
		if err := pairingLine(boot, value); err != nil {
			if _, serr := os.Stat(path); serr == nil {
				t.Fatalf("%q refused (%v) but a file was written", value, err)
			}
			return
		}
		b, err := os.ReadFile(path)
		if value == "" {
			if err == nil {
				t.Fatalf("an empty line wrote %q", b)
			}
			return
		}
		code, _, _ := strings.Cut(value, " ")
		if len(code) != 8 || strings.Trim(code, "0123456789") != "" || !strings.Contains(string(b), "    "+code+"\n") {
			t.Fatalf("%q wrote %q", value, b)
		}
	})
}
