package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/clawedge/clawedge/config"
	"github.com/clawedge/clawedge/daemon"
	"github.com/clawedge/clawedge/doctor"
	"github.com/clawedge/clawedge/memory"
	"github.com/clawedge/clawedge/tools"
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

// `clawedge memory share ID` marks an entry shared in MEMORY.md (who shared
// it, a word a person can read and remove), and the daemon's memory/search
// then finds it for a principal whose entry it is not; `unshare` takes the
// mark away, and the entry is its owner's again. Ids that are not ids change
// nothing.
func TestMemoryShareCLI(t *testing.T) {
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "clawedge.yaml")
	os.WriteFile(cfgPath, []byte("data_dir: "+filepath.Join(dir, "data")+"\npolicy: {owners: [\"telegram:42\"]}\n"), 0o600)
	ws := filepath.Join(dir, "data", "workspace")
	os.MkdirAll(ws, 0o700)
	path := filepath.Join(ws, "MEMORY.md")
	os.WriteFile(path, []byte(memory.Header+
		"- The alarm code is 4321. <!-- #1 2026-11-20 person telegram:42 @telegram -->\n- The bins go out on Tuesday.\n"), 0o600)
	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	w, err := daemon.OpenWorkspace(cfg) // as the daemon opens it
	if err != nil {
		t.Fatal(err)
	}
	operator := tools.Caller{Channel: "web", User: "web:phone", Actor: tools.Person}
	owner := tools.Caller{Channel: "telegram", User: "telegram:42", Actor: tools.Person}
	found := func(c tools.Caller, q string) int {
		t.Helper()
		es, err := w.SearchAs(c, q, 5)
		if err != nil {
			t.Fatal(err)
		}
		return len(es)
	}
	if found(operator, "alarm code") != 0 || found(operator, "bins") != 0 || found(owner, "bins") != 1 {
		t.Fatalf("before sharing: the operator finds another's entry, or the owner (policy.owners) not the board's")
	}
	if _, _, err := clawedgeIn(t, cfgPath, "memory", "share", "1", "x"); err == nil {
		t.Error("share of a word")
	}
	if out, _, err := clawedgeIn(t, cfgPath, "memory", "share", "#1"); err != nil || !strings.HasPrefix(out, "shared: #1 ") || !strings.Contains(out, "(person telegram:42, shared) The alarm code is 4321.") {
		t.Fatalf("share: %q %v", out, err)
	}
	b, _ := os.ReadFile(path)
	uid := "uid:" + strconv.Itoa(os.Getuid())
	if !strings.Contains(string(b), "- The alarm code is 4321. <!-- #1 2026-11-20 person telegram:42 @telegram shared:"+uid+" -->\n") {
		t.Errorf("MEMORY.md after share:\n%s", b)
	}
	if found(operator, "alarm code") != 1 || found(owner, "alarm code") != 1 {
		t.Error("the shared entry is not found by both")
	}
	if out, _, err := clawedgeIn(t, cfgPath, "memory", "list"); err != nil || !strings.Contains(out, "#1 2026-11-20 (person telegram:42, shared) ") {
		t.Errorf("list: %q %v", out, err)
	}
	if _, _, err := clawedgeIn(t, cfgPath, "memory", "share", "9"); err == nil || !strings.Contains(err.Error(), "no such entry") {
		t.Errorf("share of no entry: %v", err)
	}
	if out, _, err := clawedgeIn(t, cfgPath, "memory", "unshare", "1"); err != nil || !strings.HasPrefix(out, "no longer shared: #1 ") || strings.Contains(out, "shared)") {
		t.Fatalf("unshare: %q %v", out, err)
	}
	if b, _ := os.ReadFile(path); strings.Contains(string(b), "shared:") {
		t.Errorf("MEMORY.md after unshare:\n%s", b)
	}
	if found(operator, "alarm code") != 0 {
		t.Error("unshared, the operator still finds it")
	}
}

// doctor warns when the persona and user files do not fit the local model's
// budget, and when MEMORY.md has lines it cannot read as written.
func TestDoctorMemory(t *testing.T) {
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.Models.Local = &config.LocalModel{Path: "m.gguf", Context: 4096}
	c := doctor.Memory(cfg)
	if !c.OK || c.Warn || !strings.Contains(c.Info, "0 entries") {
		t.Errorf("empty workspace: %+v", c)
	}
	ws := daemon.WorkspaceDir(cfg)
	os.MkdirAll(ws, 0o700)
	os.WriteFile(filepath.Join(ws, "SOUL.md"), []byte(strings.Repeat("You are a kind and patient helper. ", 60)), 0o600)
	c = doctor.Memory(cfg)
	if !c.OK || !c.Warn || !strings.Contains(c.Info, "over the local model's budget of 400") {
		t.Errorf("a long persona: %+v", c)
	}
	cfg.Models.Local = nil
	if c = doctor.Memory(cfg); c.Warn {
		t.Errorf("no local model, no local budget: %+v", c)
	}
	os.WriteFile(filepath.Join(ws, "MEMORY.md"), []byte("- a <!-- #1 2026-01-01 nobody -->\n"), 0o600)
	if c = doctor.Memory(cfg); !c.Warn || !strings.Contains(c.Info, `"nobody" is not a source`) {
		t.Errorf("a bad line: %+v", c)
	}
	os.WriteFile(filepath.Join(ws, "MEMORY.md"), bytes.Repeat([]byte("- x\n"), 2<<20), 0o600)
	if c = doctor.Memory(cfg); c.OK || !strings.Contains(c.Info, "over the limit") {
		t.Errorf("an oversized file: %+v", c)
	}
}
