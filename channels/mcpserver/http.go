package mcpserver

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/clawedge/clawedge/internal/mcp"
)

// Handler serves the server of servers over streamable HTTP to requests that
// carry "Authorization: Bearer <token>"; any other request gets 401 and nothing
// else. An empty token refuses every request (config validation requires one).
// The token is compared in constant time and never logged.
func Handler(servers *Servers, token string, log *slog.Logger) http.Handler {
	inner := mcp.NewHTTPHandler(func(r *http.Request) *mcp.Server { return servers.Current(r.Context()) })
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := []byte(r.Header.Get("Authorization"))
		if token == "" || subtle.ConstantTimeCompare(got, want) != 1 {
			if log != nil {
				// The remote address says who tried; the header itself is not logged.
				log.Warn("mcp: request refused: missing or wrong bearer token", "remote", r.RemoteAddr, "had_authorization", len(got) > 0)
			}
			w.Header().Set("WWW-Authenticate", `Bearer realm="clawedge"`)
			http.Error(w, "missing or wrong bearer token", http.StatusUnauthorized)
			return
		}
		inner.ServeHTTP(w, r)
	})
}

// Listen opens addr for Serve. A non-loopback address without a token is
// refused here too, whatever the config said.
func Listen(addr, token string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("mcp.serve.listen %q: %w", addr, err)
	}
	if token == "" {
		ip := net.ParseIP(host)
		if host != "localhost" && (ip == nil || !ip.IsLoopback()) {
			return nil, fmt.Errorf("mcp.serve: refusing to listen on %s without a token", addr)
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("mcp.serve.listen %s: %w", addr, err)
	}
	return ln, nil
}

// Serve answers h on ln until ctx ends; open streams are cut at the stop.
func Serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	mux.Handle("/mcp/", h)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, MaxHeaderBytes: 16 << 10}
	stop := context.AfterFunc(ctx, func() {
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
		srv.Close()
	})
	defer stop()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
