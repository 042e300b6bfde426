package mcpserver

import (
	"context"
	"hash/fnv"
	"log/slog"
	"sync"

	"github.com/clawedge/clawedge/internal/mcp"
)

// Servers hands the HTTP handler a server with the tools offered now: the
// tools of MCP servers clawedge uses come and go while the daemon runs (a
// server starts, restarts, changes its list), so a new session gets a server
// built from the current list; one is rebuilt only when the list changed.
type Servers struct {
	Backend Backend
	Version string
	Log     *slog.Logger

	mu   sync.Mutex
	sum  uint64
	last *mcp.Server
}

// Current returns the server for the tools offered now, or nil when they
// cannot be listed (the handler then answers that no server is available).
func (ss *Servers) Current(ctx context.Context) *mcp.Server {
	specs, err := ss.Backend.Tools(ctx)
	if err != nil {
		if ss.Log != nil {
			ss.Log.Error("mcp: listing the tools", "err", err)
		}
		return nil
	}
	h := fnv.New64a()
	for _, s := range specs {
		h.Write([]byte(s.Name + "\x00" + s.Doc + "\x00"))
		for _, p := range s.Params {
			h.Write([]byte(p.Name + "\x00" + string(p.Type) + "\x00"))
		}
	}
	sum := h.Sum64()
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.last != nil && sum == ss.sum {
		return ss.last
	}
	s, err := newServer(specs, ss.Backend, ss.Version)
	if err != nil {
		if ss.Log != nil {
			ss.Log.Error("mcp: building the server", "err", err)
		}
		return nil
	}
	ss.last, ss.sum = s, sum
	return s
}
