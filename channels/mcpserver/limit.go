package mcpserver

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/clawedge/clawedge/internal/fairlisten"
)

// MaxConns bounds the connections the HTTP server serves at once, and
// MaxPerPeer those of one address (an IPv6 /64). The server already bounds a
// connection's header time and size, its idle time, a message's size and the
// sessions kept (newHTTPServer, Handler, Servers). At the cap, a connection
// that holds a slot without a whole request, or idle, is closed to make room
// for the new one (requests without the token first: internal/fairlisten),
// so a stranger's idle connections cannot keep a host out; a connection
// without the token idle for a moment is closed, and requests without it
// are at most half the connections (they are answered 401 at once anyway).
// A host keeps a stream and a request or two per session.
const (
	MaxConns   = 32
	MaxPerPeer = 24
)

// fairConns is ln serving at most MaxConns connections at once, fairly.
func fairConns(ln net.Listener) *fairlisten.Listener {
	return fairlisten.New(ln, fairlisten.Limits{MaxConns: MaxConns, PerPeer: MaxPerPeer})
}

// MaxInFlight bounds the requests one session has served at once: a host
// that sends calls faster than they end (a pin wait, an approval that waits
// for a person) gets an error past it, instead of a goroutine and a pending
// audit entry each without end.
const MaxInFlight = 64

// limitInFlight is a middleware refusing a session's requests past max at once.
func limitInFlight(max int) mcp.Middleware {
	var mu sync.Mutex
	busy := map[mcp.Session]int{}
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if strings.HasPrefix(method, "notifications/") {
				return next(ctx, method, req) // a notification holds nothing and gets no answer
			}
			s := req.GetSession()
			mu.Lock()
			if busy[s] >= max {
				mu.Unlock()
				return nil, fmt.Errorf("more than %d requests in progress", max)
			}
			busy[s]++
			mu.Unlock()
			defer func() {
				mu.Lock()
				if busy[s]--; busy[s] == 0 {
					delete(busy, s)
				}
				mu.Unlock()
			}()
			return next(ctx, method, req)
		}
	}
}
