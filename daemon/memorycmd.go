package daemon

// This file: `clawedge memory`, the workspace's long-term memory from the
// shell. It works on data_dir/workspace/MEMORY.md directly, beside a running
// daemon (both take the workspace's lock to write, and the daemon reads the
// file again when it changed): the person at the board's shell can edit
// the file anyway.

import (
	"path/filepath"

	"github.com/clawedge/clawedge/config"
	"github.com/clawedge/clawedge/memory"
)

// WorkspaceDir is where the workspace of cfg is.
func WorkspaceDir(cfg *config.Config) string { return filepath.Join(cfg.DataDir, "workspace") }

// OpenWorkspace opens cfg's workspace with its configured bounds and owners
// (policy.owners: they read the board's entries and forget anyone's, as the
// people at the board do).
func OpenWorkspace(cfg *config.Config) (*memory.Workspace, error) {
	w, err := memory.Open(WorkspaceDir(cfg), memory.Limits{MaxEntries: cfg.Memory.MaxEntries, MaxFileBytes: cfg.Memory.MaxBytes})
	if err == nil {
		w.SetOwners(cfg.Policy.Owners)
	}
	return w, err
}
