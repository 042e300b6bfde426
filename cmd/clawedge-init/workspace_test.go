package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Workspace files dropped on the boot partition are taken over once each time
// they change there; what they replace is kept; a card put back unchanged
// does not undo what clawedge saved since.
func TestTakeWorkspace(t *testing.T) {
	dir := t.TempDir()
	boot, ws := filepath.Join(dir, "boot"), filepath.Join(dir, "data", "workspace")
	read := func(name string) string { b, _ := os.ReadFile(filepath.Join(ws, name)); return string(b) }
	if got := takeWorkspaceIn(boot, ws); len(got) != 0 {
		t.Errorf("no boot workspace: %q", got)
	}
	os.MkdirAll(boot, 0o755)
	os.WriteFile(filepath.Join(boot, "SOUL.md"), []byte("You are Pip."), 0o644)
	os.WriteFile(filepath.Join(boot, "MEMORY.md"), []byte("- bins on Tuesday\n"), 0o644)
	os.WriteFile(filepath.Join(boot, "notes.txt"), []byte("not a workspace file"), 0o644)
	if got := takeWorkspaceIn(boot, ws); len(got) != 2 || !strings.Contains(got[0], "SOUL.md taken from the boot partition") {
		t.Fatalf("first boot: %q", got)
	}
	if read("SOUL.md") != "You are Pip." || read("MEMORY.md") != "- bins on Tuesday\n" || read("notes.txt") != "" {
		t.Fatal("not taken over")
	}
	// clawedge saves an entry; the next boot with the same card keeps it.
	os.WriteFile(filepath.Join(ws, "MEMORY.md"), []byte("- bins on Tuesday <!-- #1 -->\n- saved later\n"), 0o600)
	if got := takeWorkspaceIn(boot, ws); len(got) != 0 || !strings.Contains(read("MEMORY.md"), "saved later") {
		t.Fatalf("unchanged card: %q, %q", got, read("MEMORY.md"))
	}
	// The person edits MEMORY.md on a PC: it is taken, the board's is kept aside.
	os.WriteFile(filepath.Join(boot, "MEMORY.md"), []byte("- bins on Wednesday now\n"), 0o644)
	got := takeWorkspaceIn(boot, ws)
	if len(got) != 1 || !strings.Contains(got[0], "MEMORY.md.before-boot") {
		t.Fatalf("edited card: %q", got)
	}
	if read("MEMORY.md") != "- bins on Wednesday now\n" || !strings.Contains(read("MEMORY.md.before-boot"), "saved later") {
		t.Errorf("after the edit: %q / %q", read("MEMORY.md"), read("MEMORY.md.before-boot"))
	}
	os.WriteFile(filepath.Join(boot, "USER.md"), []byte(strings.Repeat("x", maxWorkspaceFile+1)), 0o644)
	if got := takeWorkspaceIn(boot, ws); len(got) != 1 || !strings.Contains(got[0], "larger than") || read("USER.md") != "" {
		t.Errorf("an oversized file: %q", got)
	}
}

func TestDataDirOf(t *testing.T) {
	dir := t.TempDir()
	for src, want := range map[string]string{
		"data_dir: /perm/clawedge/data\ntelegram: {token: \"${secret:tg}\"}\n": "/perm/clawedge/data",
		"board: {driver: sim}\n": filepath.Join(stateDir, "data"),
		"data_dir: ./d\n":        filepath.Join(stateDir, "d"),
	} {
		p := filepath.Join(dir, "c.yaml")
		os.WriteFile(p, []byte(src), 0o600)
		if got, err := dataDirOf(p); err != nil || got != want {
			t.Errorf("%q: %q %v, want %q", src, got, err, want)
		}
	}
	os.WriteFile(filepath.Join(dir, "c.yaml"), []byte("data_dir: ${DATA}\n"), 0o600)
	if _, err := dataDirOf(filepath.Join(dir, "c.yaml")); err == nil {
		t.Error("a variable in data_dir")
	}
}
