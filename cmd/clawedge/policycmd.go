package main

import (
	"cmp"
	"fmt"
	"log/slog"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/clawedge/clawedge/automations"
	"github.com/clawedge/clawedge/daemon"
	"github.com/clawedge/clawedge/policy"
	"github.com/clawedge/clawedge/tools"
)

func newPolicyCmd(g *globalFlags) *cobra.Command {
	c := &cobra.Command{Use: "policy", Short: "Explain what the layers of permission say about a call"}
	var as, channel, creator string
	explain := &cobra.Command{
		Use:   "explain TOOL [--as PRINCIPAL]",
		Short: "Print each layer's verdict on a call of TOOL by PRINCIPAL, and the decision the call path makes",
		Long: `explain prints, layer by layer, what the call path decides about a call of TOOL by PRINCIPAL:
the same authorizer every call passes through (tools.Runner.Call).

PRINCIPAL is who asks, as the door names them (and as policy.users and policy.owners name them):
  console, uid:1000             a person at the board (a console, the control socket)
  pi                            a person at the board's console, logged in as pi ($USER)
  telegram:42                   a Telegram user typing a command
  web:phone                     a paired browser of the dashboard
  model:telegram:42             the model acting for telegram:42 (likewise model:console, model:mcp:NAME)
  mcp:NAME                      an MCP host
  mqtt                          Home Assistant (anyone on the MQTT broker)
  auto:NAME                     an automation (with its creator's rights, from the config or the store)`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := loadConfig(g)
			if err != nil {
				return err
			}
			caller, err := policy.CallerOf(as, channel)
			if err != nil {
				return err
			}
			// The registry the config would have (on a simulated board,
			// as `clawedge tools` lists it), so that group:readonly has the
			// members it has in the daemon.
			a, err := daemon.Listing(cfg, coreOptions(g, slog.LevelWarn))
			if err != nil {
				return err
			}
			if caller.User == "auto" || strings.HasPrefix(caller.User, "auto:") {
				// An automation acts with its creator's rights: the config's
				// author for a configured one, else --creator's.
				sp := automations.Spec{Name: strings.TrimPrefix(caller.User, "auto:")}
				if _, configured := cfg.Automations[sp.Name]; !configured || creator != "" {
					by, err := policy.CallerOf(cmp.Or(creator, "auto:?"), "")
					if err != nil {
						return fmt.Errorf("--creator: %w", err)
					}
					sp.Added, sp.Creator = true, &tools.Principal{Channel: by.Channel, User: by.User, Actor: by.Actor}
					if creator == "" {
						sp.Creator = nil // added before creators were recorded
					}
				}
				ac := automations.Caller(sp)
				ac.Actor = caller.Actor
				caller = ac
			}
			d := a.Policy().Explain(caller, args[0])
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			for _, v := range d.Verdicts {
				fmt.Fprintf(w, "%s\t%s\t%s\n", v.Layer, v.Action, v.Why)
			}
			w.Flush()
			decided := "every layer allows it"
			if d.Decided != "" {
				decided = "decided by " + d.Decided + ": " + d.Why
			}
			who := tools.Principal{Channel: caller.Channel, User: caller.User, Actor: caller.Actor}
			fmt.Fprintf(cmd.OutOrStdout(), "%s for %s on %s: %s (%s)\n", args[0], who, caller.Channel, d.Action, decided)
			return nil
		},
	}
	explain.Flags().StringVar(&as, "as", "model:console", "the principal (see above)")
	explain.Flags().StringVar(&channel, "channel", "", "the door, when the principal does not say it: console/ttyS0 for a serial console (default: the principal's own)")
	explain.Flags().StringVar(&creator, "creator", "", "with --as auto:NAME of an automation added at run time: who added it (a principal, as --as takes it)")
	c.AddCommand(explain)
	return c
}
