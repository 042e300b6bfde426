package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/clawedge/clawedge/store"
	"github.com/spf13/cobra"
)

func newAuditCmd(g *globalFlags) *cobra.Command {
	var tail int
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Show the audit trail: every command's intent (written before it ran) and outcome",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(g)
			if err != nil {
				return err
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
	return cmd
}
