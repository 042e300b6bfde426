package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"
)

// newWebCmd is `clawedge web pair|list|revoke`: the dashboard's browsers,
// through the running daemon, which holds the pending codes (docs/web.md).
func newWebCmd(g *globalFlags) *cobra.Command {
	root := &cobra.Command{Use: "web", Short: "Pair, list and revoke the dashboard's browsers (docs/web.md)"}
	var name, role string
	pair := &cobra.Command{
		Use:   "pair",
		Short: "Print a one-time code that pairs a browser with the dashboard",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, err := webRequestDo(g, webRequest{Op: "pair", Name: name, Role: role})
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), pairLine(r, name, role))
			return nil
		},
	}
	pair.Flags().StringVar(&name, "name", "browser", "the device's name: its calls are web:NAME in the audit and in policy.users")
	pair.Flags().StringVar(&role, "role", "operator", "viewer (reads), operator (calls tools as the policy allows) or owner (also answers approvals)")
	list := &cobra.Command{
		Use: "list", Short: "List the paired browsers", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, err := webRequestDo(g, webRequest{Op: "list"})
			if err != nil {
				return err
			}
			if len(r.Devices) == 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "no paired browsers (clawedge web pair)")
				return nil
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(w, "NAME\tROLE\tPAIRED\tLAST USED")
			for _, d := range r.Devices {
				used := "-"
				if !d.LastUsed.IsZero() {
					used = d.LastUsed.Local().Format("2006-01-02 15:04")
				}
				fmt.Fprintf(w, "web:%s\t%s\t%s\t%s\n", d.Name, d.Role, d.Paired.Local().Format("2006-01-02 15:04"), used)
			}
			return w.Flush()
		},
	}
	revoke := &cobra.Command{
		Use: "revoke NAME", Short: "End every session of the browser NAME at once", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := webRequestDo(g, webRequest{Op: "revoke", Name: args[0]})
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "revoked %d session(s) of web:%s\n", r.Revoked, args[0])
			return nil
		},
	}
	root.AddCommand(pair, list, revoke)
	return root
}

// errNoWebDaemon: the pending codes live in the daemon, so nothing is done without one.
var errNoWebDaemon = errors.New("no running daemon: the dashboard is served by `clawedge run` with a web: section (docs/web.md)")

func webRequestDo(g *globalFlags, req webRequest) (webReply, error) {
	var r webReply
	cfg, err := loadConfig(g)
	if err != nil {
		return r, err
	}
	if cfg.Web == nil {
		return r, errors.New("the dashboard is off: add a web: section to the config (web: {listen: \"0.0.0.0:8080\"}; docs/web.md)")
	}
	d, err := dialDaemon(cfg)
	if err != nil {
		return r, err
	}
	if d == nil {
		return r, errNoWebDaemon
	}
	defer d.Close()
	raw, err := d.Op("web", req)
	if err != nil {
		return r, err
	}
	return r, json.Unmarshal(raw, &r)
}
