package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The secrets setup wrote beside the config reach the daemon's environment;
// names that would change how programs run do not.
func TestEnvBeside(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	if got := envBeside(cfg); got != nil {
		t.Errorf("no file: %v", got)
	}
	os.WriteFile(filepath.Join(dir, "clawedge.env"), []byte("# Secrets of clawedge\nTELEGRAM_TOKEN='123:abc'\nLAN_API_KEY='sk-x=y'\n"+
		"PATH='/tmp'\nLD_PRELOAD='/tmp/x.so'\nNOTIFY_SOCKET='/tmp/s'\nCLAWEDGE_SETUP_CONFIG='/tmp/c'\nlower='x'\nnot a line\n"), 0o600)
	got := envBeside(cfg)
	want := []string{"TELEGRAM_TOKEN=123:abc", "LAN_API_KEY=sk-x=y"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
