package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/clawedge/clawedge/channels"
)

// The control socket ops by which `clawedge mcp` uses the daemon's tools: the
// daemon holds the pins, so the stdio server forwards every call to it.
const (
	OpTools = "mcp.tools"
	OpCall  = "mcp.call"
)

// CallArg is the argument of OpCall. It names no principal: the daemon
// takes the control connection's peer uid from the kernel (mcp:uid:N).
type CallArg struct {
	// Client is the name the host gave in its handshake, shown only.
	Client string          `json:"client"`
	Tool   string          `json:"tool"`
	Args   json.RawMessage `json:"args"`
}

// Ops are the daemon's side of Remote: OpTools for its ControlSocket.Ops,
// OpCall for its Calls (the call's context ends when `clawedge mcp` closes
// the connection: a host's cancel reaches the tool). A call is the host's
// of the connection's peer uid, which the control socket hands in: mcp:uid:N.
func Ops(l Local) (ops map[string]func(json.RawMessage) (any, error), calls map[string]func(context.Context, uint32, json.RawMessage) (any, error)) {
	ops = map[string]func(json.RawMessage) (any, error){
		OpTools: func(json.RawMessage) (any, error) { return l.Tools(context.Background()) },
	}
	calls = map[string]func(context.Context, uint32, json.RawMessage) (any, error){
		OpCall: func(ctx context.Context, uid uint32, raw json.RawMessage) (any, error) {
			var a CallArg
			if err := json.Unmarshal(raw, &a); err != nil {
				return nil, fmt.Errorf("%s: %w", OpCall, err)
			}
			peer := l // l is shared by concurrent calls
			peer.Principal = fmt.Sprintf("uid:%d", uid)
			return peer.Call(ctx, Host{Client: a.Client}, a.Tool, a.Args)
		},
	}
	return ops, calls
}

// Remote is the Backend of `clawedge mcp` while a daemon runs: each request
// dials the control socket anew, so concurrent calls do not wait for each other.
type Remote struct {
	Path string // the control socket
	User string
}

func (r Remote) op(ctx context.Context, op string, arg any, out any) error {
	c, err := channels.DialControl(r.Path, r.User)
	if err != nil {
		return fmt.Errorf("the daemon's control socket %s: %w", r.Path, err)
	}
	defer c.Close()
	// A host that gives up (cancels the call) is not kept waiting for the
	// daemon, and the daemon, seeing the connection go, cancels the call.
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	raw, err := c.Op(op, arg)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, out)
}

func (r Remote) Tools(ctx context.Context) ([]Offer, error) {
	var offers []Offer
	err := r.op(ctx, OpTools, nil, &offers)
	return offers, err
}

// Call forwards the call; only the handshake's name goes with it (the
// daemon names the host by this process's uid).
func (r Remote) Call(ctx context.Context, host Host, tool string, args json.RawMessage) (channels.CallResult, error) {
	var res channels.CallResult
	err := r.op(ctx, OpCall, CallArg{Client: host.Client, Tool: tool, Args: args}, &res)
	return res, err
}
