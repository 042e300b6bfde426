// Package mcpclient registers the tools of configured MCP servers as
// <server>/<tool>, like built-in ones: each server is started (a command over
// stdio) or connected (streamable HTTP or SSE) at start, restarted with backoff
// when it dies, and its tools are listed again when it says they changed. Calls
// are bounded in time and in the size of what they return; the runner audits
// them like any call, and the policy denies them until a rule names them.
package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/internal/httpclient"
	"github.com/clawedge/clawedge/sandbox"
	"github.com/clawedge/clawedge/tools"
)

// Server is one configured MCP server.
type Server struct {
	Name    string
	Command []string
	Env     map[string]string // added to an empty environment, with PATH and HOME
	URL     string
	Headers map[string]string
	SSE     bool // the URL speaks the older HTTP+SSE transport
	// Timeout bounds one call and the start-up handshake.
	Timeout time.Duration
	// MaxOutput bounds the bytes of one result kept.
	MaxOutput int
	// TrustReadOnly: the server's readOnlyHint makes a tool ReadOnlyHinted
	// (the policy's group:readonly); otherwise the hint is only shown.
	TrustReadOnly bool
	// Read, Write and Network are a command's rights in the sandbox
	// (Manager.Box): read and execute beneath Read, write beneath Write,
	// connecting out when Network is set. Its program is granted too.
	Read, Write []string
	Network     bool
}

// rights says what a command server may reach, as `clawedge tools` and
// doctor show it.
func (m *Manager) rights(s Server) string {
	if len(s.Command) == 0 {
		return "" // a url's server runs elsewhere
	}
	if m.Box == nil {
		return "unconfined: the daemon's own rights"
	}
	list := func(p []string) string {
		if len(p) == 0 {
			return "nothing more"
		}
		return strings.Join(p, ", ")
	}
	net := "no network"
	if s.Network {
		net = "connects out (never listens)"
	}
	return fmt.Sprintf("sandboxed, a uid of its own: reads its program and %s; writes %s; %s", list(s.Read), list(s.Write), net)
}

// MaxMessage bounds one message read from a server (a page of tools, a
// result); a result kept is bounded again by MaxOutput.
const MaxMessage = 16 << 20

// ToolState is one tool of a server, as `clawedge tools` shows it.
type ToolState struct {
	Name     string `json:"name"`     // clawedge's name, server/tool
	MCPName  string `json:"mcp_name"` // the server's name for it
	Degraded string `json:"degraded,omitempty"`
	// ReadOnly is the server's readOnlyHint: shown, and trusted only when
	// the server is (Server.TrustReadOnly).
	ReadOnly bool `json:"read_only_hint,omitempty"`
}

// State is a server's state, as `clawedge tools` and doctor show it.
type State struct {
	Name  string `json:"name"`
	State string `json:"state"` // "starting", "ready", "down: ...; restarting in 4s"
	// Starts counts the connections made (1 when it never had to restart).
	Starts int         `json:"starts"`
	Tools  []ToolState `json:"tools"`
	// Rights are what a command server's process may reach (Server.Rights).
	Rights string `json:"rights,omitempty"`
}

// Manager runs the configured servers.
type Manager struct {
	Registry *tools.Registry
	Log      *slog.Logger
	// FirstBackoff is the first wait before a restart (default 1s); it doubles
	// after each failure up to Backoff (default 1m).
	FirstBackoff, Backoff time.Duration
	// RelistEvery is the least time between two listings of a server's
	// tools on its list_changed notifications (default 10s).
	RelistEvery time.Duration
	// Box confines each command server's process: it is other people's code
	// (npm packages, in practice), so it runs as code that is not ours does,
	// with its own identity, its own PID namespace (whatever it starts, a
	// setsid grandchild included, dies with it), and only the rights its
	// entry declares. Nil runs them unconfined: the transport's own tests.
	Box *sandbox.Runner
	// Launch says which files the program's start executes beyond itself
	// (a script's interpreter, env and what it runs, their loader and
	// libraries), granted with the entry's read; nil grants the program
	// alone.
	Launch func(program string, read []string) ([]string, error)
	// PATH is a confined server's PATH ("": the daemon's): where the
	// program Launch granted for `#!/usr/bin/env NAME` is found again.
	PATH string

	mu      sync.Mutex
	servers []*server
}

