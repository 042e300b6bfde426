package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/clawedge/clawedge/internal/atomicfile"
)

// pickConfig returns the config clawedge runs with. A clawedge.yaml on the
// boot partition (written from any PC) is checked with `clawedge config
// check` and, if valid, copied to /perm, where it stays in force until the
// next one; an invalid one is reported and the last good config is kept. With
// nothing on /perm the image's default is used.
func pickConfig() string {
	return pickConfigIn(bootConfig, permConfig, defaultConfig, checkConfig)
}

func pickConfigIn(boot, perm, def string, check func(string) ([]byte, error)) string {
	if data, err := os.ReadFile(boot); err == nil {
		if out, err := check(boot); err != nil {
			logf("%s is not valid, keeping the previous config:\n%s", boot, bytes.TrimSpace(out))
		} else if old, _ := os.ReadFile(perm); !bytes.Equal(old, data) {
			if err := writeAtomic(perm, data, 0o600); err != nil {
				logf("saving %s to %s: %v", boot, perm, err)
				return boot
			}
			logf("new config from %s saved to %s", boot, perm)
		}
	}
	if _, err := os.Stat(perm); err == nil {
		return perm
	}
	return def
}

func checkConfig(path string) ([]byte, error) {
	return exec.Command(clawedgeBin, "config", "check", path).CombinedOutput()
}

// writeAtomic replaces path with data so that a power cut leaves the old
// file or the new one, never half of one.
func writeAtomic(path string, data []byte, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return err
	}
	return atomicfile.WriteFile(path, data, mode)
}
