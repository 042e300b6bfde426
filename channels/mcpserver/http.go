package mcpserver

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Handler serves the server of servers over streamable HTTP to requests that
// carry "Authorization: Bearer <token>" with one of tokens (name → token);
// any other request gets 401 and nothing else. No tokens refuses every
// request (config validation requires one). A request is its token's: the
// host's principal is mcp:NAME whatever its handshake says, and a session
// opened with one token is refused to another (403). Every token is compared,
// each in constant time; none is ever logged.
func Handler(servers *Servers, tokens map[string]string, log *slog.Logger) http.Handler {
	type named struct {
		name string
		want []byte
	}
	var known []named
	for name, tok := range tokens {
		if tok != "" && name != "" {
			known = append(known, named{name, []byte("Bearer " + tok)})
		}
	}
	// whose is the token's name, or "": every token is compared, so the
	// time taken says nothing of which one came close.
	whose := func(r *http.Request) string {
		got := []byte(r.Header.Get("Authorization"))
		found := ""
		for _, k := range known {
			if subtle.ConstantTimeCompare(got, k.want) == 1 {
				found = k.name
			}
		}
		return found
	}
	// The SDK's sessions keep the token info's UserID of the request that
	// opened them and refuse a request of another (hijacking); the tools'
	// requests carry it (hostOf).
	inner := auth.RequireBearerToken(func(_ context.Context, _ string, r *http.Request) (*auth.TokenInfo, error) {
		name, _ := r.Context().Value(tokenNameKey{}).(string)
		if name == "" {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: name}, nil
	}, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(protocolRouter(servers, log))
	var refused atomic.Uint64
	authorized := func(r *http.Request) bool { return whose(r) != "" }
	return tokenHandler{authorized: authorized, h: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := whose(r)
		if name == "" {
			// The 1st, 2nd, 4th, 8th... refusal is logged: a stranger
			// knocking all day does not fill the board's storage.
			if n := refused.Add(1); log != nil && n&(n-1) == 0 {
				// The remote address says who tried; the header itself is not logged.
				log.Warn("mcp: request refused: missing or wrong bearer token", "remote", r.RemoteAddr, "had_authorization", r.Header.Get("Authorization") != "", "refusals", n)
			}
			w.Header().Set("WWW-Authenticate", `Bearer realm="clawedge"`)
			// A stranger's connection ends here: no waiting for the rest
			// of a body it may drip byte by byte (net/http would read up
			// to 256 kB of it, unbounded in time, to reuse the connection).
			w.Header().Set("Connection", "close")
			http.NewResponseController(w).SetReadDeadline(time.Now())
			http.Error(w, "missing or wrong bearer token", http.StatusUnauthorized)
			return
		}
		inner.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), tokenNameKey{}, name)))
	})}
}

// tokenNameKey holds, in a request's context, the name of the token it carried.
type tokenNameKey struct{}

// tokenHandler is Handler's: Serve's listener keeps the connections of
// requests with the token before strangers' (internal/fairlisten).
type tokenHandler struct {
	authorized func(*http.Request) bool
	h          http.Handler
}

func (t tokenHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) { t.h.ServeHTTP(w, r) }

// protocolRouter hands each request to the SDK's handler of its protocol.
// From 2026-07-28 MCP is sessionless (server/discover, no handshake, the
// client named in each request): the stateless handler serves it, and a
// host that drops its request cancels the call. Older hosts open a session
// with initialize, and the stateful handler keeps it (their name, their
// notifications/cancelled, list_changed on a GET stream).
func protocolRouter(servers *Servers, log *slog.Logger) http.Handler {
	current := func(r *http.Request) *mcp.Server { return servers.Current(r.Context()) }
	stateless := mcp.NewStreamableHTTPHandler(current, &mcp.StreamableHTTPOptions{
		Stateless:                    true,
		Logger:                       log,
		MaxRequestBodyBytes:          MaxMessage,
		PropagateRequestCancellation: true,
	})
	sessions := mcp.NewStreamableHTTPHandler(current, &mcp.StreamableHTTPOptions{
		Logger:              log,
		MaxRequestBodyBytes: MaxMessage,
		// A host that went away without closing its session leaves
		// nothing behind for more than this (and MaxSessions bounds them).
		SessionTimeout: 30 * time.Minute,
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Dates in one format: they compare as strings.
		if v := r.Header.Get("Mcp-Protocol-Version"); v >= sessionless && r.Header.Get("Mcp-Session-Id") == "" {
			stateless.ServeHTTP(w, r)
			return
		}
		sessions.ServeHTTP(w, r)
	})
}

// sessionless is the first protocol version without sessions.
const sessionless = "2026-07-28"

// MaxMessage bounds one message read from a host.
const MaxMessage = 4 << 20

// Listen opens addr for Serve. A non-loopback address without a token is
// refused here too, whatever the config said.
func Listen(addr string, tokens map[string]string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("mcp.serve.listen %q: %w", addr, err)
	}
	if !hasToken(tokens) {
		if !isLoopbackName(host) {
			return nil, fmt.Errorf("mcp.serve: refusing to listen on %s without a token", addr)
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("mcp.serve.listen %s: %w", addr, err)
	}
	return ln, nil
}

func hasToken(tokens map[string]string) bool {
	for _, t := range tokens {
		if t != "" {
			return true
		}
	}
	return false
}

// Serve answers h on ln until ctx ends; open streams are cut at the stop.
// On a loopback listener, only loopback names are answered (sameSite).
func Serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	var authorized func(*http.Request) bool
	if th, ok := h.(tokenHandler); ok {
		authorized = th.authorized
	}
	fl := fairConns(ln)
	srv := newHTTPServer(fl.Guard(h, authorized), isLoopbackAddr(ln.Addr()))
	fl.Hook(srv)
	stop := context.AfterFunc(ctx, func() {
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
		srv.Close()
	})
	defer stop()
	if err := srv.Serve(fl); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// newHTTPServer bounds what a connection may hold: its headers' time and
// size, and its idle time between requests (an event stream is not idle).
func newHTTPServer(h http.Handler, loopback bool) *http.Server {
	mux := http.NewServeMux()
	h = sameSite(h, loopback)
	mux.Handle("/mcp", h)
	mux.Handle("/mcp/", h)
	return &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, IdleTimeout: time.Minute, MaxHeaderBytes: 16 << 10}
}

func isLoopbackAddr(a net.Addr) bool {
	ta, ok := a.(*net.TCPAddr)
	return ok && ta.IP.IsLoopback()
}
