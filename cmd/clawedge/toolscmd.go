package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/clawedge/clawedge/config"
	"github.com/clawedge/clawedge/daemon"
	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/internal/termsafe"
	"github.com/clawedge/clawedge/llm"
	"github.com/clawedge/clawedge/mcpclient"
	"github.com/clawedge/clawedge/policy"
	"github.com/clawedge/clawedge/skills"
	"github.com/clawedge/clawedge/tools"
	"github.com/clawedge/clawedge/tools/sys"
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
			a, err := daemon.Listing(cfg, coreOptions(g, slog.LevelWarn))
			if err != nil {
				return err
			}
			printMCPStates(w, states, a.Policy())
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

// mcpStates asks the daemon for its MCP servers' states, or, with no daemon,
// connects to each once.
func mcpStates(cfg *config.Config) ([]mcpclient.State, error) {
	servers := daemon.MCPServers(cfg)
	if len(servers) == 0 {
		return nil, nil
	}
	d, err := dialDaemon(cfg)
	if err != nil {
		return nil, err
	}
	if d != nil {
		defer d.Close()
		raw, err := d.Op(daemon.OpMCPServers, nil)
		if err != nil {
			return nil, err
		}
		var st []mcpclient.State
		return st, json.Unmarshal(raw, &st)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	m := &mcpclient.Manager{Log: log, Box: daemon.MCPBox(cfg, nil), Launch: daemon.MCPLaunch, PATH: skills.ScriptPATH}
	return m.Probe(context.Background(), servers), nil
}

// policyDoors are the callers `clawedge tools` asks the policy about: the
// model at each door and the programs (a person's typed command is decided by
// the rules about that person only, and MCP tools are not denied to it).
var policyDoors = []tools.Caller{
	{Channel: "console/stdin", User: "console", Actor: tools.Model},
	{Channel: "control", User: "", Actor: tools.Model},
	{Channel: "telegram", User: "", Actor: tools.Model},
	{Channel: "web", User: "", Actor: tools.Model},
	{Channel: "mqtt", User: "mqtt", Actor: tools.Program},
	{Channel: "mcp", User: "", Actor: tools.Program},
}

// printMCPStates is the MCP part of `clawedge tools`; pol says which of the
// tools no door is offered.
func printMCPStates(w io.Writer, states []mcpclient.State, pol *policy.Policy) {
	// The tools' names, the state (a server's error) and why a tool is
	// degraded come from the server: their control characters are escaped.
	for _, s := range states {
		fmt.Fprintf(w, "\nMCP server %s: %s (%d tools)\n", termsafe.Line(s.Name), termsafe.Line(s.State), len(s.Tools))
		if s.Rights != "" {
			fmt.Fprintf(w, "  %s\n", s.Rights)
		}
		for _, t := range s.Tools {
			line := "  " + termsafe.Line(t.Name)
			if t.MCPName != strings.TrimPrefix(t.Name, s.Name+"/") {
				line += " (" + termsafe.Line(t.MCPName) + ")"
			}
			if t.Degraded != "" {
				line += ": validated after generation, not constrained: " + termsafe.Line(t.Degraded)
			}
			fmt.Fprintln(w, line)
		}
	}
	// Said only when true: a rule that names a server's tools offers them.
	if denied := deniedEverywhere(pol, states); len(denied) > 0 {
		for i, n := range denied {
			denied[i] = termsafe.Line(n)
		}
		fmt.Fprintf(w, "\nMCP tools are denied until a policy rule names them (policy.tools \"SERVER/*\": allow), but to a person typing a command; denied now: %s.\n", strings.Join(denied, ", "))
	}
}

// deniedEverywhere are the tools of states that the policy offers to the
// model and programs at no door.
func deniedEverywhere(pol *policy.Policy, states []mcpclient.State) []string {
	var out []string
	for _, s := range states {
		for _, t := range s.Tools {
			if !slices.ContainsFunc(policyDoors, func(c tools.Caller) bool { return pol.Offered(c, t.Name) }) {
				out = append(out, t.Name)
			}
		}
	}
	return out
}
