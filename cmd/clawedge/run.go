package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/clawedge/clawedge/daemon"
	"github.com/clawedge/clawedge/setup"
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
			closed := false
			defer func() {
				if !closed {
					a.Close()
				}
			}()
			ctx, stop := stopOnSignal(cmd.Context())
			defer stop()
			err = a.Serve(ctx)
			if errors.Is(err, daemon.ErrRestart) { // setup/write: start again with the new config
				stop()
				a.Close() // outputs to their safe levels, the store closed
				closed = true
				return restartWith(a.RestartConfig())
			}
			return err
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

// restartWith starts this program again in this process (the same pid, so
// systemd and clawedge-init see the same service) as `run` with the config
// setup wrote, and the secrets it wrote beside it (clawedge.env) in the
// environment, as a service's EnvironmentFile= gives them.
func restartWith(path string) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("restarting: %w", err)
	}
	args := []string{exe}
	skip := false
	for _, a := range os.Args[1:] {
		switch {
		case skip:
			skip = false
		case a == "--config":
			skip = true
		case strings.HasPrefix(a, "--config="):
		default:
			args = append(args, a)
		}
	}
	args = append(args, "--config", path)
	env := os.Environ()
	for k, v := range setup.EnvFile(path) {
		env = append(env, k+"="+v) // the last of a name wins
	}
	slog.Info("restarting with the config setup wrote", "config", path)
	return syscall.Exec(exe, args, env)
}
