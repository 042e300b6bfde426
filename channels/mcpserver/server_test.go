package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/internal/rigtest"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/policy"
	"github.com/clawedge/clawedge/store"
	"github.com/clawedge/clawedge/tools"
)

// board is a simulated board with pin led, the real GPIO tools, and a real store.
type board struct {
	rig   *rigtest.Rig
	b     *hal.Board
	st    *store.Store
	local Local
	appr  *policy.Approvals
	auth  *policy.Authorizer
}

func newBoard(t *testing.T, pol *policy.Policy, timeout time.Duration) *board {
	t.Helper()
	rig := rigtest.New(t, rigtest.Options{Policy: pol, ApprovalTimeout: timeout, Pins: []hal.PinConfig{{Name: "led", GPIO: 17, Mode: hal.ModeOut}, {Name: "button", GPIO: 27, Mode: hal.ModeIn, Pull: hal.PullUp, Edge: hal.EdgeBoth}}})
	b, st, appr, auth := rig.Board, rig.Store, rig.Auth.Approvals, rig.Auth
	return &board{rig: rig, b: b, st: st, appr: appr, auth: auth, local: Local{
		Runner:    rig.Runner,
		Policy:    pol,
		Principal: "uid:4242", // stdio: the local user, as the kernel reports it
	}}
}

func (bd *board) level(t *testing.T) hal.Level { return bd.rig.Level(t, "led") }

// connect serves bd's tools in memory to a client named client.
func connect(t *testing.T, b Backend, client string) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s, err := New(ctx, b, "test")
	if err != nil {
		t.Fatal(err)
	}
	st, ct := mcp.NewInMemoryTransports()
	served := make(chan error, 1)
	go func() { served <- s.Run(ctx, st) }()
	t.Cleanup(func() { cancel(); <-served })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: client, Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func text(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return r
}

func TestServerListsAndCallsThroughTheCallPath(t *testing.T) {
	pol := &policy.Policy{Default: policy.Allow, Channels: map[string]map[string]policy.Action{"mcp": {"i2c/*": policy.Deny}}}
	bd := newBoard(t, pol, time.Minute)
	cs := connect(t, bd.local, "claude-ai")
	lt, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	var write *mcp.Tool
	for _, tl := range lt.Tools {
		names = append(names, tl.Name)
		if tl.Name == "gpio.write" {
			write = tl
		}
		// Annotations from the specs: a read-only tool says so, one with
		// effects keeps MCP's defaults (not read-only, destructive).
		readOnly := tl.Annotations != nil && tl.Annotations.ReadOnlyHint
		if want := tl.Name == "gpio.read" || tl.Name == "gpio.list"; (want || tl.Name == "gpio.write") && readOnly != want {
			t.Errorf("%s: readOnlyHint %v, want %v", tl.Name, readOnly, want)
		}
	}
	if write == nil || write.Description == "" {
		t.Fatalf("gpio.write not offered with its doc: %v", names)
	}
	for _, n := range names {
		if strings.HasPrefix(n, "i2c.") {
			t.Errorf("denied tool %s is listed", n)
		}
	}
	schema, _ := write.InputSchema.(map[string]any)
	if props, _ := schema["properties"].(map[string]any); props["pin"] == nil {
		t.Errorf("gpio.write's schema has no pin: %v", write.InputSchema)
	}

	r := call(t, cs, "gpio.write", map[string]any{"pin": "led", "value": 1})
	if r.IsError || bd.level(t) != hal.High {
		t.Fatalf("gpio.write: error=%v %q, led=%v", r.IsError, text(r), bd.level(t))
	}
	tail, err := bd.st.Tail(1)
	if err != nil || len(tail) != 1 {
		t.Fatal(tail, err)
	}
	if e := tail[0]; e.Channel != "mcp" || e.Who != "mcp:uid:4242 (client claude-ai)" || !strings.Contains(e.Command, "gpio/write") || !e.Done {
		t.Errorf("audit entry: %+v", e)
	}

	// The pins as a resource: a gpio/list call, audited as the client's.
	rr, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: PinsURI})
	if err != nil || len(rr.Contents) != 1 || !strings.Contains(rr.Contents[0].Text, "led") {
		t.Fatalf("pins resource: %+v %v", rr, err)
	}
	if tail, _ := bd.st.Tail(1); len(tail) != 1 || !strings.Contains(tail[0].Command, "gpio/list") || tail[0].Who != "mcp:uid:4242 (client claude-ai)" {
		t.Errorf("resource read not audited: %+v", tail)
	}

	// Invalid arguments are refused before any effect, with the reason.
	r = call(t, cs, "gpio.write", map[string]any{"pin": "led", "value": 7})
	if !r.IsError || !strings.Contains(text(r), "value") || bd.level(t) != hal.High {
		t.Errorf("value 7: error=%v %q", r.IsError, text(r))
	}
	// A denied tool is refused whatever the spelling; the call path audits
	// the refusal, and nothing runs.
	before, _ := bd.st.Tail(100)
	for _, n := range []string{"i2c.list", "i2c/list", "I2C.list"} {
		r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: n, Arguments: map[string]any{}})
		if err == nil && !r.IsError {
			t.Errorf("%s was run: %q", n, text(r))
		}
	}
	// Straight to the backend too (as through the control socket): the call path refuses.
	res, _ := bd.local.Call(context.Background(), Host{Client: "x"}, "i2c/list", nil)
	if !res.Failed || !strings.Contains(res.Text, "denied by the policy") {
		t.Errorf("i2c/list through the backend: %+v", res)
	}
	after, _ := bd.st.Tail(100)
	for _, e := range after[len(before):] {
		if e.OK || !strings.HasPrefix(e.Detail, "refused: ") {
			t.Errorf("a denied call is in the audit trail as not refused: %v", e)
		}
	}
}

