package daemon

// This file: the boards subsystem (docs/boards.md): this board's A2A server
// and the paired boards' tools, wired from the config's boards section.
// The board/* tools are registered with the others; they act once Open has
// made the service (its runner is the Core's, its policy the one policy).

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"time"

	"github.com/clawedge/clawedge/boards"
	"github.com/clawedge/clawedge/policy/vocab"
	"github.com/clawedge/clawedge/tools"
)

// OpBoards is the control socket op that returns the boards' states.
const OpBoards = "boards"

// registerBoardTools adds board/* when the config has a boards section.
func (a *Core) registerBoardTools() error {
	if a.cfg.Boards == nil {
		return nil
	}
	return boards.RegisterTools(a.reg, &a.boardTools)
}

// openBoards makes the boards service of a Core that runs tools (not a
// listing): its identity and paired boards from the store, their tools
// registered as last seen.
func (a *Core) openBoards() error {
	c := a.cfg.Boards
	if c == nil || a.listing {
		return nil
	}
	svc, err := boards.Open(a.store, &boards.Service{
		Name: BoardName(c.Name), Listen: c.Listen, URL: c.URL, Timeout: time.Duration(c.Timeout), Discover: c.Discovery,
		Runner: a.runner, Version: a.version, Log: a.log,
		Offered: func(caller tools.Caller, tool string) bool { return a.policy().Offered(caller, tool) },
	})
	if err != nil {
		return err
	}
	a.boards = svc
	a.boardTools.Set(svc)
	return nil
}

// BoardName is this board's name among boards: boards.name, else the host
// name made one (lower case, what is not a letter, digit, _ or - dropped).
func BoardName(configured string) string {
	if configured != "" {
		return configured
	}
	host, _ := os.Hostname()
	host, _, _ = strings.Cut(strings.ToLower(host), ".")
	host = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			return r
		}
		return -1
	}, host)
	host = strings.TrimLeft(host, "0123456789_-")
	if len(host) > 32 {
		host = host[:32]
	}
	if !vocab.Board(host) {
		return "board"
	}
	return host
}

// boardsSubsystem serves A2A and probes the paired boards.
type boardsSubsystem struct{ s *boards.Service }

func (b boardsSubsystem) Name() string                    { return "boards" }
func (b boardsSubsystem) Start(ctx context.Context) error { return b.s.Start(ctx) }
func (b boardsSubsystem) Stop(ctx context.Context) error  { return b.s.Stop(ctx) }

// boardsOp answers `clawedge board list`: the paired boards and their states.
func (a *Core) boardsOp(json.RawMessage) (any, error) {
	if a.boards == nil {
		return []boards.Status{}, nil
	}
	return a.boards.List(), nil
}
