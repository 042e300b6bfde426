package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/clawedge/clawedge/agent"
	"github.com/clawedge/clawedge/config"
)

// layersOf copies the config's other policy layers (profile, users,
// automations, elevated, owners) into out.
func layersOf(out *agent.Policy, p config.Policy) {
	out.Profile, out.Elevated, out.Owners = p.Profile, p.Elevated, p.Owners
	out.Users, out.Automations = actionSets(p.Users), actionSets(p.Automations)
}

func actionSets(in map[string]map[string]string) map[string]map[string]agent.Action {
	if in == nil {
		return nil
	}
	out := map[string]map[string]agent.Action{}
	for name, rules := range in {
		m := map[string]agent.Action{}
		for k, v := range rules {
			m[k] = agent.Action(v)
		}
		out[name] = m
	}
	return out
}

// elevation is the app's one set of /elevated windows, shared by every
// policy it builds.
func (a *app) elevation() *agent.Elevation {
	if a.elev == nil {
		a.elev = &agent.Elevation{}
	}
	return a.elev
}

func newPolicyCmd(g *globalFlags) *cobra.Command {
	c := &cobra.Command{Use: "policy", Short: "Explain what the layers of permission say about a tool"}
	var channel, user, automation string
	explain := &cobra.Command{
		Use:   "explain TOOL",
		Short: "Print each layer's verdict on a model's call of TOOL, and which layer decided",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := loadConfig(g)
			if err != nil {
				return err
			}
			if automation != "" {
				channel, user = "auto", "auto:"+automation
			} else if user != "" && channel == "telegram" {
				user = "telegram:" + user
			}
			a := &app{cfg: cfg}
			p := a.policy()
			d := p.Explain(channel, user, args[0])
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			for _, v := range d.Verdicts {
				fmt.Fprintf(w, "%s\t%s\t%s\n", v.Layer, v.Action, v.Why)
			}
			w.Flush()
			who := user
			if who == "" {
				who = "anyone"
			}
			decided := "every layer allows it"
			if d.Decided != "" {
				decided = "decided by " + d.Decided + ": " + d.Why
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s for %s on %s: %s (%s)\n", args[0], who, channel, d.Action, decided)
			return nil
		},
	}
	explain.Flags().StringVar(&channel, "channel", "telegram", "the channel: telegram, console, console/ttyS0, control, mcp")
	explain.Flags().StringVar(&user, "user", "", "the caller: a Telegram user id (123) or a caller id (telegram:123, console)")
	explain.Flags().StringVar(&automation, "automation", "", "explain for the automation of this name (caller auto:NAME)")
	c.AddCommand(explain)
	return c
}
