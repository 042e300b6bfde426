package main

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/clawedge/clawedge/agent"
	"github.com/clawedge/clawedge/channels"
	"github.com/clawedge/clawedge/config"
	"github.com/clawedge/clawedge/daemon"
	"github.com/clawedge/clawedge/internal/termsafe"
	"github.com/clawedge/clawedge/store"
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
					return daemon.WithDropped(s, entries, tail), nil
				})
		},
	}
	cmd.Flags().IntVarP(&tail, "tail", "n", 20, "how many of the latest entries to show")
	cmd.Flags().BoolVar(&steps, "steps", false, "show the agent's model steps instead: each one's input (digest, size) and raw output, recorded before any of its calls ran")
	return cmd
}

// auditRemote reads the last n entries from the daemon, page by page.
func auditRemote(d *channels.ControlClient, n int) ([]string, error) {
	var pages [][]string
	var before uint64
	for got := 0; got < n; {
		raw, err := d.Op("audit", daemon.AuditPageArg{N: min(n-got, daemon.AuditPage), Before: before})
		if err != nil {
			return nil, err
		}
		var p daemon.AuditPageReply
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

// printSteps shows the last n model steps, from the daemon or the store.
func printSteps(cmd *cobra.Command, cfg *config.Config, n int) error {
	if n > daemon.MaxSteps {
		fmt.Fprintf(cmd.ErrOrStderr(), "note: showing the last %d steps, the most --steps shows\n", daemon.MaxSteps)
		n = daemon.MaxSteps
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
