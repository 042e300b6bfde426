// Package tools defines what a tool is (a typed spec and a Run method), the registry
// of tools, validation of arguments against a spec, and the runner that executes a
// parsed command line (chains, parallel blocks, references) with an audit record
// written before every effect.
package tools

import (
	"context"
	"encoding/json"

	"github.com/clawedge/clawedge/grammar"
)

// Tool is one callable capability, "gpio/write" for example.
// Run is only ever called with args that passed Spec().Validate.
type Tool interface {
	Spec() Spec
	Run(ctx context.Context, args Args) (Result, error)
}

// Kind is a parameter type. The names are the JSON-schema-like names that
// `clawedge tools --json` prints and that tools files use.
type Kind string

const (
	KindString  Kind = "string"
	KindInteger Kind = "integer"
	KindNumber  Kind = "number"
	KindBoolean Kind = "boolean"
	KindArray   Kind = "array"
	// Objects and unions of types appear only in a Spec's Shape.
	KindObject Kind = "object"
	KindAnyOf  Kind = "any_of"
)

// Param describes one parameter. For arrays, Items describes every element
// (its Name is empty) and MinItems/MaxItems bound how many there are.
type Param struct {
	Name     string   `json:"name,omitempty"`
	Doc      string   `json:"doc,omitempty"`
	Type     Kind     `json:"type"`
	Required bool     `json:"required,omitempty"`
	Enum     []string `json:"enum,omitempty"`
	Min      *float64 `json:"min,omitempty"`
	Max      *float64 `json:"max,omitempty"`
	MaxLen   int      `json:"max_len,omitempty"`
	Items    *Param   `json:"items,omitempty"`
	MinItems int      `json:"min_items,omitempty"` // arrays: at least this many items
	MaxItems int      `json:"max_items,omitempty"` // arrays: at most this many; 0 means no limit
	// Default is the value an absent optional parameter takes (a string, number
	// or boolean of Type). Validate fills it in, so tools read it like any other.
	Default any `json:"default,omitempty"`
	// Props are an object's properties, AnyOf a union's choices (Shape only).
	Props []Param `json:"props,omitempty"`
	AnyOf []Param `json:"any_of,omitempty"`
}

// Spec is a tool's name, documentation and parameters. Specs are data: later
// stages compile the allowed ones into the model's grammar.
type Spec struct {
	Name   string  `json:"name"`
	Doc    string  `json:"doc"`
	Params []Param `json:"params"`
	// InputSchema is the tool's own JSON Schema when Params cannot express it
	// and are the one JSONParam (an MCP tool with nested objects): a remote
	// model without a constraint is shown this schema, and its arguments are
	// passed as that parameter, validated against it before the call.
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
	// Shape is InputSchema as the constraint compiler writes it (nested
	// objects, arrays of objects, unions of types) when it can: the local
	// model's calls are then constrained to it, and Grammar uses it in place
	// of Params. The arguments still travel as the one JSONParam, validated
	// against InputSchema, which accepts everything Shape allows.
	Shape []Param `json:"shape,omitempty"`
}

// Result is what a tool returns: Text for people, Fields for the next stage of a
// chain ($prev.NAME) and for machine-readable output.
type Result struct {
	Text   string
	Fields map[string]grammar.Value
}

// Float returns a pointer to f, for Param.Min and Param.Max literals.
func Float(f float64) *float64 { return &f }