func TestServerAskWaitsForApproval(t *testing.T) {
	pol := &policy.Policy{Default: policy.Allow, Tools: map[string]policy.Action{"gpio/write": policy.Ask}}
	bd := newBoard(t, pol, time.Minute)
	asked := make(chan policy.Pending, 1)
	bd.appr.Notify = func(p policy.Pending) { asked <- p }
	cs := connect(t, bd.local, "host")
	done := make(chan *mcp.CallToolResult)
	go func() {
		r, _ := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "gpio.write", Arguments: map[string]any{"pin": "led", "value": 1}})
		done <- r
	}()
	p := <-asked
	if bd.level(t) != hal.Low || tools.UserID(p.User) != "mcp:uid:4242" || !strings.Contains(p.Call, "gpio/write") {
		t.Fatalf("before approval: led=%v, request %+v", bd.level(t), p)
	}
	// The host cannot approve its own call: only a person can.
	if _, err := bd.auth.Decide(p.ID, true, tools.Caller{Channel: "mcp", User: "mcp:host", Actor: tools.Program}); !errors.Is(err, policy.ErrNotAPerson) {
		t.Fatalf("the asker approved itself: %v", err)
	}
	if _, err := bd.auth.Decide(p.ID, true, tools.Caller{Channel: "console/stdin", User: "pi", Actor: tools.Person}); err != nil {
		t.Fatal(err)
	}
	if r := <-done; r == nil || r.IsError || bd.level(t) != hal.High {
		t.Fatalf("approved call: %+v led=%v", r, bd.level(t))
	}

	// Nobody answers: a clear tool error, nothing run.
	bd.appr.Notify = nil
	bd.auth.Timeout = time.Nanosecond
	r := call(t, cs, "gpio.write", map[string]any{"pin": "led", "value": 0})
	if !r.IsError || !strings.Contains(text(r), "nobody approved") || bd.level(t) != hal.High {
		t.Errorf("unanswered ask: error=%v %q led=%v", r.IsError, text(r), bd.level(t))
	}
	// No approvals at all (clawedge mcp without a daemon): refused at once.
	bd.auth.Approvals = nil
	r = call(t, cs, "gpio.write", map[string]any{"pin": "led", "value": 0})
	if !r.IsError || !strings.Contains(text(r), "needs a person's approval") {
		t.Errorf("ask without approvals: %q", text(r))
	}
}

