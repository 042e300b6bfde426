package tools

import (
	"bytes"
	"encoding/json"

	"github.com/clawedge/clawedge/grammar"
)

// Grammar returns the spec as the constraint compiler takes it.
func (s Spec) Grammar() grammar.ToolSpec {
	params := s.Params
	if len(s.Shape) > 0 {
		params = s.Shape
	}
	return grammar.ToolSpec{Name: s.Name, Doc: s.Doc, Params: grammarParams(params)}
}

func grammarParams(ps []Param) []grammar.ArgSpec {
	if ps == nil {
		return nil
	}
	out := make([]grammar.ArgSpec, len(ps))
	for i, p := range ps {
		out[i] = p.grammar()
	}
	return out
}

func (p Param) grammar() grammar.ArgSpec {
	a := grammar.ArgSpec{
		Name: p.Name, Doc: p.Doc, Type: string(p.Type), Required: p.Required, Enum: p.Enum,
		Min: p.Min, Max: p.Max, MaxLen: p.MaxLen, MinItems: p.MinItems, MaxItems: p.MaxItems, Default: p.Default,
		Props: grammarParams(p.Props), AnyOf: grammarParams(p.AnyOf),
	}
	if p.Items != nil {
		items := p.Items.grammar()
		a.Items = &items
	}
	return a
}

// AsJSONParam passes the arguments of a tool with its own schema (nested,
// as its Shape or a remote model writes them) as its one JSON parameter,
// unless they already are that parameter: the tool validates them against
// its schema before the call. Other tools' arguments are returned as they are.
func (s Spec) AsJSONParam(args json.RawMessage) json.RawMessage {
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

// GrammarFor is the spec as the constraint compiler takes it in a form: the
// command language cannot write a Shape's objects, so there a tool with one
// takes its one JSON parameter, as a degraded tool does.
func (s Spec) GrammarFor(form grammar.Form) grammar.ToolSpec {
	if form == grammar.FormCommand {
		s.Shape = nil
	}
	return s.Grammar()
}

// GrammarSpecsFor converts specs for the constraint compiler in a form, in order.
func GrammarSpecsFor(form grammar.Form, specs []Spec) []grammar.ToolSpec {
	out := make([]grammar.ToolSpec, len(specs))
	for i, s := range specs {
		out[i] = s.GrammarFor(form)
	}
	return out
}

// GrammarSpecs converts specs for the constraint compiler, in order.
func GrammarSpecs(specs []Spec) []grammar.ToolSpec {
	out := make([]grammar.ToolSpec, len(specs))
	for i, s := range specs {
		out[i] = s.Grammar()
	}
	return out
}

// ValidateJSON validates a model's JSON arguments (an object) against the
// spec: the same checks as a typed command, so a call from a model is held to
// what a person's command is.
func (s Spec) ValidateJSON(args json.RawMessage) (Args, error) {
	params, err := grammar.ParamsFromJSON(s.AsJSONParam(args))
	if err != nil {
		return Args{}, &ArgError{Tool: s.Name, Msg: err.Error()}
	}
	return s.Validate(params)
}