type server struct {
	cfg Server
	m   *Manager

	mu      sync.Mutex
	session *mcp.ClientSession
	state   string
	starts  int
	tools   []ToolState
	relist  chan struct{}
}

// Start connects every server in the background and keeps them running until
// ctx ends. The tools appear in the registry as each server becomes ready.
func (m *Manager) Start(ctx context.Context, servers []Server) *sync.WaitGroup {
	var wg sync.WaitGroup
	for _, cfg := range servers {
		s := &server{cfg: cfg, m: m, state: "starting", relist: make(chan struct{}, 1)}
		m.mu.Lock()
		m.servers = append(m.servers, s)
		m.mu.Unlock()
		wg.Go(func() { s.supervise(ctx) })
	}
	return &wg
}

// States returns each server's state, by name.
func (m *Manager) States() []State {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]State, 0, len(m.servers))
	for _, s := range m.servers {
		s.mu.Lock()
		out = append(out, State{Name: s.cfg.Name, State: s.state, Starts: s.starts, Tools: append([]ToolState(nil), s.tools...), Rights: m.rights(s.cfg)})
		s.mu.Unlock()
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (m *Manager) log() *slog.Logger {
	if m.Log == nil {
		return slog.Default()
	}
	return m.Log
}

func (s *server) setState(st string) {
	s.mu.Lock()
	s.state = st
	s.mu.Unlock()
}

// supervise connects, serves until the session ends, and starts again with backoff.
func (s *server) supervise(ctx context.Context) {
	max := s.m.Backoff
	if max <= 0 {
		max = time.Minute
	}
	first := s.m.FirstBackoff
	if first <= 0 {
		first = time.Second
	}
	wait := first
	for ctx.Err() == nil {
		started := time.Now()
		err := s.run(ctx)
		if ctx.Err() != nil {
			return
		}
		if time.Since(started) > 2*max {
			wait = first // it ran a good while: this is a new failure
		}
		s.setState(fmt.Sprintf("down: %v; restarting in %s", err, wait))
		s.m.log().Warn("mcp server down; restarting", "server", s.cfg.Name, "err", err, "in", wait)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		wait = min(wait*2, max)
	}
}

// run is one life of the server: connect, list, register, re-list on change,
// until the session ends.
func (s *server) run(ctx context.Context) error {
	s.setState("starting")
	cs, cancel, err := s.connect(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	defer cs.Close()
	s.mu.Lock()
	s.session = cs
	s.starts++
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.session = nil
		s.mu.Unlock()
	}()
	if err := s.list(ctx, cs); err != nil {
		return err
	}
	s.setState("ready")
	s.m.log().Info("mcp server ready", "server", s.cfg.Name, "tools", len(s.tools))
	ended := make(chan error, 1)
	go func() { ended <- cs.Wait() }()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-ended:
			return sessionEnded(err)
		case <-s.relist:
			if err := s.list(ctx, cs); err != nil {
				s.m.log().Warn("mcp server: listing the tools again failed", "server", s.cfg.Name, "err", err)
			}
			// However often the server says its tools changed, they are
			// listed at most once per RelistEvery: a storm of list_changed
			// costs a listing and a compile now and then, not a core.
			t := time.NewTimer(s.m.relistEvery())
			select {
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			case err := <-ended:
				t.Stop()
				return sessionEnded(err)
			case <-t.C:
			}
		}
	}
}

func sessionEnded(err error) error {
	if err == nil {
		err = errors.New("the connection closed")
	}
	return fmt.Errorf("session ended: %w", err)
}

