package main

import (
	"context"
	"fmt"
	"os/signal"
	"syscall"
	"time"

	"github.com/clawedge/clawedge/store"
	"github.com/spf13/cobra"
)

func newAuditCmd(g *globalFlags) *cobra.Command {
	var tail int
	var follow bool
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Show the audit trail: every command's intent (written before it ran) and outcome",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(g)
			if err != nil {
				return err
			}
			s, err := store.Open(cfg.DataDir, store.Options{Timeout: time.Second, ReadOnly: true})
			if err != nil {
				return err
			}
			entries, err := s.Tail(tail)
			s.Close()
			if err != nil {
				return err
			}
			var last uint64
			for _, e := range entries {
				fmt.Fprintln(cmd.OutOrStdout(), e)
				last = e.ID
			}
			if !follow {
				return nil
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			return followAudit(ctx, cmd, cfg.DataDir, last)
		},
	}
	cmd.Flags().IntVarP(&tail, "tail", "n", 20, "how many of the latest entries to show")
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing new entries as they are written")
	return cmd
}

// followAudit polls for entries after last. It opens the store only briefly each
// time, so it never keeps the daemon from opening it.
func followAudit(ctx context.Context, cmd *cobra.Command, dataDir string, last uint64) error {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		s, err := store.Open(dataDir, store.Options{Timeout: 200 * time.Millisecond, ReadOnly: true})
		if err != nil {
			continue // the daemon holds it right now; try again
		}
		entries, err := s.AuditSince(last, 1000)
		s.Close()
		if err != nil {
			return err
		}
		for _, e := range entries {
			fmt.Fprintln(cmd.OutOrStdout(), e)
			last = e.ID
		}
	}
}
