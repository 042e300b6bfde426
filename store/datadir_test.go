package store

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestOwnershipUnsafe(t *testing.T) {
	cases := []struct {
		o          Ownership
		want       string // "" = safe
		chmodFixes bool
	}{
		{Ownership{Path: "/d", Mode: fs.ModeDir | 0o700, Owner: 1000, UID: 1000}, "", false},
		{Ownership{Path: "/d", Mode: fs.ModeDir | 0o755, Owner: 1000, UID: 1000}, "", false},
		{Ownership{Path: "/d", Mode: fs.ModeDir | 0o777, Owner: 1000, UID: 1000}, "data_dir /d is writable by group or others (mode -rwxrwxrwx)", true},
		{Ownership{Path: "/d", Mode: fs.ModeDir | 0o770, Owner: 1000, UID: 1000}, "run: chmod go-w /d", true},
		{Ownership{Path: "/d", Mode: fs.ModeDir | 0o700, Owner: 1001, UID: 1000}, "data_dir /d belongs to uid 1001, not to the user clawedge runs as (uid 1000)", false},
		{Ownership{Path: "/d", Mode: fs.ModeDir | 0o700, Owner: 1001, UID: 0}, "sudo chown 0 /d", false},
		{Ownership{Path: "/d/clawedge.db", Mode: 0o666, Owner: 1000, UID: 1000}, "store file /d/clawedge.db is writable", true},
	}
	for _, c := range cases {
		err, fixes := c.o.Unsafe()
		switch {
		case c.want == "" && err != nil, c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%+v: %v, want %q", c.o, err, c.want)
		case err != nil && (!errors.Is(err, ErrUnsafeDir) || fixes != c.chmodFixes):
			t.Errorf("%+v: %v is ErrUnsafeDir %v, chmod repairs %v", c.o, err, errors.Is(err, ErrUnsafeDir), fixes)
		}
	}
}

// A data_dir of ours that others may write is repaired, and said so; one of
// another user is refused (with a real chown when the test runs as root).
func TestOpenChecksDataDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o777)
	var warned []string
	s, err := Open(dir, Options{Warn: func(m string) { warned = append(warned, m) }})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o755 || len(warned) != 1 || !strings.Contains(warned[0], "made it -rwxr-xr-x") {
		t.Errorf("mode %v after Open, warnings %q", fi.Mode().Perm(), warned)
	}
	if os.Geteuid() != 0 {
		t.Skip("chown to another user needs root")
	}
	if err := os.Chown(dir, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir, Options{}); !errors.Is(err, ErrUnsafeDir) || !strings.Contains(err.Error(), "belongs to uid 65534") {
		t.Errorf("Open of another user's data_dir: %v", err)
	}
}

// A store that is empty or not a store is kept aside, loudly, and a new one starts.
func TestOpenSetsCorruptStoreAside(t *testing.T) {
	for name, content := range map[string][]byte{"empty": {}, "garbage": []byte(strings.Repeat("not a bbolt file ", 2000))} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, FileName)
			os.WriteFile(path, content, 0o600)
			if name == "garbage" {
				if _, err := Open(dir, Options{ReadOnly: true}); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), ".corrupt-TIME") {
					t.Errorf("read-only open of a corrupted store: %v", err)
				}
			}
			var warned []string
			s, err := Open(dir, Options{Warn: func(m string) { warned = append(warned, m) }})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if _, err := s.Intent("me", "test", "@x/y{}"); err != nil {
				t.Fatal(err)
			}
			aside, _ := filepath.Glob(path + ".corrupt-*")
			if len(aside) != 1 || len(warned) != 1 || !strings.Contains(warned[0], "STORE CORRUPTED") || !strings.Contains(warned[0], aside[0]) {
				t.Fatalf("kept aside %q, warnings %q", aside, warned)
			}
			if kept, _ := os.ReadFile(aside[0]); string(kept) != string(content) {
				t.Error("the file kept aside is not the old store")
			}
		})
	}
}

// A store file removed or replaced under the process that has it open is noticed
// before the next write, which refuses; Lost is told once.
func TestStoreFileLost(t *testing.T) {
	for _, how := range []string{"removed", "replaced"} {
		t.Run(how, func(t *testing.T) {
			dir := t.TempDir()
			var lost []error
			s, err := Open(dir, Options{Timeout: time.Second, Lost: func(err error) { lost = append(lost, err) }})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if _, err := s.Intent("me", "test", "@x/y{}"); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, FileName)
			os.Remove(path)
			if how == "replaced" {
				os.WriteFile(path, []byte("forged"), 0o600)
			}
			for range 2 {
				if _, err := s.Intent("me", "test", "@x/y{}"); !errors.Is(err, ErrFileLost) || !strings.Contains(err.Error(), "was "+how) {
					t.Errorf("write after the file was %s: %v", how, err)
				}
			}
			if err := s.Put("ns", "k", []byte("v")); !errors.Is(err, ErrFileLost) {
				t.Errorf("put: %v", err)
			}
			if len(lost) != 1 {
				t.Errorf("Lost told %d times", len(lost))
			}
			if _, err := s.Tail(1); err != nil {
				t.Errorf("reads go on: %v", err)
			}
		})
	}
}

func TestOwnershipUntrusted(t *testing.T) {
	cases := []struct {
		o    Ownership
		want string
	}{
		{Ownership{Path: "/m/x.gguf", Mode: 0o644, Owner: 1000, UID: 1000}, ""},
		{Ownership{Path: "/usr/bin/clawedge-llm", Mode: 0o755, Owner: 0, UID: 1000}, ""},
		{Ownership{Path: "/tmp", Mode: fs.ModeDir | fs.ModeSticky | 0o777, Owner: 0, UID: 1000}, ""},
		{Ownership{Path: "/m", Mode: fs.ModeDir | 0o777, Owner: 1000, UID: 1000}, "/m is writable by group or others (mode -rwxrwxrwx)"},
		{Ownership{Path: "/m/x.gguf", Mode: 0o664, Owner: 1000, UID: 1000}, "run: chmod go-w /m/x.gguf"},
		{Ownership{Path: "/m/x.gguf", Mode: 0o644, Owner: 1001, UID: 1000}, "belongs to uid 1001, neither the user clawedge runs as (uid 1000) nor root"},
	}
	for _, c := range cases {
		err := c.o.Untrusted("x")
		if c.want == "" && err != nil || c.want != "" && (!errors.Is(err, ErrUnsafeDir) || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%+v: %v, want %q", c.o, err, c.want)
		}
	}
}

// The model runner and model files: a folder others may write makes them untrusted.
func TestCheckTrusted(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "models")
	os.Mkdir(dir, 0o755)
	model := filepath.Join(dir, "m.gguf")
	os.WriteFile(model, []byte("GGUF"), 0o644)
	link := filepath.Join(t.TempDir(), "link.gguf")
	os.Symlink(model, link)
	if err := CheckTrusted(link); err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o777)
	if err := CheckTrusted(link); !errors.Is(err, ErrUnsafeDir) || !strings.Contains(err.Error(), dir+" is writable by group or others") {
		t.Errorf("model in a 0777 folder, through a symlink: %v", err)
	}
}
