package agent

import (
	"github.com/clawedge/clawedge/llm"
	"github.com/clawedge/clawedge/tools"
)

// ownSchemas shows a remote model without a constraint the tools' own schemas
// where the spec type could not express them (tools.Spec.InputSchema): it can
// then write nested arguments, which tools.Spec.AsJSONParam passes on.
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
