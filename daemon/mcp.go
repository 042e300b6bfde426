package daemon

import (
	"context"
	"sync"

	"github.com/clawedge/clawedge/channels/mcpserver"
)

// serveMCP serves MCP over HTTP (mcp.serve) until ctx ends. A listen
// address in use is logged, not fatal: the board works on its other doors.
func (a *Core) serveMCP(ctx context.Context, wg *sync.WaitGroup) {
	local := mcpserver.Local{Runner: a.runner, Policy: a.policy()}
	sc := a.cfg.MCP.Serve
	ln, err := mcpserver.Listen(sc.Listen, sc.HostTokens())
	if err != nil {
		// Like the metrics endpoint: a port in use is logged, not fatal; the
		// board still works on its other channels.
		a.log.Error("mcp: not serving over HTTP", "err", err)
		return
	}
	// Each new session gets the tools offered then (MCP servers' tools come later).
	h := mcpserver.Handler(&mcpserver.Servers{Backend: local, Version: a.version, Log: a.log}, sc.HostTokens(), a.log)
	wg.Go(func() {
		if err := mcpserver.Serve(ctx, ln, h); err != nil {
			a.log.Error("mcp: HTTP server stopped", "err", err)
		}
	})
	a.log.Info("mcp: serving over streamable HTTP", "url", "http://"+ln.Addr().String()+"/mcp")

}
