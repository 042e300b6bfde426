package localmodel

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestFindRunner(t *testing.T) {
	dir := t.TempDir()
	bin, other := filepath.Join(dir, "bin"), filepath.Join(dir, "path")
	os.MkdirAll(bin, 0o755)
	os.MkdirAll(other, 0o755)
	exe := filepath.Join(bin, "clawedge")
	os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755)
	onPath := filepath.Join(other, RunnerName)
	os.WriteFile(onPath, []byte("#!/bin/sh\n"), 0o755)
	look := func(name string) (string, error) {
		if name != RunnerName {
			t.Errorf("looked up %q", name)
		}
		return onPath, nil
	}
	notFound := func(name string) (string, error) { return "", &exec.Error{Name: name, Err: exec.ErrNotFound} }

	// Nothing beside the executable: PATH.
	if got, err := findRunner(exe, look); err != nil || got != onPath {
		t.Errorf("PATH: %q, %v", got, err)
	}
	// Not executable beside it: still PATH.
	beside := filepath.Join(bin, RunnerName)
	os.WriteFile(beside, []byte("x"), 0o644)
	if got, _ := findRunner(exe, look); got != onPath {
		t.Errorf("non-executable file beside the core was chosen: %q", got)
	}
	// Beside the executable wins, also through a symlink to it.
	os.Chmod(beside, 0o755)
	if got, err := findRunner(exe, look); err != nil || got != beside {
		t.Errorf("beside: %q, %v", got, err)
	}
	link := filepath.Join(other, "clawedge")
	if err := os.Symlink(exe, link); err != nil {
		t.Fatal(err)
	}
	if got, err := findRunner(link, notFound); err != nil || got != beside {
		t.Errorf("through a symlink: %q, %v", got, err)
	}
	// Nowhere: the error says where it looked.
	os.Remove(beside)
	if _, err := findRunner(exe, notFound); err == nil || !strings.Contains(err.Error(), beside) || !strings.Contains(err.Error(), "PATH") {
		t.Errorf("nowhere: %v", err)
	}
	// The exported form runs.
	if _, err := FindRunner(); err != nil && !strings.Contains(err.Error(), "not found") {
		t.Error(err)
	}
}
