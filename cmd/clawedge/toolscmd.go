package main

import (
	"encoding/json"
	"fmt"

	"github.com/clawedge/clawedge/tools/sys"
	"github.com/spf13/cobra"
)

func newToolsCmd(g *globalFlags) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "tools",
		Short: "List the tools of this configuration (--json: their specs, the shape tools files use)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			reg, err := loadRegistry(g)
			if err != nil {
				return err
			}
			specs := reg.Specs()
			if asJSON {
				out, err := json.MarshalIndent(specs, "", "  ")
				if err != nil {
					return err
				}
				fmt.Fprintln(cmd.OutOrStdout(), string(out))
				return nil
			}
			for i, s := range specs {
				if i > 0 {
					fmt.Fprintln(cmd.OutOrStdout())
				}
				fmt.Fprintln(cmd.OutOrStdout(), sys.Describe(s))
			}
			cfg, err := loadConfig(g)
			if err != nil {
				return err
			}
			states, err := mcpStates(cfg) // mcpclient.go
			if err != nil {
				return err
			}
			printMCPStates(cmd.OutOrStdout(), states)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the specs as a JSON array")
	cmd.AddCommand(newToolsCheckCmd()) // toolscheck.go
	return cmd
}
