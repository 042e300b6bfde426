package mcpserver

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/clawedge/clawedge/channels"
	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/internal/fairlisten/floodtest"
)

// TestHTTPBoundsConnections opens ten times MaxConns connections that send
// nothing and checks that the server did not take a goroutine for each, and
// that it answers a request once they are gone.
func TestHTTPBoundsConnections(t *testing.T) {
	url := serveHTTP(t, newBoard(t, nil, time.Minute), map[string]string{"token": "s3cret-token-0123456789"}, io.Discard)
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

// blocking is a Backend whose one tool waits until release is closed.
type blocking struct {
	in      atomic.Int64
	release chan struct{}
}

func (b *blocking) Tools(context.Context) ([]Offer, error) {
	return []Offer{{Spec: grammar.ToolSpec{Name: "x/block", Doc: "waits"}}}, nil
}

func (b *blocking) Call(ctx context.Context, _ Host, _ string, _ json.RawMessage) (channels.CallResult, error) {
	b.in.Add(1)
	select {
	case <-b.release:
	case <-ctx.Done():
	}
	return channels.CallResult{Text: "done"}, nil
}

// A host that sends calls faster than they end gets an error for each one
// past MaxInFlight, and nothing more runs; the calls in progress end well.
func TestServerBoundsRequestsInProgress(t *testing.T) {
	b := &blocking{release: make(chan struct{})}
	cs := connect(t, b, "flood")
	const extra = 6
	errs := make(chan error, MaxInFlight+extra)
	for range MaxInFlight {
		go func() {
			_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "x.block"})
			errs <- err
		}()
	}
	for deadline := time.Now().Add(30 * time.Second); b.in.Load() < MaxInFlight; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d calls in progress, want %d", b.in.Load(), MaxInFlight)
		}
	}
	for range extra {
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "x.block"})
		if err == nil || !strings.Contains(err.Error(), "requests in progress") {
			t.Errorf("a call past the cap: %v", err)
		}
	}
	if n := b.in.Load(); n != MaxInFlight {
		t.Errorf("%d calls ran, want %d", n, MaxInFlight)
	}
	close(b.release)
	for range MaxInFlight {
		if err := <-errs; err != nil {
			t.Errorf("a call within the cap: %v", err)
		}
	}
}

// 64 idle connections (half keep-alive ones left after a request, half that
// sent nothing) and 64 that sent half a request do not keep a host with the
// token out: its initialize and a call succeed. Before, the first 32 held
// every slot (a keep-alive one for its minute of idle time) and the host
// waited in the backlog behind the rest.
func TestHTTPFloodDoesNotKeepHostOut(t *testing.T) {
	const token = "s3cret-token-0123456789"
	url := serveHTTP(t, newBoard(t, nil, time.Minute), map[string]string{"token": token}, io.Discard)
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/mcp")
	if n := floodtest.Hold(t, addr, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 64, 64); n != 128 {
		t.Fatalf("%d of 128 connections made", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	hc := &http.Client{Transport: headerRT{"Bearer " + token}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, nil)
	if err != nil {
		t.Fatalf("initialize with 128 connections held: %v", err)
	}
	defer cs.Close()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Errorf("tools/list with 128 connections held: %v", err)
	}
}
