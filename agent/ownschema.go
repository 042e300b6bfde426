package agent

import (
	"bytes"
	"encoding/json"

	"github.com/clawedge/clawedge/llm"
	"github.com/clawedge/clawedge/tools"
)

// ownSchemas shows a remote model without a constraint the tools' own schemas
// where the spec type could not express them (tools.Spec.InputSchema): it can
// then write nested arguments, which asJSONParam passes on.
func ownSchemas(defs []llm.ToolDef, specs []tools.Spec) []llm.ToolDef {
	var out []llm.ToolDef
	for i, s := range specs {
		if len(s.InputSchema) == 0 {
			continue
		}
		if out == nil {
			out = append([]llm.ToolDef(nil), defs...)
		}
		out[i].Params = s.InputSchema
	}
	if out == nil {
		return defs
	}
	return out
}

// asJSONParam passes the arguments of a tool with its own schema as its one
// JSON parameter, unless they already are that parameter: the tool validates
// them against its schema before the call.
func asJSONParam(spec tools.Spec, args json.RawMessage) json.RawMessage {
	if len(spec.InputSchema) == 0 {
		return args
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) == nil && len(m) == 1 {
		if v, ok := m[tools.JSONParam]; ok && bytes.HasPrefix(bytes.TrimSpace(v), []byte(`"`)) {
			return args
		}
	}
	var compact bytes.Buffer
	if json.Compact(&compact, args) != nil {
		return args // not JSON: the parse error says so
	}
	wrapped, _ := json.Marshal(map[string]string{tools.JSONParam: compact.String()})
	return wrapped
}
