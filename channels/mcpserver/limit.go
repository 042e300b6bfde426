package mcpserver

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/net/netutil"
)

// MaxConns bounds the connections the HTTP server serves at once. The
// server already bounds a connection's header time and size, its idle time,
// a message's size and the sessions kept (newHTTPServer, Handler, Servers); a
// connection cap was missing, so anyone who could reach the port could open
// thousands and have each take a goroutine and its buffers. Past the cap a
// connection waits in the kernel's backlog until one ends: a host keeps a
// stream and a request or two per session, so 32 leaves room for several.
const MaxConns = 32

// limitConns is ln serving at most MaxConns connections at once.
func limitConns(ln net.Listener) net.Listener { return netutil.LimitListener(ln, MaxConns) }

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
