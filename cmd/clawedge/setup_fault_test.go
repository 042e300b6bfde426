package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawedge/clawedge/internal/atomicfile"
)

// TestSetupKilledAtEveryStep: `clawedge setup` stopped at each step of its
// writes in turn (the backup, the secrets, the config: created, written,
// flushed, renamed) leaves the old config or the new one, whole, never none;
// a backup that exists is the old config whole.
func TestSetupKilledAtEveryStep(t *testing.T) {
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "clawedge.yaml")
	setup := func(pins string) error {
		root := newRoot()
		root.SetArgs([]string{"setup", "--yes", "--board", "sim", "--pins", pins, "--config", cfgPath})
		root.SetOut(io.Discard)
		root.SetErr(io.Discard)
		root.SetIn(strings.NewReader(""))
		return root.ExecuteContext(context.Background())
	}
	if err := setup("led=17:out"); err != nil {
		t.Fatal(err)
	}
	// The old config: setup's own, with a line a person added, which the
	// next run (it writes every file from the values) does not keep.
	orig, _ := os.ReadFile(cfgPath)
	old := append(orig, "# a line added by hand\n"...)
	os.WriteFile(cfgPath, old, 0o644)
	// The new config, as a run that is not stopped writes it; then back.
	steps := 0
	restore := atomicfile.InjectFault(func(string, string) error { steps++; return nil })
	if err := setup("lamp=22:out"); err != nil {
		t.Fatal(err)
	}
	restore()
	fresh, _ := os.ReadFile(cfgPath)
	if bytes.Equal(old, fresh) || steps < 8 { // a backup and a config, 4 steps each
		t.Fatalf("the second run changed nothing, or wrote in %d steps", steps)
	}
	for k := 1; k <= steps; k++ {
		os.WriteFile(cfgPath, old, 0o644)
		os.Remove(cfgPath + ".bak")
		n := 0
		var at string
		restore := atomicfile.InjectFault(func(path, step string) error {
			if n++; n == k {
				at = fmt.Sprintf("%s %s", filepath.Base(path), step)
				return errors.New("killed")
			}
			return nil
		})
		setup("lamp=22:out")
		restore()
		got, err := os.ReadFile(cfgPath)
		if err != nil || !bytes.Equal(got, old) && !bytes.Equal(got, fresh) {
			t.Fatalf("stopped at step %d (%s): the config is %v, neither the old nor the new one:\n%s", k, at, err, got)
		}
		if bak, err := os.ReadFile(cfgPath + ".bak"); err == nil && !bytes.Equal(bak, old) {
			t.Fatalf("stopped at step %d (%s): the backup is not the old config whole:\n%s", k, at, bak)
		}
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if strings.Contains(e.Name(), ".tmp-") {
				t.Fatalf("stopped at step %d (%s): left %s", k, at, e.Name())
			}
		}
	}
}
