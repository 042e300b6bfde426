package main

import (
	"fmt"

	"github.com/clawedge/clawedge/config"
	"github.com/spf13/cobra"
)

func newConfigCmd(g *globalFlags) *cobra.Command {
	c := &cobra.Command{Use: "config", Short: "Check or show the configuration"}
	var show bool
	check := &cobra.Command{
		Use:   "check [FILE]",
		Short: "Validate a config file (default: the one clawedge would use); every problem with its line and column",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var cfg *config.Config
			var err error
			if len(args) == 1 {
				cfg, err = loadWithSecrets(args[0]) // secret.go
			} else {
				cfg, err = loadConfig(g)
			}
			if err != nil {
				return err
			}
			src := cfg.Source
			if src == "" {
				src = "built-in defaults (no config file found)"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: ok (%d pins, %d ports, driver %s)\n", src, len(cfg.Board.Pins), len(cfg.Board.Ports), cfg.Board.Driver)
			if show {
				out, err := cfg.Redacted()
				if err != nil {
					return err
				}
				fmt.Fprint(cmd.OutOrStdout(), string(out))
			}
			return nil
		},
	}
	check.Flags().BoolVar(&show, "show", false, "also print the effective config (secrets redacted)")
	c.AddCommand(check)
	return c
}
