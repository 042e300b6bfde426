package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/clawedge/clawedge/channels"
	"github.com/clawedge/clawedge/channels/mcpserver"
)

func newMCPCmd(g *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "mcp",
		Short: "Serve the board's tools to an MCP host over stdio (forwarded to the daemon when one runs)",
		Long: `mcp speaks the Model Context Protocol on stdin/stdout, for an MCP host to start from its
config (Claude Desktop, VS Code, Cursor). It offers the tools the policy allows on channel mcp;
every call is checked and audited as mcp:uid:N, N the uid this runs as (the daemon takes it
from the kernel, never from the host's handshake, whose name is only shown), and an ask waits
for approval on another channel. When a daemon runs, the calls go to it (it holds the pins). See docs/mcp.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(g)
			if err != nil {
				return err
			}
			ctx, stop := stopOnSignal(cmd.Context())
			defer stop()
			var b mcpserver.Backend
			d, err := dialDaemon(cfg)
			if err != nil {
				return err
			}
			if d != nil {
				d.Close()
				b = mcpserver.Remote{Path: controlPath(cfg), User: or(os.Getenv("USER"), "cli")}
			} else {
				a, err := openApp(cfg, g, slog.LevelWarn)
				if err != nil {
					return err
				}
				defer a.close()
				// No console runs beside it: a call that asks is refused at
				// once rather than waiting for nobody.
				a.authorizer().Approvals = nil
				// The board is this process's: its host is the user it runs as.
				b = mcpserver.Local{Runner: a.runner, Policy: a.policy(), Principal: fmt.Sprintf("uid:%d", os.Getuid())}
			}
			s, err := mcpserver.New(ctx, b, version)
			if err != nil {
				return err
			}
			return s.Run(ctx, &mcp.StdioTransport{MaxLineLength: mcpserver.MaxMessage})
		},
	}
}

// serveMCP returns the control socket ops and calls of `clawedge mcp` and,
// when mcp.serve is configured, serves MCP over HTTP; on says whether it does.
func (a *app) serveMCP(ctx context.Context, wg *sync.WaitGroup, d *channels.Dispatcher) (ops map[string]func(json.RawMessage) (any, error), calls map[string]func(context.Context, uint32, json.RawMessage) (any, error), on bool) {
	local := mcpserver.Local{Runner: a.runner, Policy: a.policy()}
	ops, calls = mcpserver.Ops(local)
	if a.cfg.MCP == nil || a.cfg.MCP.Serve == nil {
		return ops, calls, false
	}
	sc := a.cfg.MCP.Serve
	ln, err := mcpserver.Listen(sc.Listen, sc.HostTokens())
	if err != nil {
		// Like the metrics endpoint: a port in use is logged, not fatal; the
		// board still works on its other channels.
		a.log.Error("mcp: not serving over HTTP", "err", err)
		return ops, calls, false
	}
	// Each new session gets the tools offered then (MCP servers' tools come later).
	h := mcpserver.Handler(&mcpserver.Servers{Backend: local, Version: version, Log: a.log}, sc.HostTokens(), a.log)
	wg.Go(func() {
		if err := mcpserver.Serve(ctx, ln, h); err != nil {
			a.log.Error("mcp: HTTP server stopped", "err", err)
		}
	})
	a.log.Info("mcp: serving over streamable HTTP", "url", "http://"+ln.Addr().String()+"/mcp")
	return ops, calls, true
}
