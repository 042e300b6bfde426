package main

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// The generic netlink controller of the machine running the test answers
// for itself ("nlctrl", always id 16) and refuses a family that is not there:
// the same request and parser init uses to see that nl80211 answers.
func TestGenlFamily(t *testing.T) {
	id, err := genlFamily("nlctrl")
	if err != nil {
		t.Skipf("no generic netlink here: %v", err)
	}
	if id != unix.GENL_ID_CTRL {
		t.Fatalf("nlctrl is family %d, want %d", id, unix.GENL_ID_CTRL)
	}
	if _, err := genlFamily("no-such-family"); !errors.Is(err, unix.ENOENT) {
		t.Fatalf("a missing family: %v, want ENOENT", err)
	}
}

func TestParseFamilyIDBad(t *testing.T) {
	// A well-formed answer: family id 16 after a 4-byte attribute to skip.
	good := []byte{32, 0, 0, 0, 16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 0, 0, 6, 0, 1, 0, 16, 0, 0, 0, 8, 0, 2, 0}
	if id, err := parseFamilyID(good); err != nil || id != 16 {
		t.Fatalf("parseFamilyID = %d, %v; want 16", id, err)
	}
	noID := genlGetFamily("x")[:20] // the headers only
	noID[0] = 20
	for name, b := range map[string][]byte{
		"empty":     nil,
		"too long":  {0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
		"no id":     noID,
		"short err": {16, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
	} {
		if _, err := parseFamilyID(b); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func FuzzParseFamilyID(f *testing.F) {
	f.Add(genlGetFamily("nl80211"))
	f.Fuzz(func(t *testing.T, b []byte) {
		parseFamilyID(b) // must not panic
	})
}

// Module names treat - and _ alike, and a module not shipped is a clear error.
func TestFindModule(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "kernel/drivers/brcmfmac/wcc/brcmfmac-wcc.ko")
	os.MkdirAll(filepath.Dir(p), 0o755)
	os.WriteFile(p, nil, 0o644)
	if got, err := findModule(dir, "brcmfmac_wcc"); err != nil || got != p {
		t.Fatalf("findModule = %q, %v; want %q", got, err, p)
	}
	if _, err := findModule(dir, "brcmfmac-cyw"); err == nil {
		t.Fatal("a missing module: no error")
	}
}