// serveHTTP serves bd's tools on a loopback port with token until the test
// ends; logs gets what the server logs.
func serveHTTP(t *testing.T, bd *board, tokens map[string]string, logs io.Writer) (url string) {
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ln, err := Listen("127.0.0.1:0", tokens)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error)
	go func() {
		served <- Serve(ctx, ln, Handler(&Servers{Backend: bd.local, Version: "test", Log: log}, tokens, log))
	}()
	t.Cleanup(func() { cancel(); <-served })
	return "http://" + ln.Addr().String() + "/mcp"
}

func TestHTTPRequiresTheToken(t *testing.T) {
	const token = "s3cret-token-0123456789"
	bd := newBoard(t, nil, time.Minute)
	var logs bytes.Buffer
	url := serveHTTP(t, bd, map[string]string{"token": token}, &logs)

	dial := func(auth string) (*mcp.ClientSession, error) {
		hc := &http.Client{Transport: headerRT{auth}}
		return mcp.NewClient(&mcp.Implementation{Name: "http-host", Version: "1"}, nil).Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, nil)
	}
	for _, auth := range []string{"", "Bearer wrong", "Bearer " + token + "x", token} {
		if cs, err := dial(auth); err == nil {
			cs.Close()
			t.Errorf("Authorization %q was let in", auth)
		}
	}
	cs, err := dial("Bearer " + token)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	r := call(t, cs, "gpio.write", map[string]any{"pin": "led", "value": 1})
	if r.IsError || bd.level(t) != hal.High {
		t.Fatalf("over HTTP: %q", text(r))
	}
	if tail, _ := bd.st.Tail(1); len(tail) != 1 || tail[0].Who != "mcp:token (client http-host)" {
		t.Errorf("audit: %v", tail)
	}
	if strings.Contains(logs.String(), token) {
		t.Error("the token was logged")
	}
	if !strings.Contains(logs.String(), "request refused") {
		t.Errorf("refusals not logged: %s", logs.String())
	}
	// A tool registered later (an MCP server's, once it is up) is offered to
	// the next session.
	if err := bd.local.Runner.Registry.Register(pingTool{}); err != nil {
		t.Fatal(err)
	}
	cs2, err := dial("Bearer " + token)
	if err != nil {
		t.Fatal(err)
	}
	defer cs2.Close()
	if r := call(t, cs2, "extra.ping", nil); r.IsError || text(r) != "pong" {
		t.Errorf("a tool registered later: %q", text(r))
	}
	if _, err := Listen("0.0.0.0:0", nil); err == nil {
		t.Error("listening beyond loopback without a token")
	}
}

// A web page must not reach a loopback server: not by its own name made to
// resolve to 127.0.0.1 (DNS rebinding), not from another origin; hosts
// without a browser send no Origin and are let in.
func TestHTTPRefusesOtherSites(t *testing.T) {
	const token = "s3cret-token-0123456789"
	url := serveHTTP(t, newBoard(t, nil, time.Minute), map[string]string{"token": token}, io.Discard)
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	for _, c := range []struct {
		host, origin string
		want         int
	}{
		{"", "", http.StatusOK},
		{"localhost:8765", "", http.StatusOK},
		{"[::1]", "", http.StatusOK},
		{"127.0.0.1", "http://[::1]:6274", http.StatusOK},
		{"", "http://localhost:6274", http.StatusOK}, // a host's own page on this machine
		{"evil.example:8765", "", http.StatusForbidden},
		{"evil.example:8765", "http://evil.example:8765", http.StatusForbidden},
		{"", "http://evil.example", http.StatusForbidden},
		{"", "null", http.StatusForbidden},
	} {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(init))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if c.host != "" {
			req.Host = c.host
		}
		if c.origin != "" {
			req.Header.Set("Origin", c.origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("Host %q, Origin %q: HTTP %d, want %d", c.host, c.origin, resp.StatusCode, c.want)
		}
	}
}

