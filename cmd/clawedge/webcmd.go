package main

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/tools"
)

// newWebCmd is `clawedge web pair|list|revoke`: the dashboard's browsers,
// through the running daemon, which holds the pending codes (docs/web.md).
// Each is a call (web/pair, web/devices, web/revoke) on the one call path,
// as the person at this terminal: the authorizer decides, the audit records
// it (a code itself never reaches the audit).
func newWebCmd(g *globalFlags) *cobra.Command {
	root := &cobra.Command{Use: "web", Short: "Pair, list and revoke the dashboard's browsers (docs/web.md)"}
	var name, role string
	pair := &cobra.Command{
		Use:   "pair",
		Short: "Print a one-time code that pairs a browser with the dashboard",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return webCall(cmd, g, "web/pair", grammar.Param{Key: "name", Value: grammar.StringValue(name)}, grammar.Param{Key: "role", Value: grammar.StringValue(role)})
		},
	}
	pair.Flags().StringVar(&name, "name", "browser", "the device's name: its calls are web:NAME in the audit and in policy.users")
	pair.Flags().StringVar(&role, "role", "operator", "viewer (reads), operator (calls tools as the policy allows) or owner (also answers approvals)")
	list := &cobra.Command{
		Use: "list", Short: "List the paired browsers", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return webCall(cmd, g, "web/devices") },
	}
	revoke := &cobra.Command{
		Use: "revoke NAME", Short: "End every session of the browser NAME at once", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return webCall(cmd, g, "web/revoke", grammar.Param{Key: "name", Value: grammar.StringValue(args[0])})
		},
	}
	root.AddCommand(pair, list, revoke)
	return root
}

// errNoWebDaemon: the pending codes live in the daemon, so nothing is done without one.
var errNoWebDaemon = errors.New("no running daemon: the dashboard is served by `clawedge run` with a web: section (docs/web.md)")

// webCall runs tool in the running daemon, as the person at this terminal.
func webCall(cmd *cobra.Command, g *globalFlags, tool string, params ...grammar.Param) error {
	cfg, err := loadConfig(g)
	if err != nil {
		return err
	}
	if cfg.Web == nil {
		return errors.New("the dashboard is off: add a web: section to the config (web: {listen: \"0.0.0.0:8080\"}; docs/web.md)")
	}
	d, err := dialDaemon(cfg)
	if err != nil {
		return err
	}
	if d == nil {
		return errNoWebDaemon
	}
	defer d.Close()
	return execRemote(cmd, d, tools.CommandText(tool, params), false)
}
