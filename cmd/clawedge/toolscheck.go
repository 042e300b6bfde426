package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/internal/termsafe"
	"github.com/clawedge/clawedge/tools"
)

// toolCheck is what `clawedge tools check` says about one tool.
type toolCheck struct {
	Name   string `json:"name"`
	Status string `json:"status"` // exact, degraded or refused
	Reason string `json:"reason,omitempty"`
	// Warnings: what of the schema was left out without degrading the tool
	// (a default that contradicts its schema).
	Warnings  []string `json:"warnings,omitempty"`
	CompileMS float64  `json:"compile_ms"`
	States    int      `json:"states"` // the compiled automaton's states
}

func newToolsCheckCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "check FILE",
		Short: "Say for each tool of a tools file (clawedge specs or MCP tool definitions) whether its calls compile exactly, degraded (and why) or are refused",
		Long: `check reads a tools file — the JSON array "clawedge tools --json" prints, or MCP tool
definitions [{"name", "description", "inputSchema"}] as an MCP server's tools/list returns them —
and compiles each tool's calls into the constraint the local model decodes with. exact: the
model's calls are constrained to the schema; degraded: the schema cannot be expressed, so the
tool takes its arguments as one JSON string validated after generation (the reason says what);
refused: the tool cannot be offered (a name the model cannot write, a spec that fails its check,
a name listed twice): the other tools are still checked. A warning says what of a schema was
left out without degrading the tool (a default of the wrong type). Exit status 1 when a tool
is refused.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := os.Open(args[0])
			if err != nil {
				return err
			}
			defer f.Close()
			fts, err := tools.ReadToolsFileEach(f)
			if err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			checks := make([]toolCheck, len(fts))
			refused := 0
			for i, ft := range fts {
				checks[i] = checkTool(ft)
				if checks[i].Status == "refused" {
					refused++
				}
			}
			if asJSON {
				out, err := json.MarshalIndent(checks, "", "  ")
				if err != nil {
					return err
				}
				fmt.Fprintln(cmd.OutOrStdout(), string(out))
			} else {
				for _, c := range checks {
					// Names and reasons come from the file: escaped.
					line := fmt.Sprintf("%-32s %-8s compile %.2f ms, %d states", termsafe.Line(c.Name), c.Status, c.CompileMS, c.States)
					if c.Status == "refused" && c.States == 0 && c.CompileMS == 0 {
						line = fmt.Sprintf("%-32s %s", termsafe.Line(c.Name), c.Status)
					}
					if c.Reason != "" {
						line += ": " + termsafe.Line(c.Reason)
					}
					for _, w := range c.Warnings {
						line += "\n    warning: " + termsafe.Line(w)
					}
					fmt.Fprintln(cmd.OutOrStdout(), line)
				}
			}
			if refused > 0 {
				return shownError{code: 1}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the results as a JSON array")
	return cmd
}

// checkTool compiles the calls of one tool alone, in the local model's form.
func checkTool(ft tools.FileTool) toolCheck {
	c := toolCheck{Name: ft.Spec.Name, Status: "exact", Warnings: ft.Warnings}
	if ft.Refused != "" {
		c.Status, c.Reason = "refused", ft.Refused
		return c
	}
	if ft.Degraded != "" {
		c.Status, c.Reason = "degraded", "validated after generation: "+ft.Degraded
	}
	start := time.Now()
	k, err := grammar.Compile(grammar.Spec{Form: grammar.FormQwen, Mode: grammar.ModeCalls, Tools: []grammar.ToolSpec{ft.Spec}})
	c.CompileMS = float64(time.Since(start).Microseconds()) / 1000
	if err != nil {
		c.Status, c.Reason = "refused", err.Error()
		return c
	}
	c.States = k.NumStates()
	if shrunk := grammar.ShrunkForServers(ft.Spec); len(shrunk) > 0 {
		// The local model and GBNF keep every bound; only the JSON Schema a
		// server turns into its own grammar cannot state these.
		note := "bounds above " + strconv.Itoa(grammar.ServerMaxRepeat) + " left out of the JSON Schema sent to servers (llama.cpp's repetition limit), validated after generation: " + strings.Join(shrunk, ", ")
		if c.Reason != "" {
			c.Reason += "; " + note
		} else {
			c.Reason = note
		}
	}
	return c
}