func (m *Manager) relistEvery() time.Duration {
	if m.RelistEvery <= 0 {
		return 10 * time.Second
	}
	return m.RelistEvery
}

// connect starts or dials the server; cancel ends what the connection holds
// (call it after closing the session).
func (s *server) connect(ctx context.Context) (cs *mcp.ClientSession, cancel func(), err error) {
	// The connection lives on ctx: the SSE transport keeps its event stream on
	// the context it connected with, so a timeout context cancelled once
	// connected would cut it. The handshake is bounded by a timer instead.
	lctx, cancel := context.WithCancel(ctx)
	timer := time.AfterFunc(s.timeout(), cancel)
	cs, err = s.dial(lctx)
	if !timer.Stop() || err != nil {
		cancel()
		if err == nil {
			cs.Close()
			err = errors.New("timed out")
		}
		return nil, nil, fmt.Errorf("connecting: %w", err)
	}
	return cs, cancel, nil
}

// dial opens the transport and runs the handshake within ctx.
func (s *server) dial(ctx context.Context) (*mcp.ClientSession, error) {
	var t mcp.Transport
	switch {
	case len(s.cfg.Command) > 0:
		cmd, err := s.command(ctx)
		if err != nil {
			return nil, err
		}
		t = &groupTransport{cmd: cmd}
	case s.cfg.SSE:
		t = &mcp.SSEClientTransport{Endpoint: s.cfg.URL, HTTPClient: s.httpClient(), MaxEventSize: MaxMessage}
	default:
		t = &mcp.StreamableClientTransport{Endpoint: s.cfg.URL, HTTPClient: s.httpClient(), MaxEventSize: MaxMessage}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "clawedge", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case s.relist <- struct{}{}:
			default:
			}
		},
	})
	return c.Connect(ctx, t, nil)
}

// command is the server's process: confined by the Manager's Box, or (no
// Box) in a process group of its own, so that closing it ends what it
// started too (an npx server is npm, then node).
func (s *server) command(ctx context.Context) (*exec.Cmd, error) {
	// The child gets only what it needs: no token of clawedge's leaks to it.
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	for k, v := range s.cfg.Env {
		env = append(env, k+"="+v)
	}
	stderr := &logWriter{log: s.m.log(), server: s.cfg.Name}
	if s.m.Box == nil {
		cmd := exec.CommandContext(ctx, s.cfg.Command[0], s.cfg.Command[1:]...)
		cmd.Env, cmd.Stderr = env, stderr
		inGroup(cmd)
		return cmd, nil
	}
	program, err := exec.LookPath(s.cfg.Command[0])
	if err != nil {
		return nil, fmt.Errorf("its program: %w", err)
	}
	if program, err = filepath.Abs(program); err != nil {
		return nil, fmt.Errorf("its program: %w", err)
	}
	if s.m.PATH != "" {
		env[0] = "PATH=" + s.m.PATH
	}
	read := s.cfg.Read
	if s.m.Launch != nil {
		grants, err := s.m.Launch(program, s.cfg.Read)
		if err != nil {
			return nil, fmt.Errorf("its program %s cannot start confined: %w", program, err)
		}
		read = append(slices.Clone(read), grants...)
	}
	cmd, err := s.m.Box.Command(sandbox.Spec{Program: program, Args: s.cfg.Command[1:], Env: env,
		Read: read, Write: s.cfg.Write, Network: s.cfg.Network, Limits: serverLimits})
	if err != nil {
		return nil, err
	}
	cmd.Stderr = stderr
	// The helper leads a session (and so a group) of its own, and the
	// program is the init of its PID namespace: killing the group, or the
	// init, ends everything the server started.
	cmd.WaitDelay = 2 * time.Second
	return cmd, nil
}

// serverLimits bound a server's process as exec.limits bound a run, but for
// a process that lives as long as the daemon: no CPU or address-space limit
// (node reserves gigabytes it never touches), its own uid's processes and
// threads (npx, npm, node and its workers), open files and file size.
var serverLimits = sandbox.Limits{NProc: 256, NoFile: 1024, FSizeMB: 256}

