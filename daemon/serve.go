package daemon

// This file: the daemon's subsystems, in the one order they start (and the
// reverse one they stop), each given what it depends on.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"sync"

	"github.com/clawedge/clawedge/channels"
	"github.com/clawedge/clawedge/channels/mcpserver"
	"github.com/clawedge/clawedge/mcpclient"
	"github.com/clawedge/clawedge/tools"
)

// Serve runs the daemon of a until ctx ends: the subsystems in their order,
// ready (systemd, the log) once all run. Outputs go back to their safe
// level in Close, which the caller defers.
func (a *Core) Serve(ctx context.Context) error {
	if n, err := a.store.Interrupted(); err != nil {
		return err
	} else if n > 0 {
		a.log.Warn("commands interrupted by the last stop; their effect is unknown (see clawedge audit)", "count", n)
	}
	a.serving = true
	ctx, fail := context.WithCancelCause(ctx)
	defer fail(nil)
	a.restartMu.Lock()
	a.stopServe = fail // web_setup.go: a restart after setup/write
	a.restartMu.Unlock()
	subs := a.subsystems(func(err error) { fail(err) })
	sd := newNotifier() // systemd Type=notify and WatchdogSec= (sdnotify.go)
	err := Run(ctx, subs, func(names []string) {
		a.log.Info("clawedge ready", "version", a.version, "board", a.board.Driver(), "pins", len(a.board.Pins()),
			"tools", len(a.reg.Specs()), "channels", names, "store", a.store.Path())
		if n, err := releaseStartupPages(); err != nil { // startup_pages.go
			a.log.Warn("start-up pages kept mapped", "err", err)
		} else {
			a.log.Debug("start-up pages unmapped", "mapped_bytes", n)
		}
		sd.ready("clawedge " + a.version + " ready on board " + a.board.Driver())
		go sd.feedWatchdog(ctx, a.healthy, func(err error) { a.log.Warn("systemd watchdog", "err", err) })
		if tell := a.opt.UpdateReport; tell != "" { // a failed update, from clawedge-init
			a.log.Error(tell)
			go a.tell.Owners(ctx, tell)
		}
	}, func() {
		sd.stopping()
		a.log.Info("stopping: returning outputs to their safe levels")
	})
	return err
}

// subsystems are the daemon's parts in the order they start; fail ends the
// daemon with a subsystem's fatal error.
func (a *Core) subsystems(fail func(error)) []Subsystem {
	cfg := a.cfg
	d := a.dispatcher()
	subs := []Subsystem{newTask("store", func(ctx context.Context, wg *sync.WaitGroup) error {
		wg.Go(func() { a.watchStore(ctx, fail) })
		wg.Go(func() { a.store.Maintain(ctx, func(msg string) { a.log.Error(msg) }) }) // retention: the store stays within its budget
		return nil
	})}
	if len(a.sensors.Sensors()) > 0 {
		// Before the goals and automations: what they wait on is sampled.
		subs = append(subs, newTask("sensors", a.serveSensors)) // sensors.go
	}
	if a.boards != nil {
		// A paired board's free text is a turn of this board's agent, as
		// board:NAME (a program: the model acts for it, held by its rules).
		a.boards.Turn = func(ctx context.Context, who string, audit tools.Auditor, text string) (string, error) {
			if d.Agent == nil {
				return "", errors.New(channels.NoModelReply)
			}
			return d.Agent.Reply(ctx, channels.Message{Channel: "board", User: who, Text: text, Audit: audit})
		}
		// Before the doors: the paired boards' tools are probed from the start.
		subs = append(subs, boardsSubsystem{a.boards}) // boards.go
	}
	a.tell = &people{stdout: cfg.ConsoleStdin(), owners: cfg.Telegram.AllowUsers, log: a.log}
	if cfg.Telegram.Token.Reveal() != "" {
		tg := &telegramDoor{}
		tg.task = newTask("telegram", func(ctx context.Context, wg *sync.WaitGroup) error {
			return a.serveTelegram(ctx, d, wg, fail, tg)
		})
		a.tell.chats = tg
		subs = append(subs, tg)
	}
	if cfg.MCP != nil && cfg.MCP.Serve != nil {
		subs = append(subs, newTask("mcp", func(ctx context.Context, wg *sync.WaitGroup) error {
			a.serveMCP(ctx, wg) // mcp.go
			return nil
		}))
	}
	if cfg.Metrics != nil {
		subs = append(subs, newTask("metrics", func(ctx context.Context, wg *sync.WaitGroup) error {
			a.serveMetrics(ctx, wg) // metrics.go
			return nil
		}))
	}
	if cfg.MQTT != nil {
		subs = append(subs, newTask("mqtt", func(ctx context.Context, wg *sync.WaitGroup) error {
			_, err := a.serveMQTT(ctx, wg) // mqtt.go
			return err
		}))
	}
	subs = append(subs,
		newTask("automations", func(ctx context.Context, wg *sync.WaitGroup) error {
			_, err := a.serveAutomations(ctx, d, wg) // automations.go
			return err
		}),
		newTask("goals", func(ctx context.Context, wg *sync.WaitGroup) error {
			return a.serveGoals(ctx, wg) // goals.go
		}))
	if cfg.Web != nil && a.webSessions != nil {
		// After the automations: the pages read the scheduler.
		subs = append(subs, newTask("web", func(ctx context.Context, wg *sync.WaitGroup) error {
			a.serveWeb(ctx, wg, d) // web.go
			return nil
		}))
	}
	if sc := cfg.Console.Serial; sc != nil {
		s := &channels.SerialConsole{Handler: d, Device: sc.Device, Baud: sc.Baud, Log: a.log,
			Banner: "clawedge " + a.version + " ready on board " + a.board.Driver() + " (type help)"}
		subs = append(subs, newTask(s.Channel(), func(ctx context.Context, wg *sync.WaitGroup) error {
			wg.Go(func() { s.Run(ctx) })
			return nil
		}))
	}
	m := a.mcpManager()
	if m != nil {
		subs = append(subs, newTask("mcp clients", func(ctx context.Context, wg *sync.WaitGroup) error {
			wg.Go(m.Start(ctx, MCPServers(cfg)).Wait)
			return nil
		}))
	}
	ctl := a.controlSocket(d, m)
	subs = append(subs, newTask("control", func(ctx context.Context, wg *sync.WaitGroup) error {
		ln, err := ctl.Listen()
		if err != nil {
			// Not fatal: the consoles work without it; only local CLI use needs it.
			a.log.Warn("no control socket: clawedge exec/chat/audit cannot reach this daemon", "err", err)
			return nil
		}
		wg.Go(func() { ctl.Serve(ctx, ln) })
		return nil
	}))
	if cfg.ConsoleStdin() {
		subs = append(subs, stdinDoor(a, d))
	}
	return subs
}

