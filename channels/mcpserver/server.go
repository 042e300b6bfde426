// Package mcpserver offers the board's tools to MCP hosts (Claude Desktop, VS
// Code, Home Assistant): over stdio (`clawedge mcp`) and, in the daemon, over
// streamable HTTP with a bearer token. Every call takes the one call path
// (tools.Runner.Call) as a program's, caller mcp:<name its door gives> on
// channel "mcp", where the policy's authorizer decides it: over HTTP the name
// of the token the host authenticated with, over stdio uid:N, the local user
// the kernel reports. The name a host gives in its handshake decides nothing.
package mcpserver

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/clawedge/clawedge/channels"
	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/policy"
	"github.com/clawedge/clawedge/tools"
)

// Channel is the policy channel and audit channel of MCP calls.
const Channel = "mcp"

// Backend is where the tools are: this process's runner (Local), or the
// running daemon's, through its control socket (Remote).
type Backend interface {
	// Tools returns the tools offered on channel mcp (the policy's filter applied).
	Tools(ctx context.Context) ([]Offer, error)
	// Call runs one tool for host; a refused or failed call is a Failed result.
	Call(ctx context.Context, host Host, tool string, args json.RawMessage) (channels.CallResult, error)
}

// Host is who asks for a call, as far as the server knows.
type Host struct {
	// Token is the name of the bearer token the host authenticated with
	// over HTTP (its principal is mcp:Token); empty over stdio, where the
	// backend's door names it (Local.Principal, the control socket's peer).
	Token string
	// Client is the name the host gives in its handshake: outside input,
	// shown in the audit, deciding nothing.
	Client string
}

// Offer is a tool offered to hosts: its spec, and what the host may know of
// its effects (the tool annotations of MCP).
type Offer struct {
	Spec grammar.ToolSpec `json:"spec"`
	// ReadOnly: the tool has no effect (tools.ReadOnly).
	ReadOnly bool `json:"read_only,omitempty"`
	// Annotations, when set, are those the tool's own MCP server gave it
	// (an mcpclient tool): passed on as they came, hints from a server.
	Annotations *mcp.ToolAnnotations `json:"annotations,omitempty"`
}

// annotated is a tool that carries MCP annotations of its own (mcpclient's).
type annotated interface {
	Annotations() *mcp.ToolAnnotations
}

// Caller is who an MCP host's calls are decided and audited as: principal
// mcp:PRINCIPAL, PRINCIPAL as its door established it (a token's name, or
// uid:N). client, the name the host gives in its handshake (outside input),
// is only shown after it, "mcp:desktop (client Claude_Desktop)", cut to 64
// bytes of letters, digits and ._- so that the audit line stays one readable
// line; tools.UserID, and so the policy, never see it.
func Caller(principal, client string) tools.Caller {
	user := "mcp:" + principal
	if c := clientLabel(client); c != "" {
		user += " (client " + c + ")"
	}
	return tools.Caller{Channel: Channel, User: user, Actor: tools.Program}
}

// clientLabel is a handshake's name made one short word.
func clientLabel(client string) string {
	client = strings.Map(func(r rune) rune {
		if r < 128 && (r == '.' || r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return r
		}
		return '_'
	}, client)
	if len(client) > 64 {
		client = client[:64]
	}
	return client
}

// ToolName is the MCP name of a clawedge tool: MCP names may not hold "/", so
// gpio/write is offered as gpio.write (namespaces and names hold no dots).
func ToolName(tool string) string { return strings.Replace(tool, "/", ".", 1) }

// Local is the Backend of the process that holds the board. Its calls take
// the one call path: the runner's authorizer decides each, as a program's.
type Local struct {
	Runner *tools.Runner
	// Policy says which tools to list (those the call path would not deny a
	// host); nil lists every tool.
	Policy *policy.Policy
	// Principal names the hosts whose Host has no Token: uid:N for
	// `clawedge mcp` without a daemon (the user it runs as). Empty: such a
	// call is refused (over HTTP every host has a token's name).
	Principal string
}

// ErrNoPrincipal refuses a call whose door named nobody.
var ErrNoPrincipal = errors.New("mcp: refused: the call's door established no principal")

func (l Local) Tools(context.Context) ([]Offer, error) {
	var out []Offer
	for _, spec := range channels.Offered(l.Policy, Caller(cmp.Or(l.Principal, "host"), ""), l.Runner.Registry.Specs()) {
		t, err := l.Runner.Registry.Lookup(spec.Name)
		if err != nil {
			continue // gone since it was listed
		}
		o := Offer{Spec: spec}
		_, o.ReadOnly = t.(tools.ReadOnly)
		if a, ok := t.(annotated); ok {
			o.Annotations = a.Annotations()
		}
		out = append(out, o)
	}
	return out, nil
}