// A stranger knocking all day leaves a few log lines, not one per knock.
func TestHTTPRefusalsLogBounded(t *testing.T) {
	var logs bytes.Buffer
	h := Handler(&Servers{}, map[string]string{"token": "s3cret-token-0123456789"}, slog.New(slog.NewTextHandler(&logs, nil)))
	for range 1000 {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader("{}")))
		if w.Code != http.StatusUnauthorized {
			t.Fatalf("HTTP %d", w.Code)
		}
	}
	if n := strings.Count(logs.String(), "request refused"); n != 10 { // 1, 2, 4, ... 512
		t.Errorf("%d log lines for 1000 refusals: %s", n, logs.String())
	}
}

// A stranger's request is answered 401 and its connection closed: it cannot
// hold one open by never sending the body it announced.
func TestHTTPClosesAStrangersConnection(t *testing.T) {
	url := serveHTTP(t, newBoard(t, nil, time.Minute), map[string]string{"token": "s3cret-token-0123456789"}, io.Discard)
	c, err := net.Dial("tcp", strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/mcp"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{")
	c.SetReadDeadline(time.Now().Add(2 * time.Second)) // a bound on failing, not a wait
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !resp.Close {
		t.Fatalf("HTTP %d, close %v: want 401 and the connection closed", resp.StatusCode, resp.Close)
	}
	if _, err := c.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("the connection is still open after the 401: %v", err)
	}
}

func TestHTTPServerBoundsIdleConnections(t *testing.T) {
	srv := newHTTPServer(http.NotFoundHandler(), true)
	if srv.IdleTimeout <= 0 || srv.ReadHeaderTimeout <= 0 || srv.MaxHeaderBytes <= 0 {
		t.Errorf("idle %s, header %s, %d header bytes: a connection may be held forever", srv.IdleTimeout, srv.ReadHeaderTimeout, srv.MaxHeaderBytes)
	}
}

type headerRT struct{ auth string }

func (h headerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if h.auth != "" {
		r.Header.Set("Authorization", h.auth)
	}
	return http.DefaultTransport.RoundTrip(r)
}

type pingTool struct{}

func (pingTool) Spec() grammar.ToolSpec { return grammar.ToolSpec{Name: "extra/ping", Doc: "ping"} }
func (pingTool) Run(context.Context, grammar.Args) (tools.Result, error) {
	return tools.Result{Text: "pong"}, nil
}

// A host that asks for progress hears, while a gpio/wait runs, that it still
// does; the call ends when the host cancels it, audited as cancelled.
func TestServerReportsProgressAndCancels(t *testing.T) {
	defer func(d time.Duration) { ProgressEvery = d }(ProgressEvery)
	ProgressEvery = 10 * time.Millisecond
	bd := newBoard(t, nil, time.Minute)
	s, err := New(context.Background(), bd.local, "test")
	if err != nil {
		t.Fatal(err)
	}
	st, ct := mcp.NewInMemoryTransports()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go s.Run(ctx, st)
	progress := make(chan string, 100)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "waiter", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			select {
			case progress <- req.Params.Message:
			default:
			}
		},
	}).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	callCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		p := &mcp.CallToolParams{Name: "gpio.wait", Arguments: map[string]any{"pin": "button", "edge": "rising", "timeout_ms": 3600000}}
		p.SetProgressToken("w1")
		_, err := cs.CallTool(callCtx, p)
		done <- err
	}()
	select {
	case msg := <-progress:
		if !strings.HasPrefix(msg, "gpio/wait running for ") {
			t.Errorf("progress: %q", msg)
		}
	case err := <-done:
		t.Fatalf("the wait ended before any progress: %v", err)
	}
	cancel()
	if err := <-done; err == nil {
		t.Error("a cancelled call returned no error")
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		tail, _ := bd.st.Tail(1)
		if len(tail) == 1 && tail[0].Done {
			if !strings.Contains(tail[0].Detail, ErrHostCancelled.Error()) {
				t.Errorf("audit of the cancelled call: %+v", tail[0])
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the wait was not ended by the host's cancel: %+v", tail)
		}
	}
}

