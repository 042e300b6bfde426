package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/clawedge/clawedge/boards"
	"github.com/clawedge/clawedge/channels"
	"github.com/clawedge/clawedge/daemon"
	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/tools"
)

// newBoardCmd is `clawedge board pair|add|rm|list`: the other boards, through
// the running daemon, which holds the pending codes and serves A2A
// (docs/boards.md). pair, add and rm are calls (board/pair, board/add,
// board/rm) on the one call path as the person at this terminal; list is
// the daemon's read-only op.
func newBoardCmd(g *globalFlags) *cobra.Command {
	root := &cobra.Command{Use: "board", Short: "Pair, list and unpair other boards (docs/boards.md)"}
	pair := &cobra.Command{
		Use: "pair", Short: "Print a one-time code that pairs another board with this one", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return boardCall(cmd, g, "board/pair") },
	}
	var code, url string
	add := &cobra.Command{
		Use: "add NAME --code CODE [--url URL]", Short: "Pair with the board that printed CODE (found on the LAN by NAME, or at URL); its tools become NAME.ns/tool here", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			params := []grammar.Param{{Key: "name", Value: grammar.StringValue(args[0])}, {Key: "code", Value: grammar.StringValue(code)}}
			if url != "" {
				params = append(params, grammar.Param{Key: "url", Value: grammar.StringValue(url)})
			}
			return boardCall(cmd, g, "board/add", params...)
		},
	}
	add.Flags().StringVar(&code, "code", "", "the code the other board printed")
	add.Flags().StringVar(&url, "url", "", "the other board's address, as it printed it (none: the board NAME found on the LAN)")
	add.MarkFlagRequired("code")
	rm := &cobra.Command{
		Use: "rm NAME", Short: "Unpair the board NAME: here at once, there too when it answers", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return boardCall(cmd, g, "board/rm", grammar.Param{Key: "name", Value: grammar.StringValue(args[0])})
		},
	}
	var asJSON bool
	list := &cobra.Command{
		Use: "list", Short: "List the paired boards: name, address, state, last seen, tools", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return boardList(cmd, g, asJSON) },
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print JSON: name, url, state, last_seen, tools, pin, error")
	root.AddCommand(pair, add, rm, list)
	return root
}

var errNoBoards = errors.New("boards are off: add a boards: section to the config (boards: {listen: \"0.0.0.0:8765\"}; docs/boards.md)")

// boardCall runs tool in the running daemon, as the person at this terminal.
func boardCall(cmd *cobra.Command, g *globalFlags, tool string, params ...grammar.Param) error {
	d, err := boardsDaemon(g, "other boards are paired through `clawedge run` with a boards: section (docs/boards.md)")
	if err != nil {
		return err
	}
	defer d.Close()
	return execRemote(cmd, d, tools.CommandText(tool, params), false)
}

// boardsDaemon is the running daemon of a config with a boards: section;
// without one the error says why it is needed.
func boardsDaemon(g *globalFlags, why string) (*channels.ControlClient, error) {
	cfg, err := loadConfig(g)
	if err != nil {
		return nil, err
	}
	if cfg.Boards == nil {
		return nil, errNoBoards
	}
	d, err := dialDaemon(cfg)
	if err != nil {
		return nil, err
	}
	if d == nil {
		return nil, errors.New("no running daemon: " + why)
	}
	return d, nil
}

func boardList(cmd *cobra.Command, g *globalFlags, asJSON bool) error {
	d, err := boardsDaemon(g, "the boards' states are the daemon's (`clawedge run`)")
	if err != nil {
		return err
	}
	defer d.Close()
	raw, err := d.Op(daemon.OpBoards, nil)
	if err != nil {
		return fmt.Errorf("the daemon's boards: %w", err)
	}
	var list []boards.Status
	if err := json.Unmarshal(raw, &list); err != nil {
		return fmt.Errorf("the daemon's boards: %w", err)
	}
	out := cmd.OutOrStdout()
	if asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(list)
	}
	if len(list) == 0 {
		fmt.Fprintln(out, "No board is paired (clawedge board pair on the other board prints a code).")
		return nil
	}
	for _, b := range list {
		seen := "never"
		if !b.LastSeen.IsZero() {
			seen = b.LastSeen.Local().Format(time.DateTime)
		}
		line := fmt.Sprintf("%-16s %-6s %-32s last seen %s, %d tool(s)", b.Name, b.State, b.URL, seen, b.Tools)
		if b.Error != "" {
			line += " (" + b.Error + ")"
		}
		fmt.Fprintln(out, line)
	}
	return nil
}
