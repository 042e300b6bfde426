package agent

import (
	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/llm"
)

// ownSchemas shows a remote model without a constraint the tools' own schemas
// where the spec type could not express them (grammar.ToolSpec.InputSchema):
// it can then write nested arguments, which ToolSpec.AsJSONParam passes on.
func ownSchemas(defs []llm.ToolDef, specs []grammar.ToolSpec) []llm.ToolDef {
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
