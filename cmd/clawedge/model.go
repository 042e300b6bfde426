package main

import (
	"path/filepath"

	"github.com/spf13/cobra"
)

// newModelCmd is the `model` command group: local GGUF model files. Each
// subcommand has its own constructor, listed here.
func newModelCmd(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "model",
		Short: "Local model files: download, list, remove, inspect; synthesize random-weight test models",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(
		newModelPullCmd(g),
		newModelListCmd(g),
		newModelRmCmd(g),
		newModelInfoCmd(g),
		newModelSynthCmd(g),
	)
	return cmd
}

// modelsDir is --dir, else the models folder of data_dir.
func modelsDir(g *globalFlags, dir string) (string, error) {
	if dir != "" {
		return dir, nil
	}
	cfg, err := loadConfig(g)
	if err != nil {
		return "", err
	}
	return filepath.Join(cfg.DataDir, "models"), nil
}

// orNone shows an empty field as "none" (model list, model info, setup).
func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
