package daemon

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawedge/clawedge/config"
)

// A model another user could replace is not loaded (the runner parses it, and
// runs as clawedge's user).
func TestLocalModelMustBeTrusted(t *testing.T) {
	dir := t.TempDir()
	os.Chmod(dir, 0o777)
	model := filepath.Join(dir, "m.gguf")
	os.WriteFile(model, []byte("GGUF"), 0o644)
	_, err := localClient(&config.LocalModel{Path: model}, newCore(&config.Config{}, Options{}))
	if err == nil || !strings.Contains(err.Error(), "local model: "+model+": "+dir+" is writable by group or others") {
		t.Errorf("err %v", err)
	}
}

func TestMemTotal(t *testing.T) {
	p := filepath.Join(t.TempDir(), "meminfo")
	os.WriteFile(p, []byte("MemFree:  100 kB\nMemTotal:        1897732 kB\n"), 0o600)
	if got := memTotalMB(p); got != 1853 {
		t.Errorf("memTotalMB = %d", got)
	}
	if memTotalMB(filepath.Join(t.TempDir(), "none")) != 0 || runnerMemoryMB(0) != 0 || runnerMemoryMB(512) != 2048 {
		t.Error("unknown memory must mean no limit")
	}
}
