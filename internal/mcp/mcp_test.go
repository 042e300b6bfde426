package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestDecode(t *testing.T) {
	for _, c := range []struct{ in, kind, err string }{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, "request", ""},
		{`{"jsonrpc":"2.0","id":"a-1","method":"tools/list","params":{}}`, "request", ""},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, "notification", ""},
		{`{"jsonrpc":"2.0","id":7,"result":{}}`, "response", ""},
		{`{"jsonrpc":"2.0","id":"x","error":{"code":-32601,"message":"no"}}`, "response", ""},
		{`this is not JSON-RPC {{{`, "", "not a JSON-RPC message"},
		{`{"jsonrpc":"1.0","id":1,"method":"ping"}`, "", "not JSON-RPC 2.0"},
		{`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, "", "neither a number nor a string"},
		{`{"jsonrpc":"2.0","id":1,"method":"ping","result":{}}`, "", "both a method and a result"},
		{`{"jsonrpc":"2.0"}`, "", "neither a method nor an id"},
		{`{"jsonrpc":"2.0","id":1}`, "", "exactly one of result and error"},
		{`{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}`, "", "exactly one of result and error"},
	} {
		m, err := Decode([]byte(c.in))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		kind := map[bool]string{true: "request"}[m.IsRequest()] + map[bool]string{true: "notification"}[m.IsNotification()] + map[bool]string{true: "response"}[m.IsResponse()]
		if kind != c.kind {
			t.Errorf("%s: a %s, want a %s", c.in, kind, c.kind)
		}
	}
}

func TestStreamBoundsAndGarbage(t *testing.T) {
	s := NewStream("stdout of x", strings.NewReader("\n  \n{{{ garbage\n"), io.Discard, nil)
	if _, err := s.Read(); err == nil || !strings.Contains(err.Error(), "stdout of x line 3: not a JSON-RPC message") {
		t.Errorf("garbage: %v", err)
	}
	long := strings.Repeat("x", MaxMessage+10) + "\n"
	s = NewStream("stdout of y", strings.NewReader(long), io.Discard, nil)
	if _, err := s.Read(); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("stdout of y line 1: a message longer than %d bytes", MaxMessage)) {
		t.Errorf("long line: %v", err)
	}
	s = NewStream("stdout of z", strings.NewReader(`{"jsonrpc":"2.0","method":"a"}`), io.Discard, nil)
	if m, err := s.Read(); err != nil || m.Method != "a" {
		t.Errorf("last line without newline: %v %v", m, err)
	}
	if _, err := s.Read(); !errors.Is(err, io.EOF) {
		t.Errorf("at the end: %v", err)
	}
}

// pair serves s in memory to a client.
func pair(t *testing.T, s *Server, opts ClientOptions) *ClientSession {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	st, ct := Pipe()
	served := make(chan error, 1)
	go func() { served <- s.Run(ctx, st) }()
	cs, err := Connect(ctx, ct, Implementation{Name: "tester", Version: "1"}, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		cancel()
		if err := <-served; err != nil {
			t.Errorf("server: %v", err)
		}
	})
	return cs
}

func TestCancellationReachesTheTool(t *testing.T) {
	s := NewServer(Implementation{Name: "s", Version: "1"}, "")
	started, cancelled := make(chan struct{}), make(chan error, 1)
	s.AddTool(&Tool{Name: "hang"}, func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error) {
		close(started)
		<-ctx.Done()
		cancelled <- ctx.Err()
		return nil, ctx.Err()
	})
	s.AddTool(&Tool{Name: "who"}, func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error) {
		return &CallToolResult{Content: []Content{{Type: "text", Text: req.Client.Name + " " + string(req.Arguments)}}}, nil
	})
	cs := pair(t, s, ClientOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	if _, err := cs.CallTool(ctx, "hang", nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled call: %v", err)
	}
	if err := <-cancelled; !errors.Is(err, context.Canceled) {
		t.Errorf("the tool's context: %v", err)
	}
	// The connection is still good, and knows who calls.
	r, err := cs.CallTool(context.Background(), "who", map[string]any{"x": 1})
	if err != nil || r.Content[0].Text != `tester {"x":1}` {
		t.Errorf("after the cancel: %+v %v", r, err)
	}
	if _, err := cs.CallTool(context.Background(), "nope", nil); err == nil || !strings.Contains(err.Error(), `unknown tool "nope"`) {
		t.Errorf("unknown tool: %v", err)
	}
	if err := cs.Ping(context.Background()); err != nil {
		t.Error(err)
	}
}

func TestPaginationAndListChanged(t *testing.T) {
	s := NewServer(Implementation{Name: "s", Version: "1"}, "")
	for i := range 2*pageSize + 50 {
		s.AddTool(&Tool{Name: fmt.Sprintf("t%03d", i)}, nil)
	}
	changed := make(chan struct{}, 1)
	cs := pair(t, s, ClientOptions{ToolsChanged: func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}})
	all, err := cs.ListTools(context.Background())
	if err != nil || len(all) != 2*pageSize+50 || all[0].Name != "t000" || all[len(all)-1].Name != "t249" {
		t.Fatalf("%d tools, %v", len(all), err)
	}
	if string(all[0].InputSchema) != `{"type":"object"}` {
		t.Errorf("default schema: %s", all[0].InputSchema)
	}
	s.RemoveTools("t000")
	<-changed
	if all, _ := cs.ListTools(context.Background()); len(all) != 2*pageSize+49 {
		t.Errorf("after a removal: %d tools", len(all))
	}
	var res any
	if err := cs.conn.Call(context.Background(), methodToolsList, listParams{Cursor: "999"}, &res); err == nil || !strings.Contains(err.Error(), "invalid cursor") {
		t.Errorf("a bad cursor: %v", err)
	}
}

// raw writes lines to a server on stdio and returns its answers.
func raw(t *testing.T, s *Server, lines ...string) []string {
	t.Helper()
	st, ct := Pipe()
	done := make(chan error, 1)
	go func() { done <- s.Run(context.Background(), st) }()
	c := ct.(*Stream)
	var out []string
	for _, l := range lines {
		io.WriteString(c.w, l+"\n")
		if strings.Contains(l, `"id"`) {
			b, err := readLine(c.br, MaxMessage)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, string(b))
		}
	}
	c.Close()
	<-done
	return out
}

func TestVersionNegotiation(t *testing.T) {
	s := NewServer(Implementation{Name: "s", Version: "1"}, "")
	for v, want := range map[string]string{"2024-11-05": "2024-11-05", "2025-03-26": "2025-03-26", "2025-11-25": "2025-11-25", "1999-01-01": Versions[0]} {
		out := raw(t, s, `{"jsonrpc":"2.0","id":"i","method":"initialize","params":{"protocolVersion":"`+v+`","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
		var m struct {
			ID     string           `json:"id"`
			Result initializeResult `json:"result"`
		}
		if json.Unmarshal([]byte(out[0]), &m); m.ID != "i" || m.Result.ProtocolVersion != want || m.Result.ServerInfo.Name != "s" {
			t.Errorf("asked %s: %s", v, out[0])
		}
	}
	out := raw(t, s, `{"jsonrpc":"2.0","id":1,"method":"no/such"}`, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":[]}`)
	if !strings.Contains(out[0], `"code":-32601`) || !strings.Contains(out[1], `"code":-32602`) {
		t.Errorf("errors: %v", out)
	}

	// A server that answers a version we do not speak is refused.
	st, ct := Pipe()
	go func() {
		c := st.(*Stream)
		line, _ := readLine(c.br, MaxMessage)
		m, _ := Decode(line)
		io.WriteString(c.w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"protocolVersion":"1999-01-01","capabilities":{},"serverInfo":{"name":"old","version":"0"}}}`+"\n")
	}()
	if _, err := Connect(context.Background(), ct, Implementation{Name: "c"}, ClientOptions{}); err == nil || !strings.Contains(err.Error(), `protocol version "1999-01-01"`) {
		t.Errorf("an old server: %v", err)
	}
}

func TestHTTPSessions(t *testing.T) {
	s := NewServer(Implementation{Name: "s", Version: "1"}, "")
	s.AddTool(&Tool{Name: "t"}, func(context.Context, *CallToolRequest) (*CallToolResult, error) {
		return &CallToolResult{Content: []Content{{Type: "text", Text: "ok"}}}, nil
	})
	srv := httptest.NewServer(NewHTTPHandler(func(*http.Request) *Server { return s }))
	defer srv.Close()
	post := func(session, body string) (*http.Response, string) {
		req, _ := http.NewRequest("POST", srv.URL, strings.NewReader(body))
		req.Header.Set("Mcp-Session-Id", session)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	if resp, body := post("", list); resp.StatusCode != 400 || !strings.Contains(body, "initialize first") {
		t.Errorf("no session: %s %s", resp.Status, body)
	}
	if resp, _ := post("nope", list); resp.StatusCode != 404 {
		t.Errorf("unknown session: %s", resp.Status)
	}
	if resp, body := post("", "{{{"); resp.StatusCode != 400 || !strings.Contains(body, `"code":-32700`) {
		t.Errorf("garbage: %s %s", resp.Status, body)
	}
	resp, body := post("", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || sid == "" || !strings.Contains(body, `"protocolVersion":"2025-06-18"`) {
		t.Fatalf("initialize: %s %s %q", resp.Status, body, sid)
	}
	if resp, body := post(sid, list); resp.StatusCode != 200 || !strings.Contains(body, `"name":"t"`) {
		t.Errorf("tools/list: %s %s", resp.Status, body)
	}
	if resp, _ := post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); resp.StatusCode != 202 {
		t.Errorf("a notification: %s", resp.Status)
	}
	// The GET stream carries list_changed.
	req, _ := http.NewRequest("GET", srv.URL, nil)
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Accept", "text/event-stream")
	g, err := http.DefaultClient.Do(req)
	if err != nil || g.StatusCode != 200 {
		t.Fatalf("GET: %v %v", g, err)
	}
	defer g.Body.Close()
	s.AddTool(&Tool{Name: "u"}, nil)
	ev, err := newEventReader(g.Body).Next()
	if err != nil || !strings.Contains(string(ev.Data), methodToolsChanged) {
		t.Errorf("GET stream: %+v %v", ev, err)
	}
	req, _ = http.NewRequest("DELETE", srv.URL, nil)
	req.Header.Set("Mcp-Session-Id", sid)
	if d, err := http.DefaultClient.Do(req); err != nil || d.StatusCode != 204 {
		t.Errorf("DELETE: %v %v", d, err)
	}
	if _, err := newEventReader(g.Body).Next(); err != io.EOF {
		t.Errorf("the GET stream after DELETE: %v", err)
	}
	if resp, _ := post(sid, list); resp.StatusCode != 404 {
		t.Errorf("a deleted session: %s", resp.Status)
	}
}

func TestStreamableClientSessionEndedByServer(t *testing.T) {
	s := NewServer(Implementation{Name: "s", Version: "1"}, "")
	srv := httptest.NewServer(NewHTTPHandler(func(*http.Request) *Server { return s }))
	defer srv.Close()
	tr := NewStreamableClient(srv.URL, srv.Client())
	cs, err := Connect(context.Background(), tr, Implementation{Name: "c", Version: "1"}, ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if cs.Version != Versions[0] || cs.ServerInfo.Name != "s" {
		t.Errorf("handshake: %q %+v", cs.Version, cs.ServerInfo)
	}
	req, _ := http.NewRequest("DELETE", srv.URL, nil)
	tr.mu.Lock()
	req.Header.Set("Mcp-Session-Id", tr.session)
	tr.mu.Unlock()
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 204 {
		t.Fatalf("DELETE: %v %v", resp, err)
	}
	if _, err := cs.ListTools(context.Background()); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("a call in a forgotten session: %v", err)
	}
	if err := cs.Wait(); err == nil || !strings.Contains(err.Error(), "the server ended the session") {
		t.Errorf("the connection: %v", err)
	}
}

// A peer that floods requests gets an error past MaxInProgress rather than a
// goroutine each.
func TestRequestsInProgressAreBounded(t *testing.T) {
	a, b := Pipe()
	release := make(chan struct{})
	c := NewConn(a, func(ctx context.Context, m *Message) (any, error) {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return "late", nil
	})
	defer c.Close()
	defer close(release)
	go func() {
		for i := 1; i <= MaxInProgress+1; i++ {
			b.Write(context.Background(), &Message{JSONRPC: "2.0", ID: json.RawMessage(fmt.Sprint(i)), Method: "slow"})
		}
	}()
	got := make(chan *Message, 1)
	go func() {
		m, err := b.Read()
		if err == nil {
			got <- m
		}
	}()
	select {
	case m := <-got:
		if string(m.ID) != fmt.Sprint(MaxInProgress+1) || m.Error == nil || !strings.Contains(m.Error.Message, "requests in progress") {
			t.Errorf("got %+v", m)
		}
	case <-time.After(2 * time.Second): // a bound on failing, not a wait
		t.Fatal("no answer to the request past the bound: every one is being served")
	}
}
