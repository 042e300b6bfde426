package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/llm"
	"github.com/clawedge/clawedge/tools/sys"
	"github.com/spf13/cobra"
)

func newToolsCmd(g *globalFlags) *cobra.Command {
	var asJSON, gbnf, schema bool
	var file, form, mode string
	cmd := &cobra.Command{
		Use:   "tools [--json | --gbnf | --json-schema] [--tools FILE]",
		Short: "List the tools of this configuration (--json: their specs, the shape tools files use; --gbnf, --json-schema: the constraint a server is sent)",
		Long: `List the tools of this configuration.

--json prints their specs (the shape tools files use). --gbnf and --json-schema print the
constraint clawedge sends an OpenAI-compatible server with constraint: gbnf or json_schema
(llama-server's --grammar-file, a response_format schema), for a person configuring a server
by hand: the tools under their wire names (gpio__write), as they are offered to the model.
--tools FILE takes the tools from a file of specs instead of the configuration.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			w := cmd.OutOrStdout()
			specs, err := toolSpecs(g, file)
			if err != nil {
				return err
			}
			if gbnf || schema {
				if gbnf && schema {
					return &exitError{2, errors.New("--gbnf and --json-schema: choose one")}
				}
				return printConstraint(w, specs, grammar.Form(form), grammar.Mode(mode), gbnf)
			}
			if asJSON {
				out, err := json.MarshalIndent(specs, "", "  ")
				if err != nil {
					return err
				}
				fmt.Fprintln(w, string(out))
				return nil
			}
			for i, s := range specs {
				if i > 0 {
					fmt.Fprintln(w)
				}
				fmt.Fprintln(w, sys.Describe(s))
			}
			if file != "" {
				return nil
			}
			cfg, err := loadConfig(g)
			if err != nil {
				return err
			}
			states, err := mcpStates(cfg) // mcpclient.go
			if err != nil {
				return err
			}
			printMCPStates(w, states, (&app{cfg: cfg}).policy())
			return nil
		},
	}
	f := cmd.Flags()
	f.BoolVar(&asJSON, "json", false, "print the specs as a JSON array")
	f.BoolVar(&gbnf, "gbnf", false, "print the GBNF grammar of the allowed calls (llama-server)")
	f.BoolVar(&schema, "json-schema", false, "print the JSON Schema of the allowed calls (response_format)")
	f.StringVar(&file, "tools", "", "read the tools from this JSON file of specs (the shape --json prints)")
	f.StringVar(&form, "form", "qwen", "with --gbnf: the output form qwen|command|json")
	f.StringVar(&mode, "mode", "any", "with --gbnf or --json-schema: any (text or calls) | calls")
	cmd.AddCommand(newToolsCheckCmd()) // toolscheck.go
	return cmd
}

// toolSpecs are the tools of file, or of the configuration when file is "".
func toolSpecs(g *globalFlags, file string) ([]grammar.ToolSpec, error) {
	if file != "" {
		specs, err := readToolsFile(file)
		if err != nil {
			return nil, &exitError{2, err}
		}
		return specs, nil
	}
	reg, err := loadRegistry(g)
	if err != nil {
		return nil, err
	}
	return reg.Specs(), nil
}

// printConstraint writes what the openai provider sends as the constraint.
func printConstraint(w io.Writer, specs []grammar.ToolSpec, form grammar.Form, mode grammar.Mode, gbnf bool) error {
	spec := llm.WireSpec(grammar.Spec{Form: form, Mode: mode, Tools: specs})
	if err := spec.Check(); err != nil {
		return &exitError{2, errors.New(strings.TrimPrefix(err.Error(), "grammar: "))}
	}
	var out []byte
	var err error
	if gbnf {
		var g string
		g, err = grammar.GBNF(spec)
		out = []byte(g)
	} else {
		out, err = grammar.JSONSchema(spec)
		out = append(out, '\n')
	}
	if err != nil {
		return &exitError{2, errors.New(strings.TrimPrefix(err.Error(), "grammar: "))}
	}
	_, err = w.Write(out)
	return err
}
