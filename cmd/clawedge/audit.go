package main

import (
	"encoding/json"
	"fmt"
	"github.com/clawedge/clawedge/internal/termsafe"
	"time"

	"github.com/clawedge/clawedge/agent"
	"github.com/clawedge/clawedge/channels"
	"github.com/clawedge/clawedge/config"
	"github.com/clawedge/clawedge/store"
	"github.com/spf13/cobra"
)

func newAuditCmd(g *globalFlags) *cobra.Command {
	var tail int
	var steps bool
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Show the audit trail: every command's intent (written before it ran) and outcome",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(g)
			if err != nil {
				return err
			}
			if tail < 1 {
				return fmt.Errorf("-n %d: want how many entries to show, at least 1", tail)
			}
			if steps {
				return printSteps(cmd, cfg, tail)
			}
			// The daemon shows its own trail, a page at a time.
			return printLines(cmd, cfg, func(d *channels.ControlClient) ([]string, error) { return auditRemote(d, tail) },
				func(s *store.Store) ([]string, error) {
					entries, err := s.Tail(tail)
					if err != nil {
						return nil, err
					}
					return withDropped(s, entries, tail), nil
				})
		},
	}
	cmd.Flags().IntVarP(&tail, "tail", "n", 20, "how many of the latest entries to show")
	cmd.Flags().BoolVar(&steps, "steps", false, "show the agent's model steps instead: each one's input (digest, size) and raw output, recorded before any of its calls ran")
	return cmd
}

// auditPage is how many entries the daemon's "audit" op returns at most; a
// client asking for more pages back with "before".
const auditPage = 200

// auditPageArg asks for up to N entries with an id below Before (0: the latest).
type auditPageArg struct {
	N      int    `json:"n"`
	Before uint64 `json:"before,omitempty"`
}

// auditPageReply is one page, oldest first; First is the id of its first entry.
type auditPageReply struct {
	Lines []string `json:"lines"`
	First uint64   `json:"first"`
}

// auditRemote reads the last n entries from the daemon, page by page.
func auditRemote(d *channels.ControlClient, n int) ([]string, error) {
	var pages [][]string
	var before uint64
	for got := 0; got < n; {
		raw, err := d.Op("audit", auditPageArg{N: min(n-got, auditPage), Before: before})
		if err != nil {
			return nil, err
		}
		var p auditPageReply
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, fmt.Errorf("daemon reply: %w", err)
		}
		if len(p.Lines) == 0 {
			break
		}
		pages = append(pages, p.Lines)
		got += len(p.Lines)
		if before = p.First; before <= 1 {
			break
		}
	}
	var lines []string
	for i := len(pages) - 1; i >= 0; i-- {
		lines = append(lines, pages[i]...)
	}
	return lines, nil
}

// auditOp is the daemon's answer to the control op "audit" (auditPageArg).
func (a *app) auditOp(arg json.RawMessage) (any, error) {
	var p auditPageArg
	if err := json.Unmarshal(arg, &p); err != nil {
		return nil, err
	}
	entries, err := a.store.TailBefore(p.Before, min(max(p.N, 1), auditPage))
	if err != nil {
		return nil, err
	}
	r := auditPageReply{Lines: withDropped(a.store, entries, min(max(p.N, 1), auditPage))}
	if len(entries) > 0 {
		r.First = entries[0].ID
	}
	return r, nil
}

// withDropped is the lines of entries, after a line saying what retention
// dropped when they reach back to the start of what is kept (fewer than
// asked for): the gap is never silent.
func withDropped(s *store.Store, entries []store.AuditEntry, asked int) []string {
	lines := entryLines(entries)
	if len(entries) >= asked {
		return lines
	}
	if d, err := s.DroppedSoFar(); err == nil && d.Audit.Count > 0 {
		lines = append([]string{"(dropped by retention before these: " + d.Audit.String() + ")"}, lines...)
	}
	return lines
}

func entryLines(entries []store.AuditEntry) []string {
	lines := make([]string, len(entries))
	for i, e := range entries {
		lines[i] = e.String()
	}
	return lines
}

// maxSteps is the most model steps --steps shows (each can be long).
const maxSteps = 1000

// printSteps shows the last n model steps, from the daemon or the store.
func printSteps(cmd *cobra.Command, cfg *config.Config, n int) error {
	if n > maxSteps {
		fmt.Fprintf(cmd.ErrOrStderr(), "note: showing the last %d steps, the most --steps shows\n", maxSteps)
		n = maxSteps
	}
	return printLines(cmd, cfg, func(d *channels.ControlClient) ([]string, error) {
		raw, err := d.Op("steps", n)
		if err != nil {
			return nil, err
		}
		var lines []string
		if err := json.Unmarshal(raw, &lines); err != nil {
			return nil, fmt.Errorf("daemon reply: %w", err)
		}
		return lines, nil
	}, func(s *store.Store) ([]string, error) {
		recs, err := s.StepsTail(n)
		return agent.StepLines(recs), err
	})
}

// printLines prints the lines the daemon gives (remote) when one runs, since it
// holds the store, else the lines read from the store opened read-only (local).
func printLines(cmd *cobra.Command, cfg *config.Config, remote func(*channels.ControlClient) ([]string, error), local func(*store.Store) ([]string, error)) error {
	d, err := dialDaemon(cfg)
	if err != nil {
		return err
	}
	var lines []string
	if d != nil {
		defer d.Close()
		lines, err = remote(d)
	} else {
		var s *store.Store
		if s, err = store.Open(cfg.DataDir, store.Options{Timeout: time.Second, ReadOnly: true}); err != nil {
			return err
		}
		defer s.Close()
		lines, err = local(s)
	}
	if err != nil {
		return err
	}
	// Audit lines hold what came from outside (outputs, user names, MQTT
	// payloads): escaped for the terminal.
	for _, l := range lines {
		fmt.Fprintln(cmd.OutOrStdout(), termsafe.String(l))
	}
	return nil
}

// stepLines is the daemon's answer to the control op "steps" (arg: how many).
func (a *app) stepLines(arg json.RawMessage) (any, error) {
	n := 20
	if len(arg) > 0 {
		if err := json.Unmarshal(arg, &n); err != nil {
			return nil, err
		}
	}
	recs, err := a.store.StepsTail(min(max(n, 1), maxSteps))
	if err != nil {
		return nil, err
	}
	return agent.StepLines(recs), nil
}
