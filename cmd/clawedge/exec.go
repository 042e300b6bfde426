package main

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"

	"github.com/clawedge/clawedge/channels"
	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/tools"
	"github.com/spf13/cobra"
)

func newExecCmd(g *globalFlags) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "exec 'COMMAND'",
		Short: "Run one command-language line, print the result",
		Example: `  clawedge exec '@gpio/write{pin="led";value=1}'
  clawedge exec '@gpio/toggle{pin="led"}->@gpio/read{pin="led"}'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := openApp(g, slog.LevelWarn)
			if err != nil {
				return err
			}
			defer a.close()
			rep, err := channels.Run(cmd.Context(), a.runner, tools.Caller{Channel: "cli", User: or(os.Getenv("USER"), "cli")}, args[0])
			if rep != nil && len(rep.Stages) > 0 {
				if asJSON {
					out, jerr := json.MarshalIndent(reportJSON(rep), "", "  ")
					if jerr != nil {
						return jerr
					}
					fmt.Fprintln(cmd.OutOrStdout(), string(out))
				} else if err == nil {
					fmt.Fprintln(cmd.OutOrStdout(), rep.Text())
				}
			}
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print each call's result fields as JSON")
	return cmd
}

type callJSON struct {
	Tool    string         `json:"tool"`
	Command string         `json:"command,omitempty"`
	OK      bool           `json:"ok"`
	Text    string         `json:"text,omitempty"`
	Error   string         `json:"error,omitempty"`
	Fields  map[string]any `json:"fields,omitempty"`
}

func reportJSON(rep *tools.Report) [][]callJSON {
	out := [][]callJSON{}
	for _, st := range rep.Stages {
		var calls []callJSON
		for _, c := range st.Calls {
			cj := callJSON{Tool: c.Tool, Command: c.Command, OK: c.Err == nil, Text: c.Result.Text}
			if c.Err != nil {
				cj.Error = c.Err.Error()
			}
			if len(c.Result.Fields) > 0 {
				cj.Fields = map[string]any{}
				for k, v := range c.Result.Fields {
					cj.Fields[k] = plain(v)
				}
			}
			calls = append(calls, cj)
		}
		out = append(out, calls)
	}
	return out
}

// plain converts a value to what encoding/json prints naturally.
func plain(v grammar.Value) any {
	switch v.Kind {
	case grammar.String:
		return v.Str
	case grammar.Int:
		return v.Int
	case grammar.Float:
		return v.Float
	case grammar.Bool:
		return v.Bool
	case grammar.Array:
		items := make([]any, len(v.Items))
		for i, it := range v.Items {
			items[i] = plain(it)
		}
		return items
	}
	return nil
}
