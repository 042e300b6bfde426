package main

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"syscall"

	"github.com/clawedge/clawedge/channels"
	"github.com/clawedge/clawedge/config"
	"github.com/clawedge/clawedge/daemon"
	"github.com/clawedge/clawedge/doctor"
	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/setup"
	"github.com/clawedge/clawedge/store"
	"github.com/clawedge/clawedge/tools"
)

// loadConfig finds and loads the config the way every command does.
func loadConfig(g *globalFlags) (*config.Config, error) {
	return loadConfigFile(g, loadWithSecrets) // secret.go
}

// loadConfigFile finds the config file and loads it with load; with none, the
// built-in defaults.
func loadConfigFile(g *globalFlags, load func(path string) (*config.Config, error)) (*config.Config, error) {
	path := g.config
	if path == "" {
		var err error
		if path, err = config.Find(); err != nil {
			return nil, err
		}
	}
	if path == "" {
		return config.Builtin(), nil
	}
	return load(path)
}

func newLogger(g *globalFlags, def slog.Level) *slog.Logger {
	level := def
	if g.logLevel != "" {
		if err := level.UnmarshalText([]byte(g.logLevel)); err != nil {
			level = def
		}
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
}

// dialDaemon connects to the daemon running for cfg, or returns nil, nil when none
// does (then the command opens the store and board itself). A daemon this user
// may not reach, or must not trust, is an error: the command must not go on as if
// none ran (status would show empty figures, exec would try the board itself).
func dialDaemon(cfg *config.Config) (*channels.ControlClient, error) {
	path := daemon.ControlPath(cfg)
	c, err := channels.DialControl(path, cmp.Or(os.Getenv("USER"), "cli"))
	switch {
	case err == nil:
		return c, nil
	case errors.Is(err, channels.ErrUntrustedPeer):
		return nil, err
	case errors.Is(err, fs.ErrPermission):
		return nil, notAccessible("the daemon's control socket", path, cfg.DataDir, err)
	}
	return nil, nil // no socket, or nobody listening: no daemon
}

// notAccessible says that what the daemon keeps in dataDir cannot be reached by
// this user, and who can reach it.
func notAccessible(what, path, dataDir string, err error) error {
	owner := ""
	if o, oerr := store.OwnershipOf(dataDir); oerr == nil {
		owner = fmt.Sprintf(" (uid %d owns %s)", o.Owner, dataDir)
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		err = errno
	}
	return fmt.Errorf("%s %s is not accessible to this user (uid %d): %v; run this command as the daemon's user%s, e.g. sudo -u <that user> clawedge ...",
		what, path, os.Geteuid(), err, owner)
}

// openCore opens the one Core of cfg for a command that acts without a
// daemon (the offline path), logging at warn unless --log-level says.
func openCore(cfg *config.Config, g *globalFlags) (*daemon.Core, error) {
	return daemon.Open(cfg, coreOptions(g, slog.LevelWarn))
}

// coreOptions are the facts of this process a Core is opened with.
func coreOptions(g *globalFlags, level slog.Level) daemon.Options {
	log := newLogger(g, level)
	slog.SetDefault(log)
	return daemon.Options{Version: version, Log: log, UpdateStatus: updateStatus, Findings: doctor.InDaemon, Sim: newSim,
		Setup: setup.Dashboard} // the dashboard's setup page and its setup/* tools
}

// newSim makes the simulated board's driver; tests replace it to keep a
// handle on the simulated pins (nil: hal/sim's).
var newSim func() hal.Driver

// loadRegistry is the registry the config would have, for its specs only
// (daemon.Listing): `tools` and `parse` run beside a daemon that holds the
// real GPIO lines.
func loadRegistry(g *globalFlags) (*tools.Registry, error) {
	cfg, err := loadConfig(g)
	if err != nil {
		return nil, err
	}
	a, err := daemon.Listing(cfg, coreOptions(g, slog.LevelWarn))
	if err != nil {
		return nil, err
	}
	return a.Registry(), nil
}
