package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/clawedge/clawedge/agent"
	"github.com/clawedge/clawedge/automations"
	"github.com/clawedge/clawedge/daemon"
	"github.com/clawedge/clawedge/goals"
	"github.com/clawedge/clawedge/llm/router"
	"github.com/clawedge/clawedge/policy"
	"github.com/clawedge/clawedge/store"
)

func newStatusCmd(g *globalFlags) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the agent's sessions, the models used (calls, tokens, cost, latency, routes) and calls waiting for approval",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(g)
			if err != nil {
				return err
			}
			var rep daemon.StatusReport
			d, err := dialDaemon(cfg)
			if err != nil {
				return err
			}
			if d != nil {
				defer d.Close()
				raw, err := d.Op("status", nil)
				if err != nil {
					return err
				}
				if err := json.Unmarshal(raw, &rep); err != nil {
					return fmt.Errorf("daemon status: %w", err)
				}
			} else {
				rep = daemon.StatusReport{Version: version, Strategy: cfg.Models.Router.Strategy, Models: []router.Stats{},
					Sessions: []agent.SessionInfo{}, Approvals: []policy.Pending{}}
				rep.WiFi, _ = daemon.WiFiInfo(cfg.Network)
				st, err := store.Open(cfg.DataDir, store.Options{ReadOnly: true, Timeout: time.Second})
				switch {
				case err == nil:
					defer st.Close()
					st.SetRetention(daemon.RetentionOf(cfg))
					if u, err := st.Usage(); err == nil {
						rep.Store = daemon.UsageLine(u)
					}
					if rep.Sessions, err = agent.StoredSessions(st); err != nil {
						return err
					}
					if t := daemon.SavedTotals(st); t != nil {
						rep.Models = t
					}
				case errors.Is(err, store.ErrInUse):
					return fmt.Errorf("%w, but its control socket %s does not answer", err, daemon.ControlPath(cfg))
				case errors.Is(err, fs.ErrPermission):
					return notAccessible("the store", filepath.Join(cfg.DataDir, store.FileName), cfg.DataDir, err)
				case errors.Is(err, store.ErrNotExist):
					// No store yet: nothing has happened.
				default:
					return err
				}
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(rep)
			}
			printStatus(cmd.OutOrStdout(), rep)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func printStatus(out io.Writer, r daemon.StatusReport) {
	if r.Daemon {
		fmt.Fprintf(out, "clawedge %s: daemon running for %s on board %s\n", r.Version, r.Uptime, r.Board)
	} else {
		fmt.Fprintf(out, "clawedge %s: no daemon running (figures from the store)\n", r.Version)
	}
	if r.WiFi != "" {
		fmt.Fprintf(out, "wifi: %s\n", r.WiFi)
	}
	if r.Store != "" {
		fmt.Fprintf(out, "store: %s\n", r.Store)
	}
	if r.LocalReply != nil {
		fmt.Fprintf(out, "local model, last reply: %s\n", r.LocalReply.Line)
	}
	fmt.Fprintln(out)
	if len(r.Models) == 0 {
		fmt.Fprintln(out, "Models: none used yet")
	} else {
		fmt.Fprintf(out, "Models (strategy %s):\n", cmp.Or(r.Strategy, "?"))
		tw := tabwriter.NewWriter(out, 2, 8, 2, ' ', 0)
		fmt.Fprintln(tw, "  NAME\tMODEL\tCALLS\tFAILED\tSKIPPED\tTOKENS IN\tTOKENS OUT\tCOST\tMEAN LATENCY\tLAST ROUTE")
		for _, m := range r.Models {
			mean := "-"
			if m.Replies > 0 {
				mean = (m.Latency / time.Duration(m.Replies)).Round(time.Millisecond).String()
			}
			fmt.Fprintf(tw, "  %s\t%s\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s\n", m.Name, cmp.Or(m.Model, "-"), m.Calls, m.Failures, m.Skips,
				m.TokensIn, m.TokensOut, formatCost(m.Cost), mean, cmp.Or(flatLine(m.LastRoute), "-"))
		}
		tw.Flush()
	}
	if len(r.Routes) > 0 {
		fmt.Fprintln(out, "\nWhy each model was chosen (this run):")
		for _, p := range slices.Sorted(maps.Keys(r.Routes)) {
			reasons := r.Routes[p]
			keys := slices.Sorted(maps.Keys(reasons))
			sort.SliceStable(keys, func(i, j int) bool { return reasons[keys[i]] > reasons[keys[j]] })
			for _, k := range keys {
				fmt.Fprintf(out, "  %s: %d× %s\n", p, reasons[k], flatLine(k))
			}
		}
	}
	fmt.Fprintln(out)
	if len(r.Sessions) == 0 {
		fmt.Fprintln(out, "Sessions: none")
	} else {
		fmt.Fprintln(out, "Sessions:")
		tw := tabwriter.NewWriter(out, 2, 8, 2, ' ', 0)
		fmt.Fprintln(tw, "  CHANNEL\tUSER\tSTATE\tTURNS\tLAST STOP\tTOKENS\tCOST\tUPDATED")
		for _, s := range r.Sessions {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%d\t%s\t%d\t%s\t%s\n", s.Channel, s.User, s.State, s.Turns, cmp.Or(s.LastStop, "-"),
				s.Tokens, formatCost(s.Cost), s.Updated.Local().Format("2006-01-02 15:04:05"))
		}
		tw.Flush()
	}
	if au := r.Automations; au != nil {
		fmt.Fprintf(out, "\nAutomations (%s):\n", au.Timezone)
		fmt.Fprintln(out, indent(automations.FormatList(au.Automations, au.Location(), au.ClockTrusted)))
	}
	if len(r.Goals) > 0 {
		fmt.Fprintln(out, "\nGoals being pursued (clawedge goal show ID):")
		fmt.Fprintln(out, indent(goals.FormatList(r.Goals)))
	}
	if len(r.Approvals) > 0 {
		fmt.Fprintln(out, "\nWaiting for approval (approve ID / deny ID on a console, or clawedge exec 'approve ID'):")
		for _, p := range r.Approvals {
			fmt.Fprintf(out, "  [%s] %s (from %s on %s, until %s)\n", p.ID, p.Call, p.User, p.Channel, p.Deadline.Local().Format("15:04:05"))
		}
	}
}

func formatCost(c float64) string {
	if c == 0 {
		return "0"
	}
	return fmt.Sprintf("%.4f", c)
}

func flatLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func indent(s string) string { return "  " + strings.ReplaceAll(s, "\n", "\n  ") }
