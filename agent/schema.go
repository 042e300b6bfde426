package agent

// How tools are shown to a model: the JSON Schema of a spec's parameters (written by
// grammar.ToolSchema, the one writer), in the OpenAI function shape that llm.ToolDef
// carries and Qwen's template prints.

import (
	"encoding/json"

	"github.com/clawedge/clawedge/grammar"
)

// toolSchema is a spec's parameters as a model is shown them: open (a model is told,
// the agent validates), compact for the local model (see grammar.SchemaOptions).
func toolSchema(s grammar.ToolSpec, compact bool) json.RawMessage {
	return grammar.ToolSchema(s, grammar.SchemaOptions{Compact: compact, Brief: func(doc string) string { return shorten(doc, 50) }})
}
