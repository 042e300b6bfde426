package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/clawedge/clawedge/agent"
	"github.com/clawedge/clawedge/automations"
	"github.com/clawedge/clawedge/goals"
	"github.com/clawedge/clawedge/llm/router"
	"github.com/clawedge/clawedge/policy"
	"github.com/clawedge/clawedge/store"
	"github.com/spf13/cobra"
)

// statusReport is what `clawedge status` shows; its JSON (--json, and the control
// socket's status op) keeps these keys.
type statusReport struct {
	Version  string `json:"version"`
	Daemon   bool   `json:"daemon"`
	Uptime   string `json:"uptime,omitempty"`
	Board    string `json:"board,omitempty"`
	Strategy string `json:"strategy,omitempty"`
	// WiFi is the radio's state: "no radio (wlan0 absent)", `wlan0 joined
	// "Home", signal -52 dBm` (wifi.go).
	WiFi string `json:"wifi,omitempty"`
	// Models are the router's totals per model, over runs (persisted at each turn).
	Models []router.Stats `json:"models"`
	// Routes counts, per provider, why it was chosen (this run of the daemon).
	Routes    map[string]map[string]int `json:"routes,omitempty"`
	Sessions  []agent.SessionInfo       `json:"sessions"`
	Approvals []policy.Pending          `json:"approvals"`
	// Automations is the scheduler's state (the daemon only; automations.go).
	Automations *autoReply `json:"automations,omitempty"`
	// Goals are the goals still pursued (the daemon only; goals.go).
	Goals []goals.Goal `json:"goals,omitempty"`
	// Store is how full the store is (storeusage.go).
	Store string `json:"store,omitempty"`
	// LocalReply is the local model's last reply in this run of the daemon
	// (none yet: absent): how many of its prompt tokens were cached, and how
	// many of those came from the prefix state saved on disk.
	LocalReply *localReply `json:"local_reply,omitempty"`
}

type localReply struct {
	PromptTokens int     `json:"prompt_tokens"`
	CachedTokens int     `json:"cached_tokens"`
	SavedTokens  int     `json:"saved_tokens"`
	FirstTokenMS float64 `json:"first_token_ms"`
	Line         string  `json:"line"` // llm.Final.Speed
}

// statusJSON is the daemon's answer to the control socket's status op.
func (a *app) statusJSON() (any, error) {
	r := statusReport{Version: version, Daemon: true, Uptime: time.Since(a.started).Round(time.Second).String(),
		Board: a.board.Driver(), Models: []router.Stats{}, Sessions: []agent.SessionInfo{}, Approvals: []policy.Pending{}}
	if a.cfg != nil {
		r.WiFi, _ = wifiInfo(a.cfg.Network)
	}
	if u, err := a.store.Usage(); err == nil {
		r.Store = usageLine(u)
	}
	if a.local != nil {
		if f := a.local.LastReply(); f != nil {
			r.LocalReply = &localReply{PromptTokens: f.Usage.PromptTokens, CachedTokens: f.Usage.CachedTokens,
				SavedTokens: f.Usage.SavedTokens, FirstTokenMS: float64(f.Timing.FirstToken.Microseconds()) / 1000, Line: f.Speed()}
		}
	}
	if a.auth != nil { // every door's calls waiting for a person, not only the model's
		r.Approvals = append(r.Approvals, a.auth.List()...)
	}
	if a.router != nil {
		r.Strategy = string(a.router.Strategy())
		r.Models = a.router.Stats()
	}
	if a.agent != nil {
		st, err := a.agent.Status()
		if err != nil {
			return nil, err
		}
		r.Sessions = st.Sessions
		for _, m := range st.Models {
			if len(m.Routes) == 0 {
				continue
			}
			if r.Routes == nil {
				r.Routes = map[string]map[string]int{}
			}
			r.Routes[m.Provider] = m.Routes
		}
	} else if a.store != nil {
		r.Sessions, _ = agent.StoredSessions(a.store)
	}
	if r.Sessions == nil {
		r.Sessions = []agent.SessionInfo{}
	}
	if a.sched != nil {
		ar, _ := autoDo(a.sched, autoRequest{Op: "list"})
		r.Automations = &ar
	}
	if a.goals != nil {
		for _, g := range a.goals.List() {
			if !g.State.Finished() {
				r.Goals = append(r.Goals, g)
			}
		}
	}
	return r, nil
}

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
			var rep statusReport
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
				rep = statusReport{Version: version, Strategy: cfg.Models.Router.Strategy, Models: []router.Stats{},
					Sessions: []agent.SessionInfo{}, Approvals: []policy.Pending{}}
				rep.WiFi, _ = wifiInfo(cfg.Network)
				st, err := store.Open(cfg.DataDir, store.Options{ReadOnly: true, Timeout: time.Second})
				switch {
				case err == nil:
					defer st.Close()
					st.SetRetention(retentionOf(cfg))
					if u, err := st.Usage(); err == nil {
						rep.Store = usageLine(u)
					}
					if rep.Sessions, err = agent.StoredSessions(st); err != nil {
						return err
					}
					a := &app{store: st}
					if t := a.savedTotals(); t != nil {
						rep.Models = t
					}
				case errors.Is(err, store.ErrInUse):
					return fmt.Errorf("%w, but its control socket %s does not answer", err, controlPath(cfg))
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

func printStatus(out io.Writer, r statusReport) {
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
		fmt.Fprintf(out, "Models (strategy %s):\n", or(r.Strategy, "?"))
		tw := tabwriter.NewWriter(out, 2, 8, 2, ' ', 0)
		fmt.Fprintln(tw, "  NAME\tMODEL\tCALLS\tFAILED\tSKIPPED\tTOKENS IN\tTOKENS OUT\tCOST\tMEAN LATENCY\tLAST ROUTE")
		for _, m := range r.Models {
			mean := "-"
			if m.Replies > 0 {
				mean = (m.Latency / time.Duration(m.Replies)).Round(time.Millisecond).String()
			}
			fmt.Fprintf(tw, "  %s\t%s\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s\n", m.Name, or(m.Model, "-"), m.Calls, m.Failures, m.Skips,
				m.TokensIn, m.TokensOut, formatCost(m.Cost), mean, or(flatLine(m.LastRoute), "-"))
		}
		tw.Flush()
	}
	if len(r.Routes) > 0 {
		fmt.Fprintln(out, "\nWhy each model was chosen (this run):")
		for _, p := range sortedKeys(r.Routes) {
			reasons := r.Routes[p]
			keys := sortedKeys(reasons)
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
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%d\t%s\t%d\t%s\t%s\n", s.Channel, s.User, s.State, s.Turns, or(s.LastStop, "-"),
				s.Tokens, formatCost(s.Cost), s.Updated.Local().Format("2006-01-02 15:04:05"))
		}
		tw.Flush()
	}
	if au := r.Automations; au != nil {
		fmt.Fprintf(out, "\nAutomations (%s):\n", au.Timezone)
		fmt.Fprintln(out, indent(automations.FormatList(au.Automations, au.location(), au.ClockTrusted)))
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
