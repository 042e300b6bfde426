package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/clawedge/clawedge/agent"
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
			if steps {
				return printSteps(cmd, cfg, tail)
			}
			if d := dialDaemon(cfg); d != nil {
				// The daemon holds the store; it shows its own trail.
				defer d.Close()
				r, err := d.Send(fmt.Sprintf("@sys/audit{n=%d}", min(max(tail, 1), 200)))
				if err != nil {
					return err
				}
				if r.Failed {
					return errors.New(strings.TrimPrefix(r.Text, "error: "))
				}
				fmt.Fprintln(cmd.OutOrStdout(), r.Text)
				return nil
			}
			s, err := store.Open(cfg.DataDir, store.Options{Timeout: time.Second, ReadOnly: true})
			if err != nil {
				return err
			}
			defer s.Close()
			entries, err := s.Tail(tail)
			if err != nil {
				return err
			}
			for _, e := range entries {
				fmt.Fprintln(cmd.OutOrStdout(), e)
			}
			return nil
		},
	}
	cmd.Flags().IntVarP(&tail, "tail", "n", 20, "how many of the latest entries to show")
	cmd.Flags().BoolVar(&steps, "steps", false, "show the agent's model steps instead: each one's input (digest, size) and raw output, recorded before any of its calls ran")
	return cmd
}

// printSteps shows the last n model steps, from the daemon or the store.
func printSteps(cmd *cobra.Command, cfg *config.Config, n int) error {
	n = min(max(n, 1), 1000)
	var lines []string
	if d := dialDaemon(cfg); d != nil {
		defer d.Close()
		raw, err := d.Op("steps", n)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(raw, &lines); err != nil {
			return fmt.Errorf("daemon reply: %w", err)
		}
	} else {
		s, err := store.Open(cfg.DataDir, store.Options{Timeout: time.Second, ReadOnly: true})
		if err != nil {
			return err
		}
		defer s.Close()
		recs, err := s.StepsTail(n)
		if err != nil {
			return err
		}
		lines = agent.StepLines(recs)
	}
	for _, l := range lines {
		fmt.Fprintln(cmd.OutOrStdout(), l)
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
	recs, err := a.store.StepsTail(min(max(n, 1), 1000))
	if err != nil {
		return nil, err
	}
	return agent.StepLines(recs), nil
}
