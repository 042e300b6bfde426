package mcpserver

import (
	"context"
	"fmt"
	"hash/fnv"
	"log/slog"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Servers hands the HTTP handler a server with the tools offered now: the
// tools of MCP servers clawedge uses come and go while the daemon runs (a
// server starts, restarts, changes its list), so a new session gets a server
// built from the current list; one is rebuilt only when the list changed.
type Servers struct {
	Backend Backend
	Version string
	Log     *slog.Logger

	mu       sync.Mutex
	sum      uint64
	last     *mcp.Server
	sessions []*mcp.ServerSession // open, oldest first
}

// MaxSessions bounds the HTTP sessions kept: a host that never says goodbye
// (most just go) would otherwise leave its session's memory behind forever.
// Past it the oldest session is closed; its host starts a new one.
const MaxSessions = 64

// opened keeps ss among the sessions, closing the oldest past MaxSessions,
// and forgets it when it ends.
func (ss *Servers) opened(s *mcp.ServerSession) {
	ss.mu.Lock()
	ss.sessions = append(ss.sessions, s)
	var evict *mcp.ServerSession
	if len(ss.sessions) > MaxSessions {
		evict, ss.sessions = ss.sessions[0], ss.sessions[1:]
	}
	ss.mu.Unlock()
	if evict != nil {
		evict.Close()
	}
	go func() {
		s.Wait()
		ss.mu.Lock()
		defer ss.mu.Unlock()
		for i, o := range ss.sessions {
			if o == s {
				ss.sessions = append(ss.sessions[:i], ss.sessions[i+1:]...)
				break
			}
		}
	}()
}

// Current returns the server for the tools offered now, or nil when they
// cannot be listed (the handler then answers that no server is available).
func (ss *Servers) Current(ctx context.Context) *mcp.Server {
	offers, err := ss.Backend.Tools(ctx)
	if err != nil {
		if ss.Log != nil {
			ss.Log.Error("mcp: listing the tools", "err", err)
		}
		return nil
	}
	h := fnv.New64a()
	for _, o := range offers {
		s := o.Spec
		h.Write([]byte(fmt.Sprintf("%s\x00%s\x00%v\x00", s.Name, s.Doc, o.ReadOnly)))
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
	s, err := newServer(offers, ss.Backend, ss.Version, ss.opened)
	if err != nil {
		if ss.Log != nil {
			ss.Log.Error("mcp: building the server", "err", err)
		}
		return nil
	}
	ss.last, ss.sum = s, sum
	return s
}
