package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/clawedge/clawedge/localmodel/modelfiles"
)

// newModelRmCmd is `model rm NAME|FILE`: remove a model file.
func newModelRmCmd(g *globalFlags) *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "rm NAME|FILE",
		Short: "Remove an installed model (and its unfinished download) from the models folder",
		Long: `Removes a model file from the models folder: by catalog name, by file name
(".gguf" may be left off), or by a path to a file in the models folder. Its
.part (an unfinished download) goes too. Nothing outside the folder is touched.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := modelsDir(g, dir)
			if err != nil {
				return err
			}
			removed, err := modelfiles.Remove(dir, args[0])
			for _, p := range removed {
				fmt.Fprintf(cmd.OutOrStdout(), "removed %s\n", p)
			}
			if errors.Is(err, modelfiles.ErrOutside) {
				return &exitError{code: 2, err: fmt.Errorf("refusing to remove %w", err)}
			}
			return err
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "models folder (default: data_dir/models of the config)")
	return cmd
}
