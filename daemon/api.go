package daemon

// This file: what commands that act without a daemon use of the one Core
// (the offline path): the same pieces the daemon serves with, built by Open.

import (
	"context"
	"sync"

	"github.com/clawedge/clawedge/automations"
	"github.com/clawedge/clawedge/channels"
	"github.com/clawedge/clawedge/goals"
	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/mcpclient"
	"github.com/clawedge/clawedge/policy"
	"github.com/clawedge/clawedge/skills"
	"github.com/clawedge/clawedge/store"
	"github.com/clawedge/clawedge/tools"
)

// Store is the Core's store (nil for a Listing).
func (a *Core) Store() *store.Store { return a.store }

// Board is the Core's board.
func (a *Core) Board() *hal.Board { return a.board }

// Registry holds every tool the config gives this board.
func (a *Core) Registry() *tools.Registry { return a.reg }

// Runner is the one call path.
func (a *Core) Runner() *tools.Runner { return a.runner }

// Policy is the Core's one policy (policy.FromConfig with this board's
// skills and read-only tools).
func (a *Core) Policy() *policy.Policy { return a.policy() }

// Authorizer is the Core's one authorizer.
func (a *Core) Authorizer() *policy.Authorizer { return a.authorizer() }

// Skills are the installed skills that loaded, and why the others did not.
func (a *Core) Skills() ([]*skills.Skill, []error) {
	list := a.loadSkills()
	return list, a.skillErrs
}

// Dispatcher is the Dispatcher a console of this Core answers with: commands
// on the call path, free text to the agent when a model is configured.
func (a *Core) Dispatcher() *channels.Dispatcher { return a.dispatcher() }

// StartMCPClients starts the configured MCP servers until ctx ends (wg
// waits for them) and returns their states; nil: none configured.
func (a *Core) StartMCPClients(ctx context.Context, wg *sync.WaitGroup) func() []mcpclient.State {
	m := a.mcpManager()
	if m == nil {
		return nil
	}
	wg.Go(m.Start(ctx, MCPServers(a.cfg)).Wait)
	return m.States
}

// StartAutomations starts the scheduler of the config's automations, so the
// auto/* tools act on it (d answers ask actions; nil: none). Its Wait
// returns when the runs it started are over.
func (a *Core) StartAutomations(ctx context.Context, d *channels.Dispatcher) (*automations.Scheduler, error) {
	s, err := a.newScheduler(d)
	if err != nil {
		return nil, err
	}
	if err := s.Start(ctx); err != nil {
		return nil, err
	}
	a.sched = s
	a.autoTools.Set(s)
	return s, nil
}

// ReadyGoals builds the goal runtime, not running, so the goal/* tools reach it.
func (a *Core) ReadyGoals() error {
	_, err := a.Goals()
	return err
}

// Goals is the goal runtime, built once and not running: for the goal/*
// tools and for reading the goals without a daemon.
func (a *Core) Goals() (*goals.Runtime, error) {
	if a.goals != nil {
		return a.goals, nil
	}
	rt, err := a.newGoals()
	a.goals = rt
	return rt, err
}