func (s *server) timeout() time.Duration {
	if s.cfg.Timeout <= 0 {
		return 30 * time.Second
	}
	return s.cfg.Timeout
}

// httpClient adds the configured headers (an Authorization token: a secret,
// never logged) to every request, over the process's one pool of connections
// (internal/httpclient: proxies from the environment, bounded connecting).
// The headers go to the configured server only: a GET redirected to another
// host or scheme (an event stream may be) goes without them.
func (s *server) httpClient() *http.Client {
	c := httpclient.New(httpclient.Options{Redirects: 10}) // a GET's, as net/http's default
	to, _ := url.Parse(s.cfg.URL)                          // checked with the config; nil sends no headers
	c.Transport = headerTransport{h: s.cfg.Headers, to: to, next: c.Transport}
	return c
}

type headerTransport struct {
	h    map[string]string
	to   *url.URL // the server's: the headers go to its scheme and host
	next http.RoundTripper
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(t.h) > 0 && t.to != nil && r.URL.Scheme == t.to.Scheme && r.URL.Host == t.to.Host {
		r = r.Clone(r.Context())
		for k, v := range t.h {
			r.Header.Set(k, v)
		}
	}
	resp, err := t.next.RoundTrip(r)
	if err == nil && !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		// The SDK reads a JSON answer whole: bounded here, as each event
		// of a stream is by MaxEventSize.
		resp.Body = &boundedBody{ReadCloser: resp.Body, left: MaxMessage}
	}
	return resp, err
}

// boundedBody fails a read past left bytes.
type boundedBody struct {
	io.ReadCloser
	left int
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, fmt.Errorf("the server's answer is longer than %d bytes", MaxMessage)
	}
	if len(p) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= n
	return n, err
}

// MaxTools and MaxListBytes bound what one server's list may hold: a server
// that pages on without end, or sends huge schemas, is cut there (the tools
// read so far are kept, and the log says why) rather than filling memory.
const (
	MaxTools     = 1000
	MaxListBytes = 8 << 20
)

// list reads the server's tools and makes them the registry's <server>/* tools.
func (s *server) list(ctx context.Context, cs *mcp.ClientSession) error {
	lctx, cancel := context.WithTimeout(ctx, s.timeout())
	defer cancel()
	list, cut, err := listTools(lctx, cs)
	if err != nil {
		return fmt.Errorf("listing tools: %w", err)
	}
	if cut != "" {
		s.m.log().Warn("mcp server: tool list cut", "server", s.cfg.Name, "why", cut)
	}
	var ts []tools.Tool
	var states []ToolState
	seen := map[string]bool{}
	budget := newCompileBudget()
	for _, t := range list {
		name := s.cfg.Name + "/" + ToolName(t.Name)
		if seen[name] || !grammar.IsIdent(ToolName(t.Name)) {
			s.m.log().Warn("mcp server: tool skipped: its name is empty or clashes once made a plain name", "server", s.cfg.Name, "tool", tools.OneLine(t.Name, 80))
			continue
		}
		seen[name] = true
		rt := newRemoteTool(s, name, t, budget)
		ts = append(ts, rt)
		states = append(states, ToolState{Name: name, MCPName: t.Name, Degraded: rt.degraded,
			ReadOnly: t.Annotations != nil && t.Annotations.ReadOnlyHint})
	}
	if err := s.m.Registry.ReplaceNamespace(s.cfg.Name, ts); err != nil {
		return err
	}
	sort.Slice(states, func(i, j int) bool { return states[i].Name < states[j].Name })
	s.mu.Lock()
	s.tools = states
	s.mu.Unlock()
	return nil
}

