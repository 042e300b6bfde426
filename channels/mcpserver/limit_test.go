package mcpserver

import (
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestHTTPBoundsConnections opens ten times MaxConns connections that send
// nothing and checks that the server did not take a goroutine for each, and
// that it answers a request once they are gone.
func TestHTTPBoundsConnections(t *testing.T) {
	url := serveHTTP(t, newBoard(t, nil, time.Minute), "s3cret-token-0123456789", io.Discard)
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/mcp")
	before := runtime.NumGoroutine()
	var conns []net.Conn
	for range 10 * MaxConns {
		c, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	time.Sleep(200 * time.Millisecond) // the server accepts what it will
	if g := runtime.NumGoroutine(); g > before+3*MaxConns {
		t.Errorf("%d goroutines with %d idle connections open (%d before): more than MaxConns served", g, len(conns), before)
	}
	for _, c := range conns {
		c.Close()
	}
	cl := &http.Client{Timeout: 5 * time.Second}
	resp, err := cl.Post(url, "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatalf("no answer after the connections were closed: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("HTTP %d without a token, want 401", resp.StatusCode)
	}
}
