package mcpclient

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/tools"
)

// remoteTool is one tool of an MCP server, in the registry as server/tool.
type remoteTool struct {
	s        *server
	spec     grammar.ToolSpec
	mcpName  string
	degraded string               // why the schema is not constrained exactly; "" when exact
	schema   *jsonschema.Resolved // the server's schema, for tools with their own (spec.InputSchema)
	// annotations are the server's hints (read-only, destructive...), kept
	// to show and to pass on to MCP hosts; the policy trusts readOnlyHint
	// only from a server configured to be trusted (ReadOnlyHint).
	annotations *mcp.ToolAnnotations
}

// Annotations are the tool's MCP annotations, as its server gave them.
func (t *remoteTool) Annotations() *mcp.ToolAnnotations { return t.annotations }

// ReadOnlyHint is the server's readOnlyHint when its owner trusts the server
// for it (mcp.servers.NAME.trust_read_only); false otherwise
// (tools.ReadOnlyHinted: the policy's group:readonly).
func (t *remoteTool) ReadOnlyHint() bool {
	return t.s.cfg.TrustReadOnly && t.annotations != nil && t.annotations.ReadOnlyHint
}

func newRemoteTool(s *server, name string, t *mcp.Tool, budget *compileBudget) *remoteTool {
	desc := t.Description
	if desc == "" {
		desc = t.Title
	}
	schema, ok := t.InputSchema.(map[string]any)
	if !ok { // decoded as something else: read through its JSON
		b, _ := json.Marshal(t.InputSchema)
		json.Unmarshal(b, &schema)
	}
	ft := budget.fit(tools.SpecFromSchema(name, desc, schema))
	rt := &remoteTool{s: s, mcpName: t.Name, spec: ft.Spec, degraded: ft.Degraded, annotations: t.Annotations}
	if len(ft.Spec.InputSchema) == 0 {
		return rt
	}
	// Nested or not expressible: the one JSON parameter is validated against
	// the server's own schema before the call.
	res, err := tools.ResolveSchema(schema)
	if err != nil {
		rt.degraded = strings.TrimPrefix(rt.degraded+"; its schema does not resolve ("+tools.OneLine(err.Error(), 120)+"), so only JSON syntax is checked", "; ")
		return rt
	}
	rt.schema = res
	return rt
}

func (t *remoteTool) Spec() grammar.ToolSpec { return t.spec }

func (t *remoteTool) Run(ctx context.Context, a grammar.Args) (tools.Result, error) {
	args := map[string]any{}
	if len(t.spec.InputSchema) > 0 {
		if err := json.Unmarshal([]byte(a.String(grammar.JSONParam)), &args); err != nil {
			return tools.Result{}, &grammar.ArgError{Tool: t.spec.Name, Msg: "json: not a JSON object: " + err.Error()}
		}
		if t.schema != nil {
			if err := t.schema.Validate(args); err != nil {
				return tools.Result{}, &grammar.ArgError{Tool: t.spec.Name, Msg: "json: " + tools.OneLine(err.Error(), 300)}
			}
		}
	} else {
		for _, p := range t.spec.Params {
			if v, ok := a.Value(p.Name); ok {
				args[p.Name] = v.Plain()
			}
		}
	}
	text, err := t.s.call(ctx, t.mcpName, args)
	if err != nil {
		return tools.Result{}, err
	}
	return tools.Result{Text: text}, nil
}
