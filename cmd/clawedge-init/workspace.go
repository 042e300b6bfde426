package main

// This file: the workspace files a person drops on the boot partition from a
// PC (workspace/SOUL.md, USER.md, MEMORY.md), taken over into clawedge's
// workspace on /perm at boot (docs/memory.md).

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/goccy/go-yaml"
)

// bootWorkspace is where a person puts workspace files on the FAT partition.
const bootWorkspace = "/boot/workspace"

// maxWorkspaceFile bounds a file taken from the boot partition (MEMORY.md's
// default bound; clawedge reports a larger one, and it is not copied).
const maxWorkspaceFile = 4 << 20

// workspaceFiles are the files taken over; nothing else on the partition is.
var workspaceFiles = []string{"SOUL.md", "USER.md", "MEMORY.md"}

// takeWorkspace copies the boot partition's workspace files into the
// workspace of the config clawedge runs with.
func takeWorkspace(cfgPath string) {
	dataDir, err := dataDirOf(cfgPath)
	if err != nil {
		logf("workspace: %v; files in %s are not taken over", err, bootWorkspace)
		return
	}
	for _, line := range takeWorkspaceIn(bootWorkspace, filepath.Join(dataDir, "workspace")) {
		logf("%s", line)
	}
}

// takeWorkspaceIn takes each file of boot that changed on the partition since
// it was last taken (a copy of what was taken is kept as .boot-NAME), so a
// card put back unchanged does not undo what clawedge saved since. The file
// it replaces is kept as NAME.before-boot: nothing is lost. It returns the
// lines to log.
func takeWorkspaceIn(boot, ws string) []string {
	var out []string
	for _, name := range workspaceFiles {
		data, err := readBounded(filepath.Join(boot, name), maxWorkspaceFile)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			out = append(out, fmt.Sprintf("workspace: %s/%s: %v; not taken over", boot, name, err))
			continue
		}
		seen := filepath.Join(ws, ".boot-"+name)
		if last, err := os.ReadFile(seen); err == nil && bytes.Equal(last, data) {
			continue
		}
		dst := filepath.Join(ws, name)
		kept := ""
		if cur, err := os.ReadFile(dst); err == nil && !bytes.Equal(cur, data) {
			if err := writeAtomic(dst+".before-boot", cur, 0o600); err != nil {
				out = append(out, fmt.Sprintf("workspace: keeping %s: %v; %s not taken over", dst, err, name))
				continue
			}
			kept = " (the one it replaces is kept as " + name + ".before-boot)"
		}
		if err := writeAtomic(dst, data, 0o600); err != nil {
			out = append(out, fmt.Sprintf("workspace: %s: %v", dst, err))
			continue
		}
		if err := writeAtomic(seen, data, 0o600); err != nil {
			out = append(out, fmt.Sprintf("workspace: %s: %v", seen, err))
		}
		out = append(out, fmt.Sprintf("workspace: %s taken from the boot partition into %s%s", name, ws, kept))
	}
	return out
}

// dataDirOf is the data_dir of the config at path, relative to clawedge's
// working directory (stateDir). Only that key is read: the rest may hold
// ${secret:...} references that only clawedge can resolve.
func dataDirOf(path string) (string, error) {
	data, err := readBounded(path, 256<<10)
	if err != nil {
		return "", err
	}
	var c struct {
		DataDir string `yaml:"data_dir"`
	}
	if err := yaml.Unmarshal(data, &c); err != nil {
		return "", fmt.Errorf("%s: %v", path, err)
	}
	dir := c.DataDir
	switch {
	case dir == "":
		dir = "./data" // the config's default
	case bytes.Contains([]byte(dir), []byte("${")):
		return "", fmt.Errorf("%s: data_dir %q names a variable init cannot read", path, dir)
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(stateDir, dir)
	}
	return dir, nil
}

// readBounded reads a file of at most max bytes.
func readBounded(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err == nil && int64(len(data)) > max {
		err = fmt.Errorf("larger than %d bytes", max)
	}
	return data, err
}
