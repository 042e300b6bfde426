package tools

import (
	"encoding/json"

	"github.com/google/jsonschema-go/jsonschema"
)

// ResolveSchema makes a JSON Schema, as decoded from JSON (an MCP tool's
// inputSchema), ready to validate values with google/jsonschema-go: the
// validator clawedge checks a nested or degraded tool's arguments with before
// the call, independent of the constraint compiler.
func ResolveSchema(schema map[string]any) (*jsonschema.Resolved, error) {
	b, err := json.Marshal(schema)
	if err != nil {
		return nil, err
	}
	var js jsonschema.Schema
	if err := json.Unmarshal(b, &js); err != nil {
		return nil, err
	}
	return js.Resolve(nil)
}
