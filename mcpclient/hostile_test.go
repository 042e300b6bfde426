package mcpclient

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/clawedge/clawedge/grammar"
)

// A stdio server that started a process of its own and ignores the end of
// its stdin leaves nothing behind once clawedge is done with it.
func TestStdioServerLeavesNoProcess(t *testing.T) {
	self, _ := os.Executable()
	t.Setenv("FAKE_MCP", "")
	pidFile := filepath.Join(t.TempDir(), "pid")
	ctx, cancel := context.WithCancel(context.Background())
	h := start(t)
	m := &Manager{Registry: h.r.Registry}
	wg := m.Start(ctx, []Server{{Name: "stubborn", Command: []string{self}, Timeout: 20 * time.Second,
		Env: map[string]string{"FAKE_MCP": "grandchild", "FAKE_MCP_PIDFILE": pidFile}}})
	h.m = m
	h.ready("stubborn")
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(string(b))
	if !alive(pid) {
		t.Fatalf("the grandchild %d is not running to begin with", pid)
	}
	cancel()
	wg.Wait()
	for deadline := time.Now().Add(30 * time.Second); alive(pid); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the server's own process %d outlived it", pid)
		}
	}
}

// alive says whether pid runs (a zombie waiting for its reaper does not).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// pid (comm) state ...: the state follows the last ')'.
	s := string(b)
	return !strings.HasPrefix(strings.TrimSpace(s[strings.LastIndexByte(s, ')')+1:]), "Z")
}

// A server with more tools than MaxTools, or more bytes of them than
// MaxListBytes, has what fits registered, not all of it held.
func TestServerListIsBounded(t *testing.T) {
	many := mcp.NewServer(&mcp.Implementation{Name: "many", Version: "1"}, nil)
	for i := range MaxTools + 10 {
		many.AddTool(&mcp.Tool{Name: fmt.Sprintf("t%d", i), InputSchema: object},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return textResult("ok"), nil })
	}
	huge := mcp.NewServer(&mcp.Implementation{Name: "huge", Version: "1"}, nil)
	doc := strings.Repeat("d", 1<<20)
	for i := range MaxListBytes>>20 + 4 {
		huge.AddTool(&mcp.Tool{Name: fmt.Sprintf("t%d", i), Description: doc, InputSchema: object},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return textResult("ok"), nil })
	}
	h := start(t, Server{Name: "many", URL: fakeHTTP(t, many)}, Server{Name: "huge", URL: fakeHTTP(t, huge)})
	if n := len(h.ready("many").Tools); n != MaxTools {
		t.Errorf("many: %d tools registered, want %d", n, MaxTools)
	}
	if n := len(h.ready("huge").Tools); n == 0 || n >= MaxListBytes>>20 {
		t.Errorf("huge: %d tools of 1 MB registered, want fewer than %d", n, MaxListBytes>>20)
	}
}

// A server that says its tools changed without end is listed now and then,
// not once per notification.
func TestListChangedStormIsRateLimited(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "storm", Version: "1"}, nil)
	var lists atomic.Int64
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/list" {
				lists.Add(1)
			}
			return next(ctx, method, req)
		}
	})
	s.AddTool(&mcp.Tool{Name: "t", InputSchema: object},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return textResult("ok"), nil })
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(srv.Close)
	h := startRelisting(t, time.Hour, Server{Name: "storm", URL: srv.URL})
	h.ready("storm")
	for i := range 300 {
		s.AddTool(&mcp.Tool{Name: fmt.Sprintf("u%d", i), InputSchema: object},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return textResult("ok"), nil })
	}
	// The first notification is answered with a listing; every later one
	// waits for the hour to pass.
	for deadline := time.Now().Add(30 * time.Second); lists.Load() < 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the tools were not listed again after they changed (%d listings)", lists.Load())
		}
	}
	time.Sleep(200 * time.Millisecond) // room for listings that should not come
	if n := lists.Load(); n > 2 {
		t.Errorf("%d listings for 300 notifications within the hour", n)
	}
}

// A server whose answer is longer than MaxMessage is dropped with a clear
// state, its answer not held whole.
func TestOversizedAnswerIsRefused(t *testing.T) {
	huge := strings.Repeat("A", MaxMessage+1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "no", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"result":{"pad":"%s"}}`, huge)
	}))
	t.Cleanup(srv.Close)
	h := start(t, Server{Name: "huge", URL: srv.URL, Timeout: 20 * time.Second})
	st := h.until("huge down", func(st []State) bool { return strings.HasPrefix(st[0].State, "down:") })
	if !strings.Contains(st[0].State, fmt.Sprintf("longer than %d bytes", MaxMessage)) {
		t.Errorf("state: %.300s", st[0].State)
	}
}

// A server whose tools' constraints are large has them constrained exactly
// until its compile budget is spent; the rest degrade to one JSON parameter,
// still callable, with the reason in the server's state.
func TestCompileBudgetDegradesTheRest(t *testing.T) {
	words := make([]any, 800)
	for i := range words {
		words[i] = fmt.Sprintf("%x-item-%d", i*7919, i)
	}
	schema := map[string]any{"type": "object", "properties": map[string]any{
		"which": map[string]any{"type": "string", "enum": words}}, "required": []any{"which"}}
	big := mcp.NewServer(&mcp.Implementation{Name: "big", Version: "1"}, nil)
	for i := range 12 {
		big.AddTool(&mcp.Tool{Name: fmt.Sprintf("t%d", i), InputSchema: schema},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return textResult("ok"), nil })
	}
	h := start(t, Server{Name: "big", URL: fakeHTTP(t, big)})
	exact, degraded := 0, 0
	for _, ts := range h.ready("big").Tools {
		switch {
		case ts.Degraded == "":
			exact++
		case strings.Contains(ts.Degraded, "compile budget"):
			degraded++
		default:
			t.Errorf("%s degraded for another reason: %s", ts.Name, ts.Degraded)
		}
	}
	if exact == 0 || degraded == 0 || exact+degraded != 12 {
		t.Fatalf("%d exact and %d degraded by the budget, of 12: %s", exact, degraded, h.ready("big").Tools[0].Degraded)
	}
	// The degraded ones are still called, their arguments checked against
	// the server's schema.
	last, err := h.m.Registry.Lookup("big/t11")
	if err != nil || last.Spec().Params[0].Name != grammar.JSONParam {
		t.Fatalf("big/t11: %v %+v", err, last)
	}
	if out, err := h.run(`@big/t11{json="{\"which\": \"nope\"}"}`); err == nil || !strings.Contains(err.Error(), "json:") {
		t.Errorf("a value outside the enum: %q, %v", out, err)
	}
	if out, err := h.run(`@big/t11{json="{\"which\": \"0-item-0\"}"}`); err != nil || out != "ok" {
		t.Errorf("a value of the enum: %q, %v", out, err)
	}
	t.Logf("%d exact, %d degraded: %s", exact, degraded, h.ready("big").Tools[11].Degraded)
}