// hinted is a tool with MCP annotations of its own, as an MCP server's
// tool registered by mcpclient has.
type hinted struct{ pingTool }

func (hinted) Spec() grammar.ToolSpec { return grammar.ToolSpec{Name: "srv/lookup", Doc: "looks up"} }
func (hinted) Annotations() *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{ReadOnlyHint: true, Title: "Lookup"}
}

// An MCP server's tool is offered to hosts with the annotations its server gave.
func TestServerPassesOnServersAnnotations(t *testing.T) {
	bd := newBoard(t, nil, time.Minute)
	if err := bd.local.Runner.Registry.Register(hinted{}); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, bd.local, "host")
	lt, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range lt.Tools {
		if tl.Name == "srv.lookup" {
			if a := tl.Annotations; a == nil || !a.ReadOnlyHint || a.Title != "Lookup" {
				t.Errorf("srv.lookup's annotations: %+v", a)
			}
			return
		}
	}
	t.Error("srv.lookup is not offered")
}

// dialAs connects to url over HTTP as a host that gives name in its
// handshake and carries token.
func dialAs(t *testing.T, url, token, name string) *mcp.ClientSession {
	t.Helper()
	hc := &http.Client{Transport: headerRT{"Bearer " + token}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, nil).Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, nil)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// A host is the token it authenticated with, never the name its handshake
// gives (issue 34): with token A, saying it is "b", it is decided and
// audited as mcp:a; mcp:b's rules do not hold it, mcp:a's do. Two tokens,
// two principals.
func TestHTTPHostIsItsTokensName(t *testing.T) {
	const tokA, tokB = "token-of-a-0123456789", "token-of-b-0123456789"
	pol := &policy.Policy{Default: policy.Allow, Users: map[string]map[string]policy.Action{
		"mcp:a": {"gpio/read": policy.Deny},
		"mcp:b": {"gpio/write": policy.Deny},
	}}
	bd := newBoard(t, pol, time.Minute)
	var logs bytes.Buffer
	url := serveHTTP(t, bd, map[string]string{"a": tokA, "b": tokB}, &logs)

	last := func() store.AuditEntry {
		t.Helper()
		tail, err := bd.st.Tail(1)
		if err != nil || len(tail) != 1 {
			t.Fatal(tail, err)
		}
		return tail[0]
	}
	// Token A, claiming to be b.
	liar := dialAs(t, url, tokA, "b")
	if r := call(t, liar, "gpio.write", map[string]any{"pin": "led", "value": 1}); r.IsError || bd.level(t) != hal.High {
		t.Fatalf("mcp:b's deny held a host with a's token: %q", text(r))
	}
	if e := last(); e.Who != "mcp:a (client b)" || tools.UserID(e.Who) != "mcp:a" {
		t.Errorf("audited as %q, want mcp:a with the handshake's name shown", e.Who)
	}
	if r := call(t, liar, "gpio.read", map[string]any{"pin": "button"}); !r.IsError || !strings.Contains(text(r), "denied") {
		t.Errorf("mcp:a's deny did not hold the host with a's token: %q", text(r))
	}
	if e := last(); tools.UserID(e.Who) != "mcp:a" || e.OK {
		t.Errorf("refusal audited as %+v", e)
	}

	// Token B, whatever it says, is mcp:b.
	b := dialAs(t, url, tokB, "a")
	if r := call(t, b, "gpio.write", map[string]any{"pin": "led", "value": 0}); !r.IsError || bd.level(t) != hal.High {
		t.Errorf("mcp:b's deny did not hold the host with b's token: %q", text(r))
	}
	if e := last(); e.Who != "mcp:b (client a)" {
		t.Errorf("audited as %q, want mcp:b", e.Who)
	}
	if r := call(t, b, "gpio.read", map[string]any{"pin": "button"}); r.IsError {
		t.Errorf("mcp:a's deny held the host with b's token: %q", text(r))
	}
	if strings.Contains(logs.String(), tokA) || strings.Contains(logs.String(), tokB) {
		t.Error("a token was logged")
	}
}

