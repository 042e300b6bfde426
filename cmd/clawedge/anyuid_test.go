package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// Code that is not ours (MCP servers, skills' programs, sys/exec) runs with
// a uid of its own under a root daemon: a file it runs or reads must be open
// to every uid, through every folder above it. The repository's may not be
// (a clone under a 0700 home); openToAll gives a path that is.

var (
	copiesMu sync.Mutex
	copies   = map[string]string{}
	copyRoot string
)

// openToAll returns path when every uid may reach it, else a copy of it in a
// folder open to all, made once per test binary.
func openToAll(t *testing.T, path string) string {
	t.Helper()
	if reachableByAll(path) {
		return path
	}
	copiesMu.Lock()
	defer copiesMu.Unlock()
	if c, ok := copies[path]; ok {
		return c
	}
	if copyRoot == "" {
		d, err := os.MkdirTemp("", "clawedge-open")
		if err != nil {
			t.Fatal(err)
		}
		os.Chmod(d, 0o755)
		copyRoot = d
	}
	dst := filepath.Join(copyRoot, filepath.Base(path))
	if out, err := exec.Command("cp", "-a", path, dst).CombinedOutput(); err != nil {
		t.Fatalf("copying %s where every uid may read it: %v: %s", path, err, out)
	}
	copies[path] = dst
	return dst
}

// writableByAll is a new folder any uid may write in (a confined server's
// output, say).
func writableByAll(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "clawedge-w")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(d, 0o777)
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// reachableByAll says whether every uid may pass through each folder down to
// path and read it.
func reachableByAll(path string) bool {
	for p := path; ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err != nil || fi.Mode().Perm()&0o005 != 0o005 {
			return false
		}
		if p == "/" {
			return true
		}
	}
}
