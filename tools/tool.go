// Package tools defines what a tool is (a typed spec, grammar's, and a Run
// method), the registry of tools, and the runner: Prepare and Call run one call
// from structured arguments, Run a parsed command line (chains, parallel
// blocks, references), each call with an audit record written before its effect.
package tools

import (
	"context"

	"github.com/clawedge/clawedge/grammar"
)

// Tool is one callable capability, "gpio/write" for example.
// Run is only ever called with args that passed Spec().Validate.
type Tool interface {
	Spec() Spec
	Run(ctx context.Context, args Args) (Result, error)
}

// The spec type is grammar's, the one the constraint compiler, the JSON
// Schema writer and validation share: these names are the same types, so a
// tool's spec goes to the grammar, the providers and the MCP server as it is.
type (
	Spec     = grammar.ToolSpec
	Param    = grammar.ArgSpec
	Kind     = grammar.ArgType
	Args     = grammar.Args
	ArgError = grammar.ArgError
)

const (
	KindString  = grammar.TypeString
	KindInteger = grammar.TypeInteger
	KindNumber  = grammar.TypeNumber
	KindBoolean = grammar.TypeBoolean
	KindArray   = grammar.TypeArray
	KindObject  = grammar.TypeObject
	KindAnyOf   = grammar.TypeAnyOf
	// JSONParam is the one parameter of a tool with its own input schema.
	JSONParam = grammar.JSONParam
)

// Result is what a tool returns: Text for people, Fields for the next stage of a
// chain ($prev.NAME) and for machine-readable output.
type Result struct {
	Text   string
	Fields map[string]grammar.Value
}

// Float returns a pointer to f, for Param.Min and Param.Max literals.
func Float(f float64) *float64 { return &f }
