package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"os/signal"
	"runtime/debug"
	"sync"
	"syscall"
	"time"

	"github.com/clawedge/clawedge/channels"
	"github.com/clawedge/clawedge/sandbox"
	"github.com/clawedge/clawedge/store"
	"github.com/spf13/cobra"
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
			a, err := openApp(cfg, g, slog.LevelInfo)
			if err != nil {
				return err
			}
			defer a.close()
			ctx, stop := stopOnSignal(cmd.Context())
			defer stop()
			return a.serve(ctx)
		},
	}
}

// errStopping is why calls still running at a clean stop (SIGINT, SIGTERM) are
// cancelled; it is a context.Canceled, the normal end of serve.
var errStopping = stoppingError{}

type stoppingError struct{}

func (stoppingError) Error() string        { return "cancelled: clawedge stopping" }
func (stoppingError) Is(target error) bool { return target == context.Canceled }

// stopOnSignal is signal.NotifyContext with errStopping as the cause, so that a
// call cut short by the stop says so in its outcome.
func stopOnSignal(parent context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case <-sigs:
			cancel(errStopping)
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

// serve runs the channels until ctx ends. Outputs go back to their safe level in
// a.close, which the caller defers.
func (a *app) serve(ctx context.Context) error {
	if n, err := a.store.Interrupted(); err != nil {
		return err
	} else if n > 0 {
		a.log.Warn("commands interrupted by the last stop; their effect is unknown (see clawedge audit)", "count", n)
	}
	a.serving = true
	a.openWebSessions() // web.go: before the dispatcher and Telegram, whose /web pairs browsers
	d := a.dispatcher()
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	tellUpdate := updateReport() // a failed update, from clawedge-init (update_run.go)
	go a.watchStore(ctx, stop)
	go a.store.Maintain(ctx, func(msg string) { a.log.Error(msg) }) // retention: the store stays within its budget
	var wg sync.WaitGroup
	names := []string{}
	if on, err := a.serveTelegram(ctx, d, &wg, stop); err != nil {
		return err
	} else if on {
		names = append(names, "telegram")
	}
	// Before any channel runs: MCP calls share the dispatcher's approvals.
	mcpOps, mcpCalls, mcpOn := a.serveMCP(ctx, &wg, d) // mcp.go
	if mcpOn {
		names = append(names, "mcp")
	}
	if a.serveMetrics(ctx, &wg) { // metrics.go
		names = append(names, "metrics")
	}
	if on, err := a.serveMQTT(ctx, &wg); err != nil { // mqtt.go
		return err
	} else if on {
		names = append(names, "mqtt")
	}
	if on, err := a.serveAutomations(ctx, d, &wg); err != nil {
		return err
	} else if on {
		names = append(names, "automations")
	}
	if err := a.serveGoals(ctx, &wg); err != nil { // goals.go
		return err
	}
	names = append(names, "goals")
	// After the automations: the pages read a.sched.
	webOps, webOn := a.serveWeb(ctx, &wg, d) // web.go
	if webOn {
		names = append(names, "web")
	}
	if sc := a.cfg.Console.Serial; sc != nil {
		s := &channels.SerialConsole{Handler: d, Device: sc.Device, Baud: sc.Baud, Log: a.log,
			Banner: "clawedge " + version + " ready on board " + a.board.Driver() + " (type help)"}
		names = append(names, s.Channel())
		wg.Go(func() { s.Run(ctx) })
	}
	ctl := &channels.ControlSocket{Handler: d, Path: controlPath(a.cfg), Log: a.log, Ops: map[string]func(json.RawMessage) (any, error){
		"status": func(json.RawMessage) (any, error) { return a.statusJSON() },
		"steps":  a.stepLines,
		"audit":  a.auditOp,
		"auto":   a.autoOp,
		"goal":   a.goalOp,
	}, Calls: mcpCalls, Refuse: refuseConfined}
	maps.Copy(ctl.Ops, mcpOps)
	maps.Copy(ctl.Ops, webOps)
	maps.Copy(ctl.Ops, a.startMCPClients(ctx, &wg)) // mcpclient.go
	if ln, err := ctl.Listen(); err != nil {
		// Not fatal: the consoles work without it; only local CLI use needs it.
		a.log.Warn("no control socket: clawedge exec/chat/audit cannot reach this daemon", "err", err)
	} else {
		names = append(names, "control")
		wg.Go(func() { ctl.Serve(ctx, ln) })
	}
	if a.cfg.ConsoleStdin() {
		names = append(names, "console/stdin")
		// The stdin reader cannot be interrupted, so it is not waited for: when
		// stdin ends (EOF, /dev/null under systemd) the daemon keeps running.
		go func() {
			c := stdinConsole(&mannered{h: d})
			err := c.Serve(ctx, os.Stdin, os.Stdout)
			switch {
			case err != nil && ctx.Err() == nil:
				a.log.Warn("stdin console stopped", "err", err)
			case err == nil && c.Prompt != "": // Ctrl-D at the terminal
				fmt.Println("\nThe console is closed (Ctrl-D). " + runStopHint)
			}
		}()
	}
	a.log.Info("clawedge ready", "version", version, "board", a.board.Driver(), "pins", len(a.board.Pins()),
		"tools", len(a.reg.Specs()), "channels", names, "store", a.store.Path())
	if n, err := releaseStartupPages(); err != nil { // startup_pages.go
		a.log.Warn("start-up pages kept mapped", "err", err)
	} else {
		a.log.Debug("start-up pages unmapped", "mapped_bytes", n)
	}
	sd := newNotifier() // systemd Type=notify and WatchdogSec= (sdnotify.go)
	sd.ready("clawedge " + version + " ready on board " + a.board.Driver())
	go sd.feedWatchdog(ctx, a.healthy, func(err error) { a.log.Warn("systemd watchdog", "err", err) })
	if tellUpdate != "" {
		a.log.Error(tellUpdate)
		go a.autoNotify(ctx, tellUpdate)
	}
	<-ctx.Done()
	sd.stopping()
	a.log.Info("stopping: returning outputs to their safe levels")
	wg.Wait()
	if err := context.Cause(ctx); !errors.Is(err, context.Canceled) {
		return err // a channel's fatal error (a refused Telegram token)
	}
	return nil
}

// storeCheckEvery is how often the daemon checks, between writes, that its store
// file is still the one it opened.
const storeCheckEvery = 10 * time.Second

// watchStore stops the daemon with the store's error when its file is removed or
// replaced (noticed by a write, or by the periodic check): writing on would put
// the audit trail into a file nobody reads. Between writes it also writes the
// outcomes that waited for disk space.
func (a *app) watchStore(ctx context.Context, stop context.CancelCauseFunc) {
	t := time.NewTicker(storeCheckEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case err := <-a.lost:
			stop(err)
			return
		case <-t.C:
			if a.store.CheckFile() == nil { // else it tells a.lost
				a.store.FlushLate() // outcomes kept while the disk was full
			}
		}
	}
}

// stdinConsole is the console on this process's stdin; it prompts only when a
// person is typing, so piped input gives clean output.
func stdinConsole(h channels.Handler) *channels.Console {
	c := &channels.Console{Handler: h, Channel: "console/stdin", User: or(os.Getenv("USER"), "console")}
	if isTTY(os.Stdin) { // not /dev/null, systemd's stdin
		c.Prompt = "> "
	}
	return c
}

// refuseConfined refuses a control socket peer that runs inside a sandboxed
// run (its own PID namespace): a sys/exec child under the daemon's uid must
// not be able to send commands, or approve calls, as the daemon's user.
func refuseConfined(pid int32, uid uint32) error {
	if self := os.Geteuid(); uid != 0 && int(uid) != self {
		return fmt.Errorf("uid %d is neither the daemon's user (%d) nor root", uid, self)
	}
	if sandbox.Confined(int(pid)) {
		return errors.New("the peer runs inside a sandbox (another PID or user namespace); sandboxed programs may not use the daemon")
	}
	return nil
}
