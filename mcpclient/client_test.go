package mcpclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/sandbox"
	"github.com/clawedge/clawedge/store"
	"github.com/clawedge/clawedge/tools"
)

// The test binary doubles as a stdio MCP server that misbehaves on request
// (FAKE_MCP=garbage|crash), for the cases an in-process server cannot play.
func TestMain(m *testing.M) {
	sandbox.Main() // the confined servers' helper is this binary
	switch os.Getenv("FAKE_MCP") {
	case "probe":
		os.Exit(probeServer())
	case "linger":
		time.Sleep(time.Hour)
		os.Exit(0)
	case "garbage":
		for range 100 {
			fmt.Println("this is not JSON-RPC {{{")
		}
		os.Exit(0)
	case "grandchild":
		// A server that starts a process of its own (as npx does) and
		// ignores the end of its stdin.
		sleep := exec.Command("sleep", "600")
		if err := sleep.Start(); err != nil {
			os.Exit(4)
		}
		os.WriteFile(os.Getenv("FAKE_MCP_PIDFILE"), []byte(fmt.Sprint(sleep.Process.Pid)), 0o600)
		s := mcp.NewServer(&mcp.Implementation{Name: "stubborn", Version: "1"}, nil)
		s.AddTool(&mcp.Tool{Name: "noop", InputSchema: object},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return textResult("ok"), nil })
		s.Run(context.Background(), &mcp.StdioTransport{})
		signal.Ignore(syscall.SIGTERM)
		select {}
	case "conformance":
		os.Exit(conformanceClient(os.Args[len(os.Args)-1], os.Getenv("MCP_CONFORMANCE_SCENARIO")))
	case "crash":
		s := mcp.NewServer(&mcp.Implementation{Name: "crashy", Version: "1"}, nil)
		s.AddTool(&mcp.Tool{Name: "die", InputSchema: object},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { os.Exit(3); return nil, nil })
		s.Run(context.Background(), &mcp.StdioTransport{})
		os.Exit(0)
	}
	os.Exit(m.Run())
}

type harness struct {
	t   *testing.T
	m   *Manager
	r   *tools.Runner
	st  *store.Store
	ctx context.Context
}

func start(t *testing.T, servers ...Server) *harness {
	t.Helper()
	return startRelisting(t, 10*time.Millisecond, servers...)
}

// startRelisting starts servers with relist as the Manager's RelistEvery.
func startRelisting(t *testing.T, relist time.Duration, servers ...Server) *harness {
	t.Helper()
	st, err := store.Open(t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	reg := tools.NewRegistry()
	h := &harness{t: t, st: st, r: &tools.Runner{Registry: reg, Audit: st},
		m: &Manager{Registry: reg, FirstBackoff: 10 * time.Millisecond, Backoff: 50 * time.Millisecond, RelistEvery: relist}}
	ctx, cancel := context.WithCancel(context.Background())
	h.ctx = ctx
	wg := h.m.Start(ctx, servers)
	t.Cleanup(func() { cancel(); wg.Wait(); st.Close() })
	return h
}

// until polls the manager's state (not a timing assertion: it waits for a
// state the servers reach by themselves) for at most 20 s.
func (h *harness) until(what string, ok func([]State) bool) []State {
	h.t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		st := h.m.States()
		if ok(st) {
			return st
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("waiting for %s: %+v", what, st)
		}
	}
}

func (h *harness) ready(name string) State {
	h.t.Helper()
	st := h.until(name+" ready", func(st []State) bool {
		for _, s := range st {
			if s.Name == name && s.State == "ready" {
				return true
			}
		}
		return false
	})
	for _, s := range st {
		if s.Name == name {
			return s
		}
	}
	return State{}
}

