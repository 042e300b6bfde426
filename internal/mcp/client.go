package mcp

import (
	"context"
	"encoding/json"
	"fmt"
)

// ClientOptions are a client's callbacks.
type ClientOptions struct {
	// ToolsChanged is called when the server says its tools changed.
	ToolsChanged func()
}

// ClientSession is a client's connection to one server, initialized.
type ClientSession struct {
	conn       *Conn
	ServerInfo Implementation
	Version    string // the negotiated protocol version
}

// Connect runs the handshake over t (initialize, then
// notifications/initialized) within ctx. On failure t is closed.
func Connect(ctx context.Context, t Transport, info Implementation, opts ClientOptions) (*ClientSession, error) {
	cs := &ClientSession{}
	cs.conn = NewConn(t, func(ctx context.Context, m *Message) (any, error) {
		switch m.Method {
		case methodPing:
			return struct{}{}, nil
		case methodToolsChanged:
			if opts.ToolsChanged != nil {
				opts.ToolsChanged()
			}
			return nil, nil
		}
		if m.IsRequest() {
			return nil, &Error{Code: CodeMethodNotFound, Message: "method not found: " + m.Method}
		}
		return nil, nil // other notifications (logging, progress) are not used
	})
	var res initializeResult
	err := cs.conn.Call(ctx, methodInitialize, initializeParams{
		ProtocolVersion: Versions[0],
		Capabilities:    []byte(`{}`),
		ClientInfo:      info,
	}, &res)
	if err == nil && !supported(res.ProtocolVersion) {
		err = fmt.Errorf("the server speaks protocol version %q; clawedge speaks %v", res.ProtocolVersion, Versions)
	}
	if err == nil {
		cs.ServerInfo, cs.Version = res.ServerInfo, res.ProtocolVersion
		if v, ok := t.(interface{ SetProtocolVersion(string) }); ok {
			v.SetProtocolVersion(res.ProtocolVersion)
		}
		err = cs.conn.Notify(ctx, methodInitialized, nil)
	}
	if err != nil {
		cs.conn.Close()
		return nil, fmt.Errorf("initialize: %w", err)
	}
	return cs, nil
}

// ListTools returns all the server's tools.
func (cs *ClientSession) ListTools(ctx context.Context) ([]*Tool, error) {
	return listAll[*Tool](ctx, cs.conn, methodToolsList, "tools")
}

// listAll gets every page of a list (field holds the page's items),
// following the cursor; a server that always has more after 1000 pages is
// refused.
func listAll[T any](ctx context.Context, c *Conn, method, field string) ([]T, error) {
	var all []T
	cursor := ""
	for range 1000 {
		var res map[string]json.RawMessage
		if err := c.Call(ctx, method, listParams{Cursor: cursor}, &res); err != nil {
			return nil, err
		}
		var page []T
		if err := json.Unmarshal(res[field], &page); err != nil && len(res[field]) > 0 {
			return nil, fmt.Errorf("%s: %s: %w", method, field, err)
		}
		all = append(all, page...)
		cursor = ""
		json.Unmarshal(res["nextCursor"], &cursor)
		if cursor == "" {
			return all, nil
		}
	}
	return nil, fmt.Errorf("%s: more than 1000 pages", method)
}

// CallTool calls the tool name with args (a JSON object, or nil).
func (cs *ClientSession) CallTool(ctx context.Context, name string, args any) (*CallToolResult, error) {
	var res CallToolResult
	p := map[string]any{"name": name}
	if args != nil {
		p["arguments"] = args
	}
	if err := cs.conn.Call(ctx, methodToolsCall, p, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// ListResources returns the server's resources.
func (cs *ClientSession) ListResources(ctx context.Context) ([]*Resource, error) {
	return listAll[*Resource](ctx, cs.conn, methodResourcesList, "resources")
}

// ReadResource reads the resource at uri.
func (cs *ClientSession) ReadResource(ctx context.Context, uri string) (*ReadResourceResult, error) {
	var res ReadResourceResult
	if err := cs.conn.Call(ctx, methodResourcesRead, readResourceParams{URI: uri}, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// Ping checks the server answers.
func (cs *ClientSession) Ping(ctx context.Context) error {
	return cs.conn.Call(ctx, methodPing, struct{}{}, nil)
}

// Wait returns when the connection is over, with why.
func (cs *ClientSession) Wait() error { return cs.conn.Wait() }

// Close ends the session (and the server, for a command).
func (cs *ClientSession) Close() error { return cs.conn.Close() }
