package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"sync"
)

// CallToolRequest is a tools/call as a handler sees it.
type CallToolRequest struct {
	Client    Implementation  // who called, as its handshake said
	Arguments json.RawMessage // a JSON object, or empty
}

// ToolHandler runs a tool. An error is sent to the client as a tool error
// (isError, with its text), which a model can read and act on.
type ToolHandler func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error)

// ResourceHandler reads a resource for client.
type ResourceHandler func(ctx context.Context, client Implementation, uri string) (*ReadResourceResult, error)

// Server offers tools and resources to any number of sessions (stdio has
// one, HTTP one per client). Adding or removing a tool tells every session.
type Server struct {
	info         Implementation
	instructions string

	mu        sync.Mutex
	tools     map[string]*serverTool
	resources map[string]*serverResource
	sessions  map[*session]bool
}

type serverTool struct {
	tool *Tool
	h    ToolHandler
}

type serverResource struct {
	res *Resource
	h   ResourceHandler
}

// NewServer makes a server named by info; instructions are for the host's model.
func NewServer(info Implementation, instructions string) *Server {
	return &Server{info: info, instructions: instructions, tools: map[string]*serverTool{},
		resources: map[string]*serverResource{}, sessions: map[*session]bool{}}
}

// AddTool offers t (replacing one of the same name).
func (s *Server) AddTool(t *Tool, h ToolHandler) {
	if len(t.InputSchema) == 0 {
		t.InputSchema = json.RawMessage(`{"type":"object"}`)
	}
	s.mu.Lock()
	s.tools[t.Name] = &serverTool{tool: t, h: h}
	s.mu.Unlock()
	s.toolsChanged()
}

// RemoveTools stops offering the named tools.
func (s *Server) RemoveTools(names ...string) {
	s.mu.Lock()
	for _, n := range names {
		delete(s.tools, n)
	}
	s.mu.Unlock()
	s.toolsChanged()
}

// AddResource offers r, read by h.
func (s *Server) AddResource(r *Resource, h ResourceHandler) {
	s.mu.Lock()
	s.resources[r.URI] = &serverResource{res: r, h: h}
	s.mu.Unlock()
}

func (s *Server) toolsChanged() {
	s.mu.Lock()
	var ss []*session
	for x := range s.sessions {
		ss = append(ss, x)
	}
	s.mu.Unlock()
	for _, x := range ss {
		x.notify(methodToolsChanged)
	}
}

// session is one client's state on a server.
type session struct {
	s      *Server
	notify func(method string) // sends a notification, once initialized

	mu          sync.Mutex
	client      Implementation
	initialized bool
}

func (s *Server) newSession(notify func(string)) *session {
	x := &session{s: s}
	x.notify = func(method string) {
		x.mu.Lock()
		ok := x.initialized
		x.mu.Unlock()
		if ok {
			notify(method)
		}
	}
	s.mu.Lock()
	s.sessions[x] = true
	s.mu.Unlock()
	return x
}

func (x *session) end() {
	x.s.mu.Lock()
	delete(x.s.sessions, x)
	x.s.mu.Unlock()
}

// pageSize is how many tools or resources one list answer holds.
const pageSize = 100