func (h *harness) run(line string) (string, error) {
	h.t.Helper()
	cmd, err := grammar.Parse(line, grammar.ParseOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	rep, err := h.r.Run(context.Background(), tools.Caller{Channel: "console/stdin", User: "t"}, cmd)
	if err != nil {
		return "", err
	}
	return rep.Text(), nil
}

var object = json.RawMessage(`{"type":"object"}`)

// fakeHTTP serves a server over streamable HTTP, in process.
func fakeHTTP(t *testing.T, s *mcp.Server) string {
	t.Helper()
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(srv.Close)
	return srv.URL
}

func textResult(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func schema(v map[string]any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

func TestHTTPServerToolsCallsAndBadServers(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "fake", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "get.weather", Description: "Weather for a city", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}, InputSchema: schema(map[string]any{
		"type": "object", "required": []any{"city"},
		"properties": map[string]any{
			"city":  map[string]any{"type": "string", "description": "the city"},
			"units": map[string]any{"type": "string", "enum": []any{"c", "f"}, "default": "c"},
			"days":  map[string]any{"type": "integer", "minimum": 1, "maximum": 7},
		}})}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return textResult("args " + string(req.Params.Arguments)), nil
	})
	s.AddTool(&mcp.Tool{Name: "nested", InputSchema: schema(map[string]any{
		"type": "object", "required": []any{"where"},
		"properties": map[string]any{"where": map[string]any{"type": "object", "required": []any{"lat"},
			"properties": map[string]any{"lat": map[string]any{"type": "number"}}}}})},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return textResult("nested " + string(req.Params.Arguments)), nil
		})
	hangEnded := make(chan struct{}, 1)
	s.AddTool(&mcp.Tool{Name: "hang", InputSchema: object},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			<-ctx.Done()
			hangEnded <- struct{}{}
			return nil, ctx.Err()
		})
	s.AddTool(&mcp.Tool{Name: "big", InputSchema: object},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return textResult(strings.Repeat("x", 10<<20)), nil
		})
	s.AddTool(&mcp.Tool{Name: "fails", InputSchema: object},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "no such city"}}}, nil
		})
	url := fakeHTTP(t, s)
	h := start(t, Server{Name: "fake", URL: url, Timeout: time.Minute, MaxOutput: 1000},
		Server{Name: "impatient", URL: url, Timeout: 200 * time.Millisecond, TrustReadOnly: true})
	h.ready("impatient")
	st := h.ready("fake")
	byName := map[string]ToolState{}
	for _, ts := range st.Tools {
		byName[ts.Name] = ts
	}
	if w := byName["fake/get_weather"]; w.MCPName != "get.weather" || w.Degraded != "" || !w.ReadOnly {
		t.Errorf("get.weather: %+v (all: %+v)", w, st.Tools)
	}
	// The server's annotations are kept, to pass on to MCP hosts.
	if tl, err := h.r.Registry.Lookup("fake/get_weather"); err != nil || tl.(*remoteTool).Annotations() == nil || !tl.(*remoteTool).Annotations().ReadOnlyHint {
		t.Errorf("get.weather's annotations were not kept: %v", err)
	}
	if byName["fake/nested"].ReadOnly {
		t.Error("nested says read-only, its server did not")
	}
	// The hint counts (group:readonly) only from the server trusted for it,
	// and only for the tools it annotated.
	for name, want := range map[string]bool{"fake/get_weather": false, "impatient/get_weather": true, "impatient/nested": false} {
		if tl, err := h.r.Registry.Lookup(name); err != nil || tools.WithoutEffects(tl) != want {
			t.Errorf("%s: without effects %v, want %v (%v)", name, err == nil && tools.WithoutEffects(tl), want, err)
		}
	}
	// A nested schema is constrained exactly (its Shape) and its arguments
	// still travel as the one JSON parameter, validated against the schema.
	if n := byName["fake/nested"]; n.Degraded != "" {
		t.Errorf("nested degraded: %+v", n)
	}

	out, err := h.run(`@fake/get_weather{city="Berlin";days=3}`)
	if err != nil || out != `args {"city":"Berlin","days":3,"units":"c"}` {
		t.Errorf("get_weather: %q %v", out, err)
	}
	if _, err := h.run(`@fake/get_weather{city="Berlin";days=9}`); err == nil || !strings.Contains(err.Error(), "days") {
		t.Errorf("days=9 not refused: %v", err)
	}
	out, err = h.run(`@fake/nested{json="{\"where\":{\"lat\":52.5}}"}`)
	if err != nil || !strings.Contains(out, `"lat":52.5`) {
		t.Errorf("nested: %q %v", out, err)
	}
	if _, err := h.run(`@fake/nested{json="{\"where\":{}}"}`); err == nil || !strings.Contains(err.Error(), "lat") {
		t.Errorf("nested without lat not refused after generation: %v", err)
	}
	if _, err := h.run(`@fake/fails{}`); err == nil || !strings.Contains(err.Error(), "no such city") {
		t.Errorf("an error result: %v", err)
	}

	// A hanging call ends at the timeout with a clear error; meanwhile other calls run.
	hung := make(chan error, 1)
	go func() { _, err := h.run(`@impatient/hang{}`); hung <- err }()
	if out, err := h.run(`@fake/get_weather{city="Oslo"}`); err != nil || !strings.Contains(out, "Oslo") {
		t.Errorf("a call beside a hanging one: %q %v", out, err)
	}
	if err := <-hung; err == nil || !strings.Contains(err.Error(), "MCP server impatient did not answer within 200ms") {
		t.Errorf("hanging call: %v", err)
	}
	// ... and the server was told: its tool stopped.
	select {
	case <-hangEnded:
	case <-time.After(30 * time.Second):
		t.Error("the server never learnt that the timed-out call was cancelled")
	}
	// 10 MB come back as MaxOutput bytes and a note.
	out, err = h.run(`@fake/big{}`)
	if err != nil || len(out) > 1200 || !strings.Contains(out, "the result was 10485760 bytes") {
		t.Errorf("big result: %d bytes, %v: %.200q", len(out), err, out)
	}
	tail, _ := h.st.Tail(100)
	if len(tail) < 6 || !strings.Contains(tail[len(tail)-1].Command, "fake/big") || len(tail[len(tail)-1].Detail) > 4096 {
		t.Errorf("audit: %d entries, last %+v", len(tail), tail[len(tail)-1])
	}

	// list_changed: a new tool appears, a removed one goes.
	s.AddTool(&mcp.Tool{Name: "late", InputSchema: object},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return textResult("late"), nil
		})
	s.RemoveTools("fails")
	h.until("the new list", func(st []State) bool {
		names := fmt.Sprint(st)
		return strings.Contains(names, "fake/late") && !strings.Contains(names, "fake/fails")
	})
	if out, err := h.run(`@fake/late{}`); err != nil || out != "late" {
		t.Errorf("late: %q %v", out, err)
	}
	if _, err := h.r.Registry.Lookup("fake/fails"); err == nil {
		t.Error("a removed tool is still registered")
	}
}

