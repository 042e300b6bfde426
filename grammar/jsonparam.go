package grammar

import (
	"bytes"
	"encoding/json"
)

// JSONParam is the one parameter of a tool whose schema the spec type cannot
// express: the arguments as a JSON object, checked against the tool's own
// schema (InputSchema) after generation, before the call.
const JSONParam = "json"

// AsJSONParam passes the arguments of a tool with its own schema (nested,
// as its Shape or a remote model writes them) as its one JSON parameter,
// unless they already are that parameter: the tool validates them against
// its schema before the call. Other tools' arguments are returned as they are.
func (s ToolSpec) AsJSONParam(args json.RawMessage) json.RawMessage {
	if len(s.InputSchema) == 0 {
		return args
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) == nil && len(m) == 1 {
		if v, ok := m[JSONParam]; ok && bytes.HasPrefix(bytes.TrimSpace(v), []byte(`"`)) {
			return args
		}
	}
	var compact bytes.Buffer
	if json.Compact(&compact, args) != nil {
		return args // not JSON: the parse error says so
	}
	wrapped, _ := json.Marshal(map[string]string{JSONParam: compact.String()})
	return wrapped
}

// ParseJSONArgs reads a model's JSON arguments (an object) as the params of
// a call of this tool: the command's params, to validate like a typed
// command's, so a call from a model is held to what a person's command is.
func (s ToolSpec) ParseJSONArgs(args json.RawMessage) ([]Param, error) {
	params, err := ParamsFromJSON(s.AsJSONParam(args))
	if err != nil {
		return nil, &ArgError{Tool: s.Name, Msg: err.Error()}
	}
	return params, nil
}

// ValidateJSON validates a model's JSON arguments against the spec: the same
// checks as a typed command.
func (s ToolSpec) ValidateJSON(args json.RawMessage) (Args, error) {
	params, err := s.ParseJSONArgs(args)
	if err != nil {
		return Args{}, err
	}
	return s.Validate(params)
}