// listTools reads every page of the server's tools, up to MaxTools tools
// and MaxListBytes of them; cut says why it stopped early.
func listTools(ctx context.Context, cs *mcp.ClientSession) (list []*mcp.Tool, cut string, err error) {
	size := 0
	params := &mcp.ListToolsParams{}
	for {
		page, err := cs.ListTools(ctx, params)
		if err != nil {
			return nil, "", err
		}
		for _, t := range page.Tools {
			b, _ := json.Marshal(t)
			if size += len(b); size > MaxListBytes {
				return list, fmt.Sprintf("its tools are more than %d bytes", MaxListBytes), nil
			}
			if len(list) == MaxTools {
				return list, fmt.Sprintf("it has more than %d tools", MaxTools), nil
			}
			list = append(list, t)
		}
		if page.NextCursor == "" || page.NextCursor == params.Cursor {
			return list, "", nil
		}
		params.Cursor = page.NextCursor
	}
}

// ToolName is the registry name part of an MCP tool name.
func ToolName(name string) string { return tools.PlainName(name) }

// call runs the MCP tool with args, bounded by the server's timeout.
func (s *server) call(ctx context.Context, mcpName string, args map[string]any) (string, error) {
	s.mu.Lock()
	cs, state := s.session, s.state
	s.mu.Unlock()
	if cs == nil {
		return "", fmt.Errorf("MCP server %s is not running (%s)", s.cfg.Name, state)
	}
	cctx, cancel := context.WithTimeout(ctx, s.timeout())
	defer cancel()
	res, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: mcpName, Arguments: args})
	if err != nil {
		if cctx.Err() != nil && ctx.Err() == nil {
			return "", fmt.Errorf("MCP server %s did not answer within %s", s.cfg.Name, s.timeout())
		}
		return "", fmt.Errorf("MCP server %s: %v", s.cfg.Name, tools.OneLine(err.Error(), 300))
	}
	text := capText(resultText(res), s.cfg.MaxOutput)
	if res.IsError {
		return "", errors.New(text)
	}
	return text, nil
}

// resultText renders a result's content for people and models: text as is,
// other content by kind and size.
func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, c.Text)
		case *mcp.ImageContent:
			parts = append(parts, fmt.Sprintf("[image %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *mcp.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio %s, %d bytes]", c.MIMEType, len(c.Data)))
		default:
			b, _ := json.Marshal(c)
			parts = append(parts, string(b))
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		parts = append(parts, string(b))
	}
	return strings.Join(parts, "\n")
}

// capText keeps at most max bytes of s (on a rune boundary) and says how much was cut.
func capText(s string, max int) string {
	if max <= 0 {
		max = 64 << 10
	}
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && cut < len(s) && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n… (%d more bytes cut; the result was %d bytes)", len(s)-cut, len(s))
}

// logWriter passes a server's stderr to the log, one bounded line at a time.
type logWriter struct {
	log    *slog.Logger
	server string
}

func (w *logWriter) Write(p []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		if line != "" {
			w.log.Debug("mcp server stderr", "server", w.server, "line", tools.OneLine(line, 300))
		}
	}
	return len(p), nil
}

// Probe connects to each server once, lists its tools and disconnects, without
// registering anything: `clawedge tools` and doctor without a daemon.
func (pm *Manager) Probe(ctx context.Context, servers []Server) []State {
	m := &Manager{Registry: tools.NewRegistry(), Log: pm.Log, Box: pm.Box, Launch: pm.Launch, PATH: pm.PATH}
	out := make([]State, len(servers))
	var wg sync.WaitGroup
	for i, cfg := range servers {
		s := &server{cfg: cfg, m: m, state: "starting", relist: make(chan struct{}, 1)}
		wg.Go(func() {
			st := State{Name: cfg.Name, State: "ready", Starts: 1, Rights: m.rights(cfg)}
			cs, cancel, err := s.connect(ctx)
			if err == nil {
				err = s.list(ctx, cs)
				cs.Close()
				cancel()
			}
			if err != nil {
				st.State = "down: " + tools.OneLine(err.Error(), 300)
			}
			st.Tools = s.tools
			out[i] = st
		})
	}
	wg.Wait()
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
