package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/clawedge/clawedge/automations"
	"github.com/clawedge/clawedge/daemon"
	"github.com/clawedge/clawedge/grammar"
)

// newAutoCmd is `clawedge auto list|run|pause|resume|rm`: through the running
// daemon's control socket when there is one, else on the store directly (run
// then runs the automation in this process, like exec).
func newAutoCmd(g *globalFlags) *cobra.Command {
	root := &cobra.Command{Use: "auto", Short: "List and control the automations (docs/automations.md)"}
	var asJSON bool
	list := &cobra.Command{
		Use:   "list",
		Short: "List the automations: trigger, next run, last run and its outcome, paused",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, err := autoRequestDo(cmd.Context(), g, daemon.AutoRequest{Op: "list"})
			if err != nil {
				return err
			}
			return printAuto(cmd, r, asJSON)
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	root.AddCommand(list)
	for _, op := range []struct{ name, short string }{
		{"run", "Run an automation once now (its condition still applies)"},
		{"pause", "Pause an automation (kept across restarts)"},
		{"resume", "Resume a paused automation"},
		{"rm", "Remove an automation created at run time"},
	} {
		root.AddCommand(&cobra.Command{
			Use: op.name + " NAME", Short: op.short, Args: cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				// A change is a call on the one call path, authorized and
				// audited as the person at this terminal, as @auto/run is
				// at the console: the control socket decides nothing of
				// its own.
				call := grammar.Invoke{Namespace: "auto", Name: op.name,
					Params: []grammar.Param{{Key: "name", Value: grammar.StringValue(args[0])}}}
				return runLine(cmd, g, call.String(), false, func(a *daemon.Core) (func(), error) {
					s, err := a.StartAutomations(cmd.Context(), nil)
					if err != nil {
						return nil, err
					}
					return s.Wait, nil // a run started here finishes before the board closes
				})
			},
		})
	}
	return root
}

func autoRequestDo(ctx context.Context, g *globalFlags, req daemon.AutoRequest) (daemon.AutoReply, error) {
	cfg, err := loadConfig(g)
	if err != nil {
		return daemon.AutoReply{}, err
	}
	var r daemon.AutoReply
	d, err := dialDaemon(cfg)
	if err != nil {
		return r, err
	}
	if d != nil {
		defer d.Close()
		raw, err := d.Op("auto", req)
		if err != nil {
			return r, err
		}
		return r, json.Unmarshal(raw, &r)
	}
	a, err := openCore(cfg, g)
	if err != nil {
		return r, err
	}
	defer a.Close()
	s, err := a.StartAutomations(ctx, nil)
	if err != nil {
		return r, err
	}
	r, err = daemon.AutoDo(s, req)
	s.Wait()
	return r, err
}

func printAuto(cmd *cobra.Command, r daemon.AutoReply, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(cmd.OutOrStdout())
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	fmt.Fprintln(cmd.OutOrStdout(), automations.FormatList(r.Automations, r.Location(), r.ClockTrusted))
	return nil
}
