package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/clawedge/clawedge/channels"
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
			cfg, err := loadConfig(g)
			if err != nil {
				return err
			}
			d, err := dialDaemon(cfg)
			if err != nil {
				return err
			}
			if d != nil {
				defer d.Close()
				return execRemote(cmd, d, args[0], asJSON)
			}
			a, err := openApp(cfg, g, slog.LevelWarn)
			if err != nil {
				return err
			}
			defer a.close()
			rep, err := channels.Run(cmd.Context(), a.runner, tools.Caller{Channel: "cli", User: or(os.Getenv("USER"), "cli")}, args[0])
			if rep != nil && len(rep.Stages) > 0 {
				if asJSON {
					out, jerr := json.MarshalIndent(rep, "", "  ")
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

// execRemote runs the line in the running daemon, which holds the board.
func execRemote(cmd *cobra.Command, d *channels.ControlClient, line string, asJSON bool) error {
	r, err := d.Send(line)
	if err != nil {
		return err
	}
	if asJSON && len(r.Report) > 0 {
		var out bytes.Buffer
		if err := json.Indent(&out, r.Report, "", "  "); err != nil {
			return err
		}
		fmt.Fprintln(cmd.OutOrStdout(), out.String())
	}
	if r.Failed {
		return errors.New(strings.TrimPrefix(r.Text, "error: "))
	}
	if !asJSON {
		fmt.Fprintln(cmd.OutOrStdout(), r.Text)
	}
	return nil
}