// A request is the token's it carries, not its session's: a host that
// switches tokens mid-session is either refused (a stateful session keeps
// its opener's token name, the SDK's user check) or, sessionless, the new
// token's; it never calls as the session's first host.
func TestHTTPSessionStaysWithItsToken(t *testing.T) {
	const tokA, tokB = "token-of-a-0123456789", "token-of-b-0123456789"
	bd := newBoard(t, nil, time.Minute)
	url := serveHTTP(t, bd, map[string]string{"a": tokA, "b": tokB}, io.Discard)
	rt := &switchRT{auth: "Bearer " + tokA}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "x", Version: "1"}, nil).Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: rt}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	rt.set("Bearer " + tokB)
	r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "gpio.write", Arguments: map[string]any{"pin": "led", "value": 1}})
	if err != nil || r.IsError {
		return // refused
	}
	if tail, _ := bd.st.Tail(1); len(tail) != 1 || tools.UserID(tail[0].Who) != "mcp:b" {
		t.Errorf("a call with b's token on a's session: audited %+v", tail)
	}
}

// switchRT sends the Authorization it holds now.
type switchRT struct {
	mu   sync.Mutex
	auth string
}

func (s *switchRT) set(a string) { s.mu.Lock(); s.auth = a; s.mu.Unlock() }

func (s *switchRT) RoundTrip(r *http.Request) (*http.Response, error) {
	s.mu.Lock()
	a := s.auth
	s.mu.Unlock()
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", a)
	return http.DefaultTransport.RoundTrip(r)
}

// The handshake's name is never the principal: over stdio (no token) the
// backend's door names the host, and without one a call is refused.
func TestHandshakeNameDecidesNothing(t *testing.T) {
	pol := &policy.Policy{Default: policy.Allow, Users: map[string]map[string]policy.Action{"mcp:evil": {"*": policy.Allow}, "mcp:uid:4242": {"gpio/write": policy.Deny}}}
	bd := newBoard(t, pol, time.Minute)
	cs := connect(t, bd.local, "evil")
	r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "gpio.write", Arguments: map[string]any{"pin": "led", "value": 1}})
	if err == nil && !r.IsError || bd.level(t) != hal.Low {
		t.Errorf("the host named itself out of mcp:uid:4242's deny: %v %v", r, err)
	}
	if r := call(t, cs, "gpio.read", map[string]any{"pin": "button"}); r.IsError {
		t.Fatalf("gpio.read: %q", text(r))
	}
	if tail, _ := bd.st.Tail(1); len(tail) != 1 || tail[0].Who != "mcp:uid:4242 (client evil)" {
		t.Errorf("audited as %+v", tail)
	}
	nobody := bd.local
	nobody.Principal = ""
	if res, _ := nobody.Call(context.Background(), Host{Client: "uid:4242"}, "gpio/read", []byte(`{"pin":"button"}`)); !res.Failed || !strings.Contains(res.Text, "no principal") {
		t.Errorf("a call without a door's principal: %+v", res)
	}
}
