package channels

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/policy"
	"github.com/clawedge/clawedge/tools"
)

// Offered returns the specs the policy offers caller (a program: an MCP host):
// a tool the call path would deny it is not listed, so a host does not learn of
// it. Offering is not deciding: every call is decided again in Runner.Call.
func Offered(p *policy.Policy, caller tools.Caller, specs []grammar.ToolSpec) []grammar.ToolSpec {
	var out []grammar.ToolSpec
	for _, s := range specs {
		if p.Offered(caller, s.Name) {
			out = append(out, s)
		}
	}
	return out
}

// CallResult is the outcome of one program call: the text shown to the program,
// and whether it failed (then Text is the reason).
type CallResult struct {
	Text   string `json:"text"`
	Failed bool   `json:"failed,omitempty"`
	// Refused: the authorizer refused the call (it did not run).
	Refused bool `json:"refused,omitempty"`
	// Fields are the result's fields as plain JSON values (the tool's
	// ToolSpec.Output: an MCP host's structuredContent); none when it failed.
	Fields map[string]any `json:"fields,omitempty"`
}

// ToolCall runs tool with JSON arguments (an object) for caller, a program (an
// MCP host), on the one call path: the runner validates it, its authorizer
// allows, refuses or asks a person, and it is audited. It never panics on any
// input; every refusal says why.
func ToolCall(ctx context.Context, r *tools.Runner, caller tools.Caller, tool string, args json.RawMessage) CallResult {
	call, err := r.Prepare(tool, args) // looked up, validated and rendered once
	if err != nil {
		return CallResult{Text: fmt.Sprintf("error: %v (not run)", err), Failed: true}
	}
	rep := r.Call(ctx, caller, call)
	if rep.Err != nil {
		var refusal *tools.Refusal
		return CallResult{Text: "error: " + rep.Err.Error(), Failed: true, Refused: errors.As(rep.Err, &refusal)}
	}
	res := CallResult{Text: rep.Result.Text}
	if len(rep.Result.Fields) > 0 {
		res.Fields = make(map[string]any, len(rep.Result.Fields))
		for k, v := range rep.Result.Fields {
			res.Fields[k] = v.Plain()
		}
	}
	return res
}