func (l Local) Call(ctx context.Context, host Host, tool string, args json.RawMessage) (channels.CallResult, error) {
	principal := l.Principal
	if host.Token != "" {
		principal = host.Token
	}
	if principal == "" {
		return channels.CallResult{Text: ErrNoPrincipal.Error(), Failed: true}, nil
	}
	return channels.ToolCall(ctx, l.Runner, Caller(principal, host.Client), tool, args), nil
}

// New returns an MCP server offering b's tools as they are now; version is
// clawedge's. Over HTTP, Servers gives each new session the list of its time.
func New(ctx context.Context, b Backend, version string) (*mcp.Server, error) {
	offers, err := b.Tools(ctx)
	if err != nil {
		return nil, err
	}
	return newServer(offers, b, version, nil)
}

// newServer builds the server of specs; opened, when not nil, is told of
// each session that completed its handshake.
func newServer(offers []Offer, b Backend, version string, opened func(*mcp.ServerSession)) (*mcp.Server, error) {
	opts := &mcp.ServerOptions{
		Instructions: "Tools of a clawedge board: GPIO pins, serial ports, I2C buses. Every call is checked by the board's policy and audited.",
	}
	if opened != nil {
		opts.InitializedHandler = func(_ context.Context, req *mcp.InitializedRequest) { opened(req.Session) }
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "clawedge", Version: version}, opts)
	s.AddReceivingMiddleware(limitInFlight(MaxInFlight))
	for _, o := range offers {
		spec := o.Spec
		schema, err := grammar.ParamsSchema(spec)
		if err != nil {
			return nil, fmt.Errorf("tool %s: %w", spec.Name, err)
		}
		name := spec.Name
		tool := &mcp.Tool{Name: ToolName(name), Description: spec.Doc, InputSchema: json.RawMessage(schema), Annotations: annotations(o)}
		if out := grammar.OutputSchema(spec); out != nil {
			tool.OutputSchema = json.RawMessage(out)
		}
		s.AddTool(tool,
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				ctx, stop := hostCancels(ctx)
				defer stop()
				defer reportProgress(ctx, req, name)()
				res, err := b.Call(ctx, hostOf(req), name, req.Params.Arguments)
				if err != nil {
					return nil, err
				}
				out := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: res.Text}}, IsError: res.Failed}
				if tool.OutputSchema != nil && !res.Failed {
					// What the outputSchema promised; the text stays for
					// hosts that read only content.
					out.StructuredContent = res.Fields
				}
				return out, nil
			})
	}
	addPinsResource(s, offers, b)
	return s, nil
}

// annotations tell a host what a tool does: a read-only one changes
// nothing; any other may (MCP's default, destructive, is kept: writing a pin
// or running a program can undo what was there).
func annotations(o Offer) *mcp.ToolAnnotations {
	if o.Annotations != nil {
		return o.Annotations
	}
	if !o.ReadOnly {
		return nil
	}
	no := false
	return &mcp.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: &no, IdempotentHint: true}
}

// ErrHostCancelled is why a call the host cancelled (its cancel
// notification, or its HTTP request dropped) ended: the audit says so.
var ErrHostCancelled = errors.New("cancelled: the MCP host cancelled the call")

// hostCancels is ctx whose end, when the host cancels, has the cause
// ErrHostCancelled rather than a bare "context canceled".
func hostCancels(ctx context.Context) (context.Context, func()) {
	c, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() { cancel(ErrHostCancelled) })
	return c, func() { stop(); cancel(nil) }
}

// hostOf is who sent req: the token its HTTP request authenticated with
// (Handler puts its name in the request's token info), and the name the
// host gave, in its handshake or (protocol 2026-07-28, without one) in the
// request's own metadata.
func hostOf[P mcp.Params](req *mcp.ServerRequest[P]) Host {
	var h Host
	if req.Extra != nil && req.Extra.TokenInfo != nil {
		h.Token = req.Extra.TokenInfo.UserID
	}
	if ci := req.ClientInfo(); ci != nil {
		h.Client = ci.Name
	}
	return h
}

// PinsURI is the resource with the pins and their levels.
const PinsURI = "clawedge://pins"

// addPinsResource offers the pin states as a resource when gpio/list is offered:
// reading it is a gpio/list call, through the same gate and audit as any call.
func addPinsResource(s *mcp.Server, offers []Offer, b Backend) {
	offered := false
	for _, o := range offers {
		offered = offered || o.Spec.Name == "gpio/list"
	}
	if !offered {
		return
	}
	s.AddResource(&mcp.Resource{URI: PinsURI, Name: "pins", MIMEType: "text/plain",
		Description: "The board's pins: name, mode and level (a gpio/list call, audited)"},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			res, err := b.Call(ctx, hostOf(req), "gpio/list", nil)
			if err != nil {
				return nil, err
			}
			if res.Failed {
				return nil, fmt.Errorf("%s", res.Text)
			}
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: PinsURI, MIMEType: "text/plain", Text: res.Text}}}, nil
		})
}
