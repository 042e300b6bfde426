package mcpserver

import (
	"net"

	"golang.org/x/net/netutil"
)

// MaxConns bounds the connections the HTTP server serves at once. The
// server already bounds a connection's header time and size, its idle time,
// a message's size and the sessions kept (newHTTPServer, internal/mcp); a
// connection cap was missing, so anyone who could reach the port could open
// thousands and have each take a goroutine and its buffers. Past the cap a
// connection waits in the kernel's backlog until one ends: a host keeps a
// stream and a request or two per session, so 32 leaves room for several.
const MaxConns = 32

// limitConns is ln serving at most MaxConns connections at once.
func limitConns(ln net.Listener) net.Listener { return netutil.LimitListener(ln, MaxConns) }
