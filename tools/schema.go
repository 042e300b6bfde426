package tools

import (
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
	params, err := grammar.ParamsFromJSON(args)
	if err != nil {
		return Args{}, &ArgError{Tool: s.Name, Msg: err.Error()}
	}
	return s.Validate(params)
}
