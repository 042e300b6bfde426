package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawedge/clawedge/config"
)

// clawedgeIn runs a clawedge command in this process with cfgPath.
func clawedgeIn(t *testing.T, cfgPath string, args ...string) (string, string, error) {
	t.Helper()
	root := newRoot()
	var o, e bytes.Buffer
	root.SetOut(&o)
	root.SetErr(&e)
	root.SetArgs(append(args, "--config", cfgPath))
	err := root.Execute()
	return o.String(), e.String(), err
}

// `clawedge memory`: add, search, list, rm and rebuild on the workspace's
// MEMORY.md, which a hand edit changes under them.
func TestMemoryCLI(t *testing.T) {
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "clawedge.yaml")
	os.WriteFile(cfgPath, []byte("data_dir: "+filepath.Join(dir, "data")+"\n"), 0o600)
	if out, _, err := clawedgeIn(t, cfgPath, "memory", "add", "The", "greenhouse", "heater", "comes", "on", "below", "5", "degrees"); err != nil || !strings.HasPrefix(out, "remembered #1 ") || !strings.Contains(out, "(person uid:") {
		t.Fatalf("add: %q %v", out, err)
	}
	clawedgeIn(t, cfgPath, "memory", "add", "Bins go out on Tuesday evening")
	if out, _, err := clawedgeIn(t, cfgPath, "memory", "search", "when", "does", "the", "heating", "in", "the", "greenhouse", "start"); err != nil || !strings.HasPrefix(out, "#1 ") || strings.Contains(out, "Bins") {
		t.Errorf("search: %q %v", out, err)
	}
	path := filepath.Join(dir, "data", "workspace", "MEMORY.md")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(path, append(b, []byte("- The recycling goes out on Thursday\n- bad <!-- #zz -->\n")...), 0o600)
	out, errOut, err := clawedgeIn(t, cfgPath, "memory", "rebuild")
	if err != nil || !strings.HasPrefix(out, "4 entries") || !strings.Contains(errOut, `warning: MEMORY.md:`) {
		t.Errorf("rebuild: %q %q %v", out, errOut, err)
	}
	if out, _, _ := clawedgeIn(t, cfgPath, "memory", "search", "recycling"); !strings.Contains(out, "(file) The recycling goes out on Thursday") {
		t.Errorf("the hand-written line: %q", out)
	}
	if out, _, err := clawedgeIn(t, cfgPath, "memory", "rm", "#2"); err != nil || !strings.HasPrefix(out, "forgot #2 ") {
		t.Errorf("rm: %q %v", out, err)
	}
	if _, _, err := clawedgeIn(t, cfgPath, "memory", "rm", "two"); err == nil {
		t.Error("rm of a word")
	}
	if out, _, _ := clawedgeIn(t, cfgPath, "memory", "list"); strings.Count(out, "\n") != 3 || strings.Contains(out, "Bins") {
		t.Errorf("list: %q", out)
	}
}

// doctor warns when the persona and user files do not fit the local model's
// budget, and when MEMORY.md has lines it cannot read as written.
func TestDoctorMemory(t *testing.T) {
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.Models.Local = &config.LocalModel{Path: "m.gguf", Context: 4096}
	c := memoryCheck(cfg)
	if !c.ok || c.warn || !strings.Contains(c.info, "0 entries") {
		t.Errorf("empty workspace: %+v", c)
	}
	ws := workspaceDir(cfg)
	os.MkdirAll(ws, 0o700)
	os.WriteFile(filepath.Join(ws, "SOUL.md"), []byte(strings.Repeat("You are a kind and patient helper. ", 60)), 0o600)
	c = memoryCheck(cfg)
	if !c.ok || !c.warn || !strings.Contains(c.info, "over the local model's budget of 400") {
		t.Errorf("a long persona: %+v", c)
	}
	cfg.Models.Local = nil
	if c = memoryCheck(cfg); c.warn {
		t.Errorf("no local model, no local budget: %+v", c)
	}
	os.WriteFile(filepath.Join(ws, "MEMORY.md"), []byte("- a <!-- #1 2026-01-01 nobody -->\n"), 0o600)
	if c = memoryCheck(cfg); !c.warn || !strings.Contains(c.info, `"nobody" is not a source`) {
		t.Errorf("a bad line: %+v", c)
	}
	os.WriteFile(filepath.Join(ws, "MEMORY.md"), bytes.Repeat([]byte("- x\n"), 2<<20), 0o600)
	if c = memoryCheck(cfg); c.ok || !strings.Contains(c.info, "over the limit") {
		t.Errorf("an oversized file: %+v", c)
	}
}