// handle answers one request or takes one notification of the session.
func (x *session) handle(ctx context.Context, m *Message) (any, error) {
	s := x.s
	switch m.Method {
	case methodInitialize:
		var p initializeParams
		if err := json.Unmarshal(m.Params, &p); err != nil {
			return nil, &Error{Code: CodeInvalidParams, Message: "initialize: " + err.Error()}
		}
		v := p.ProtocolVersion
		if !supported(v) {
			v = Versions[0] // the client then decides whether it speaks ours
		}
		x.mu.Lock()
		x.client = p.ClientInfo
		x.mu.Unlock()
		caps := map[string]any{"tools": map[string]any{"listChanged": true}}
		s.mu.Lock()
		if len(s.resources) > 0 {
			caps["resources"] = map[string]any{}
		}
		s.mu.Unlock()
		return initializeResult{ProtocolVersion: v, Capabilities: caps, ServerInfo: s.info, Instructions: s.instructions}, nil
	case methodInitialized:
		x.mu.Lock()
		x.initialized = true
		x.mu.Unlock()
		return nil, nil
	case methodPing:
		return struct{}{}, nil
	case methodToolsList:
		s.mu.Lock()
		all := sortedValues(s.tools, func(t *serverTool) *Tool { return t.tool })
		s.mu.Unlock()
		return listPage(all, "tools", m.Params)
	case methodToolsCall:
		var p callToolParams
		if err := json.Unmarshal(m.Params, &p); err != nil {
			return nil, &Error{Code: CodeInvalidParams, Message: "tools/call: " + err.Error()}
		}
		s.mu.Lock()
		t := s.tools[p.Name]
		s.mu.Unlock()
		if t == nil {
			return nil, &Error{Code: CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", p.Name)}
		}
		x.mu.Lock()
		client := x.client
		x.mu.Unlock()
		res, err := t.h(ctx, &CallToolRequest{Client: client, Arguments: p.Arguments})
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return &CallToolResult{Content: []Content{{Type: "text", Text: err.Error()}}, IsError: true}, nil
		}
		if res.Content == nil {
			res.Content = []Content{}
		}
		return res, nil
	case methodResourcesList:
		s.mu.Lock()
		all := sortedValues(s.resources, func(r *serverResource) *Resource { return r.res })
		s.mu.Unlock()
		return listPage(all, "resources", m.Params)
	case methodResourceTemplates:
		return map[string]any{"resourceTemplates": []any{}}, nil
	case methodResourcesRead:
		var p readResourceParams
		if err := json.Unmarshal(m.Params, &p); err != nil {
			return nil, &Error{Code: CodeInvalidParams, Message: "resources/read: " + err.Error()}
		}
		s.mu.Lock()
		r := s.resources[p.URI]
		s.mu.Unlock()
		if r == nil {
			return nil, &Error{Code: -32002, Message: fmt.Sprintf("resource not found: %q", p.URI)}
		}
		x.mu.Lock()
		client := x.client
		x.mu.Unlock()
		return r.h(ctx, client, p.URI)
	}
	if m.IsRequest() {
		return nil, &Error{Code: CodeMethodNotFound, Message: "method not found: " + m.Method}
	}
	return nil, nil
}

// sortedValues is f of m's values, in the order of their keys.
func sortedValues[V, T any](m map[string]V, f func(V) T) []T {
	out := make([]T, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, f(m[k]))
	}
	return out
}

// listPage answers a list request: the page its cursor (an offset we gave)
// asks for, under field, and the next cursor while there are more.
func listPage[T any](all []T, field string, params json.RawMessage) (any, error) {
	var p listParams
	if len(params) > 0 {
		json.Unmarshal(params, &p)
	}
	from := 0
	if p.Cursor != "" {
		i, err := strconv.Atoi(p.Cursor)
		if err != nil || i < 0 || i > len(all) {
			return nil, &Error{Code: CodeInvalidParams, Message: fmt.Sprintf("invalid cursor %q", p.Cursor)}
		}
		from = i
	}
	to := min(from+pageSize, len(all))
	res := map[string]any{field: all[from:to]}
	if to < len(all) {
		res["nextCursor"] = strconv.Itoa(to)
	}
	return res, nil
}

// Run serves one session over t (stdio: `clawedge mcp`) until the peer
// closes it or ctx ends.
func (s *Server) Run(ctx context.Context, t Transport) error {
	var conn *Conn
	var x *session
	x = s.newSession(func(method string) { conn.Notify(context.Background(), method, nil) })
	defer x.end()
	conn = NewConn(t, x.handle)
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	err := conn.Wait()
	if ctx.Err() != nil {
		return nil
	}
	if errors.Is(err, io.EOF) {
		return nil // the host closed stdin: its way to end the session
	}
	return err
}