// stdinDoor is the console on the daemon's stdin. The stdin reader cannot be
// interrupted, so it is not waited for: when stdin ends (EOF, /dev/null
// under systemd) the daemon keeps running.
func stdinDoor(a *Core, d channels.Handler) Subsystem {
	return newTask("console/stdin", func(ctx context.Context, _ *sync.WaitGroup) error {
		go func() {
			c := StdinConsole(&Mannered{H: d})
			err := c.Serve(ctx, os.Stdin, os.Stdout)
			switch {
			case err != nil && ctx.Err() == nil && !errors.Is(err, context.Canceled):
				a.log.Warn("stdin console stopped", "err", err)
			case err == nil && c.Prompt != "": // Ctrl-D at the terminal
				fmt.Println("\nThe console is closed (Ctrl-D). " + RunStopHint)
			}
		}()
		return nil
	})
}

// controlSocket is the control socket of the daemon: lines answered by d (on
// the call path, as the peer's uid), ops that only read (status, steps,
// audit, the automations' and goals' lists, the sensors' last reads, the
// MCP tools offered and the MCP servers' states), and the one call an MCP host makes through
// `clawedge mcp` (mcp.call), on the call path too. TestEveryDoorIsAReadOrACall
// holds every op to that.
func (a *Core) controlSocket(d channels.Handler, m *mcpclient.Manager) *channels.ControlSocket {
	ops := map[string]func(json.RawMessage) (any, error){
		"status": func(json.RawMessage) (any, error) { return a.statusJSON() },
		"steps":  a.stepLines,
		"audit":  a.auditOp,
		"auto":   a.autoOp,
		"goal":   a.goalOp,
		// The sensors and their last reads: no chip is read (sensors.go).
		"sensors": func(json.RawMessage) (any, error) { return a.Sensors(context.Background(), false), nil },
		// The paired boards and their states: nothing is sent to them (boards.go).
		OpBoards: a.boardsOp,
	}
	mcpOps, mcpCalls := mcpserver.Ops(mcpserver.Local{Runner: a.runner, Policy: a.policy()})
	maps.Copy(ops, mcpOps)
	if m != nil {
		ops[OpMCPServers] = func(json.RawMessage) (any, error) { return m.States(), nil }
	}
	return &channels.ControlSocket{Handler: d, Path: ControlPath(a.cfg), Log: a.log, Ops: ops, Calls: mcpCalls, Refuse: refuseConfined}
}
