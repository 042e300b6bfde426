package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/clawedge/clawedge/channels"
	"github.com/clawedge/clawedge/grammar"
)

func newParseCmd(g *globalFlags) *cobra.Command {
	var any bool
	var file string
	cmd := &cobra.Command{
		Use:   "parse 'COMMAND' [--tools FILE]",
		Short: "Print a command-language line as canonical JSON, or the error with line and column",
		Long: `Print a command-language line as canonical JSON, or the error with line and column.

--tools FILE checks the line against the tools of a JSON file of specs (the shape
"clawedge tools --json" prints) instead of this configuration's: their namespaces, names and
arguments, for tools outside the built-in set.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var namespaces []string // nil: any
			var specs []grammar.ToolSpec
			switch {
			case file != "":
				var err error
				if specs, err = readToolsFile(file); err != nil {
					return &exitError{2, err}
				}
				namespaces = specNamespaces(specs)
			case !any:
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
			if err := checkAgainst(c, specs, file); err != nil {
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
	cmd.Flags().StringVar(&file, "tools", "", "check the line against the tools of this JSON file of specs")
	return cmd
}

// specNamespaces are the namespaces of specs, in order.
func specNamespaces(specs []grammar.ToolSpec) []string {
	var out []string
	for _, s := range specs {
		if ns, _, ok := strings.Cut(s.Name, "/"); ok && !slices.Contains(out, ns) {
			out = append(out, ns)
		}
	}
	return out
}

// checkAgainst checks each call of c names a tool of specs and that its arguments
// fit it, as far as they are known before it runs. No specs: nothing to check.
func checkAgainst(c *grammar.Command, specs []grammar.ToolSpec, file string) error {
	if specs == nil {
		return nil
	}
	for _, st := range c.Stages {
		for _, inv := range st.Calls {
			s, ok := findSpec(specs, inv.Tool())
			if !ok {
				return fmt.Errorf("line %d, column %d: %s is not a tool of %s", inv.Pos.Line, inv.Pos.Column, inv.Tool(), file)
			}
			if err := s.Precheck(inv.Params); err != nil {
				return err // it says where
			}
		}
	}
	return nil
}
