package main

import (
	"errors"
	"fmt"

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
			opts := grammar.ParseOptions{}
			if !any {
				// Namespaces are the registered ones; only the registry knows them, and
				// it needs the board's pins for its enums, so build it (no store needed).
				cfg, err := loadConfig(g)
				if err != nil {
					return err
				}
				reg, closeBoard, err := registryFor(cfg)
				if err != nil {
					return err
				}
				closeBoard()
				opts.Namespaces = reg.Namespaces()
			}
			c, err := grammar.Parse(args[0], opts)
			if err != nil {
				var se *grammar.SyntaxError
				if errors.As(err, &se) {
					return fmt.Errorf("%v\n%s", se, se.Caret())
				}
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
