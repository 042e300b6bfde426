package daemon

// This file: the dashboard's setup page (web.SetupFacts) and its setup/*
// tools come from the setup package, which sits above daemon (it uses
// doctor, which uses daemon): cmd/clawedge hands them in (Options.Setup),
// given where the config is written and how this daemon restarts with it.
// A restart is the daemon's clean stop (outputs back to their safe levels,
// the store closed) followed by the same program started again with the
// config written (cmd/clawedge's run: ErrRestart).

import (
	"cmp"
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/clawedge/clawedge/channels/web"
	"github.com/clawedge/clawedge/tools"
	"github.com/clawedge/clawedge/update"
)

// SetupPlace is what the setup page needs of this daemon.
type SetupPlace struct {
	Config  string // the config file setup writes
	DataDir string
	Started time.Time
	// Restart restarts the daemon with the config at path once the call
	// that asked has answered; an error when no daemon is serving.
	Restart func(path string) error
}

// SetupFunc registers the setup tools on reg for place and returns the
// setup page's facts.
type SetupFunc func(reg *tools.Registry, place SetupPlace) (web.SetupFacts, error)

// ErrRestart ends Serve when the daemon is to start again with the config
// setup wrote (RestartConfig).
var ErrRestart = errors.New("restarting with the config setup wrote")

// restartDelay lets the answer of the call that asked for the restart
// reach its browser before the dashboard stops.
const restartDelay = 300 * time.Millisecond

// registerSetup registers the setup tools through opt.Setup.
func (a *Core) registerSetup() error {
	if a.opt.Setup == nil {
		return nil
	}
	path := cmp.Or(os.Getenv(update.SetupConfigEnv), a.cfg.Source, "clawedge.yaml")
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	facts, err := a.opt.Setup(a.reg, SetupPlace{Config: path, DataDir: a.cfg.DataDir, Started: a.started, Restart: a.restartWith})
	a.setupFacts = facts
	return err
}

// restartWith stops the serving daemon with ErrRestart, shortly, so that it
// starts again with the config at path.
func (a *Core) restartWith(path string) error {
	a.restartMu.Lock()
	defer a.restartMu.Unlock()
	if a.stopServe == nil {
		return errors.New("no daemon is serving here: start clawedge run to apply it")
	}
	a.restartTo = path
	stop := a.stopServe
	time.AfterFunc(restartDelay, func() { stop(ErrRestart) })
	return nil
}

// RestartConfig is the config the daemon is to start again with, after
// Serve ended with ErrRestart.
func (a *Core) RestartConfig() string {
	a.restartMu.Lock()
	defer a.restartMu.Unlock()
	return a.restartTo
}
