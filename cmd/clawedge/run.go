package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/clawedge/clawedge/daemon"
	"github.com/clawedge/clawedge/store"
)

func newRunCmd(g *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "run",
		Short: "Run the daemon: open the board and serve the configured consoles until SIGINT/SIGTERM",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			limitMemory()
			cfg, err := loadConfig(g)
			if err != nil {
				return err
			}
			// A config another user can edit is theirs: tools, users, data_dir.
			if cfg.Source != "" {
				if err := store.CheckTrusted(cfg.Source); err != nil {
					return fmt.Errorf("config: %w", err)
				}
			}
			opt := coreOptions(g, slog.LevelInfo)
			opt.UpdateReport = updateReport() // update_run.go
			a, err := daemon.Open(cfg, opt)
			if err != nil {
				return err
			}
			defer a.Close()
			ctx, stop := stopOnSignal(cmd.Context())
			defer stop()
			return a.Serve(ctx)
		},
	}
}

// stopOnSignal is signal.NotifyContext with daemon.ErrStopping as the cause, so that a
// call cut short by the stop says so in its outcome.
func stopOnSignal(parent context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case <-sigs:
			cancel(daemon.ErrStopping)
		case <-ctx.Done():
		}
	}()
	return ctx, func() { signal.Stop(sigs); cancel(nil) }
}

// defaultMemoryLimit is the daemon's soft heap limit. Without one, Go lets the
// heap grow to twice the live data between collections and returns freed pages
// slowly, so a daemon that handles a burst of commands sits at twice the RSS it
// needs; on a 512 MB board that matters. The live heap is well under this, so
// the GC only works harder during bursts. GOMEMLIMIT overrides it.
const defaultMemoryLimit = 8 << 20

func limitMemory() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(defaultMemoryLimit)
	}
}
