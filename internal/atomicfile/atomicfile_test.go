package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// A write stopped at each of its steps leaves the old file or the new one,
// and no temporary file once it returned; the new file has its permission.
func TestWriteStoppedAtEachStep(t *testing.T) {
	for _, at := range []string{"created", "written", "synced", "renamed", ""} {
		dir := t.TempDir()
		p := filepath.Join(dir, "config.yaml")
		os.WriteFile(p, []byte("old"), 0o644)
		restore := InjectFault(func(_, step string) error {
			if step == at {
				return errors.New("killed")
			}
			return nil
		})
		err := WriteFile(p, []byte("new content"), 0o600)
		restore()
		got, _ := os.ReadFile(p)
		switch at {
		case "created", "written", "synced":
			if err == nil || string(got) != "old" {
				t.Errorf("stopped at %s: %v, file %q; want an error and the old file", at, err, got)
			}
		default:
			if err != nil || string(got) != "new content" {
				t.Errorf("stopped at %q: %v, file %q; want the new file", at, err, got)
			}
			if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
				t.Errorf("permission %v", fi.Mode().Perm())
			}
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 1 {
			t.Errorf("stopped at %q: left %v", at, entries)
		}
	}
}

func TestCopyIsWholeAndKeepsMode(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "a")
	os.WriteFile(src, []byte("keep me"), 0o640)
	if err := Copy(src, src+".bak"); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(src + ".bak")
	fi, _ := os.Stat(src + ".bak")
	if string(got) != "keep me" || fi.Mode().Perm() != 0o640 {
		t.Fatalf("%q %v", got, fi.Mode())
	}
	if err := WriteFile(filepath.Join(dir, "missing", "x"), nil, 0o644); err == nil {
		t.Fatal("a write into a missing folder succeeded")
	}
}