func TestStdioServerThatCrashesOrSpeaksGarbage(t *testing.T) {
	self, _ := os.Executable()
	t.Setenv("FAKE_MCP", "") // the children get FAKE_MCP from Env below only
	h := start(t,
		Server{Name: "crashy", Command: []string{self}, Env: map[string]string{"FAKE_MCP": "crash"}, Timeout: 5 * time.Second},
		Server{Name: "garbage", Command: []string{self}, Env: map[string]string{"FAKE_MCP": "garbage"}, Timeout: 5 * time.Second})
	h.ready("crashy")
	if _, err := h.run(`@crashy/die{}`); err == nil || !strings.Contains(err.Error(), "MCP server crashy") {
		t.Errorf("a call that kills the server: %v", err)
	}
	// It is restarted, and its tools come back.
	h.until("crashy restarted", func(st []State) bool { return st[0].Starts >= 2 && st[0].State == "ready" })
	if _, err := h.r.Registry.Lookup("crashy/die"); err != nil {
		t.Error(err)
	}
	st := h.until("garbage down", func(st []State) bool { return strings.HasPrefix(st[1].State, "down:") })
	if !strings.Contains(st[1].State, "restarting in") {
		t.Errorf("garbage state: %q", st[1].State)
	}
	if _, err := h.r.Registry.Lookup("garbage/anything"); err == nil {
		t.Error("a garbage server has tools")
	}
}

