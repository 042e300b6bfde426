package main

import (
	"fmt"

	"github.com/clawedge/clawedge/channels"

	"github.com/clawedge/clawedge/grammar"
	"github.com/spf13/cobra"
)

func newParseCmd(g *globalFlags) *cobra.Command {
	var any bool
	cmd := &cobra.Command{
		Use:   "parse 'COMMAND'",
		Short: "Print a command-language line as canonical JSON, or the error with line and column",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var namespaces []string // nil: any
			if !any {
				reg, err := loadRegistry(g)
				if err != nil {
					return err
				}
				namespaces = reg.Namespaces()
			}
			c, err := channels.Parse(args[0], namespaces)
			if err != nil {
				return err
			}
			out, err := grammar.CanonicalJSON(c)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), string(out))
			return nil
		},
	}
	cmd.Flags().BoolVar(&any, "any-namespace", false, "accept any namespace, not only the registered ones")
	return cmd
}
