package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"github.com/clawedge/clawedge/daemon"
	"github.com/clawedge/clawedge/internal/termsafe"

	"github.com/spf13/cobra"

	"github.com/clawedge/clawedge/channels"
	"github.com/clawedge/clawedge/tools"
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
			return runLine(cmd, g, args[0], asJSON, nil)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print each call's result fields as JSON")
	return cmd
}

// runLine runs a command-language line as the person at this terminal: in
// the running daemon, which holds the board, else here on the store and
// board (after prepare, when given, readies what the line's tools need; the
// function it returns, when not nil, runs after the line and before the
// board closes).
func runLine(cmd *cobra.Command, g *globalFlags, line string, asJSON bool, prepare func(*daemon.Core) (func(), error)) error {
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
		return execRemote(cmd, d, line, asJSON)
	}
	a, err := openCore(cfg, g)
	if err != nil {
		return err
	}
	defer a.Close()
	if prepare != nil {
		done, err := prepare(a)
		if err != nil {
			return err
		}
		if done != nil {
			defer done() // before a.Close, deferred earlier
		}
	}
	resp := channels.Command(cmd.Context(), a.Runner(), tools.Caller{Channel: "cli", User: fmt.Sprintf("uid:%d", os.Getuid()), Actor: tools.Person}, line)
	var report json.RawMessage
	if resp.Report != nil {
		if report, err = json.Marshal(resp.Report); err != nil {
			return err
		}
	}
	return printReply(cmd, resp.Text, resp.Failed, report, asJSON)
}

// execRemote runs the line in the running daemon, which holds the board.
func execRemote(cmd *cobra.Command, d *channels.ControlClient, line string, asJSON bool) error {
	r, err := d.Send(line)
	if err != nil {
		return err
	}
	return printReply(cmd, r.Text, r.Failed, r.Report, asJSON)
}

// printReply prints a command's outcome, the same with or without a daemon: the
// console's rendering (channels.Command), or with --json the calls' report. When
// some calls ran, their lines go to stdout even if one failed, so a chain that
// stops at stage two still says what stage one did; a failure before any call
// ran ("error: ...") goes to stderr. A failure exits 1.
func printReply(cmd *cobra.Command, text string, failed bool, report json.RawMessage, asJSON bool) error {
	ran := len(report) > 0 && string(report) != "null"
	switch {
	case asJSON && ran:
		var out bytes.Buffer
		if err := json.Indent(&out, report, "", "  "); err != nil {
			return err
		}
		fmt.Fprintln(cmd.OutOrStdout(), out.String())
	case failed && !ran:
		fmt.Fprintln(cmd.ErrOrStderr(), termsafe.String(text))
	default:
		// A tool's output may be an MCP server's text: escaped for the terminal.
		fmt.Fprintln(cmd.OutOrStdout(), termsafe.String(text))
	}
	if failed {
		return shownError{code: 1}
	}
	return nil
}