// everything is the reference server, installed by scripts/fetch-mcp.sh.
func everything(t *testing.T) string {
	t.Helper()
	js, _ := filepath.Abs("../third_party/mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
	_, nodeErr := exec.LookPath("node")
	_, err := os.Stat(js)
	if nodeErr != nil || err != nil {
		if os.Getenv("CLAWEDGE_REQUIRE_MCP") != "" {
			t.Fatalf("CLAWEDGE_REQUIRE_MCP is set but node or %s is missing (scripts/fetch-mcp.sh)", js)
		}
		t.Skip("node or @modelcontextprotocol/server-everything is missing (scripts/fetch-mcp.sh)")
	}
	return js
}

func freePort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

// TestEverythingServer: the reference server over stdio, streamable HTTP and
// the older HTTP+SSE transport; clawedge lists its tools and calls echo and get-sum.
func TestEverythingServer(t *testing.T) {
	js := everything(t)
	port := freePort(t)
	http := exec.Command("node", js, "streamableHttp")
	http.Env = append(os.Environ(), "PORT="+port)
	if err := http.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { http.Process.Kill(); http.Wait() })
	ssePort := freePort(t)
	sse := exec.Command("node", js, "sse")
	sse.Env = append(os.Environ(), "PORT="+ssePort)
	if err := sse.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sse.Process.Kill(); sse.Wait() })
	h := start(t,
		Server{Name: "everything", Command: []string{"node", js, "stdio"}, Timeout: 20 * time.Second},
		Server{Name: "web", URL: "http://127.0.0.1:" + port + "/mcp", Timeout: 20 * time.Second},
		Server{Name: "old", URL: "http://127.0.0.1:" + ssePort + "/sse", SSE: true, Timeout: 20 * time.Second})
	for _, name := range []string{"everything", "web", "old"} {
		st := h.ready(name)
		if !strings.Contains(fmt.Sprint(st.Tools), name+"/echo") || !strings.Contains(fmt.Sprint(st.Tools), name+"/get-sum") {
			t.Fatalf("%s tools: %+v", name, st.Tools)
		}
		out, err := h.run(`@` + name + `/echo{message="hello from clawedge"}`)
		if err != nil || !strings.Contains(out, "hello from clawedge") {
			t.Errorf("%s echo: %q %v", name, out, err)
		}
		out, err = h.run(`@` + name + `/get-sum{a=2;b=3.5}`)
		if err != nil || !strings.Contains(out, "5.5") {
			t.Errorf("%s get-sum: %q %v", name, out, err)
		}
	}
}

// A server's token does not follow a redirect to another host.
func TestHeadersStayWithTheServer(t *testing.T) {
	got := make(chan string, 1)
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("Authorization")
	}))
	defer elsewhere.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer s3cret" {
			t.Errorf("the server itself got Authorization %q", r.Header.Get("Authorization"))
		}
		http.Redirect(w, r, elsewhere.URL+"/sse", http.StatusFound)
	}))
	defer srv.Close()
	s := &server{cfg: Server{Name: "home", URL: srv.URL + "/sse", Headers: map[string]string{"Authorization": "Bearer s3cret"}}}
	resp, err := s.httpClient().Get(srv.URL + "/sse")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if a := <-got; a != "" {
		t.Errorf("the redirect target got Authorization %q", a)
	}
}
