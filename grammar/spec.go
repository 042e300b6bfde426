package grammar

import (
	"encoding/json"
	"fmt"
)

// ToolSpec is a tool's name, documentation and typed parameters: the one spec
// type. Tools declare it (package tools has no name of its own for it), the
// constraint compiler compiles it, ToolSchema writes its JSON Schema, Validate checks a call
// against it. It is the JSON shape `clawedge tools --json` prints and tools
// files hold, and it travels as JSON to the runner.
type ToolSpec struct {
	Name   string    `json:"name"`
	Doc    string    `json:"doc"`
	Params []ArgSpec `json:"params"`
	// InputSchema is the tool's own JSON Schema when Params cannot express it
	// and are the one JSONParam (an MCP tool with nested objects): a remote
	// model without a constraint is shown this schema, and its arguments are
	// passed as that parameter, validated against it before the call.
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
	// Shape is InputSchema as the constraint compiler writes it (nested
	// objects, arrays of objects, unions of types) when it can: the local
	// model's calls are then constrained to it (except in the command form,
	// which cannot write objects), and ToolSchema shows it in place of
	// Params. The arguments still travel as the one JSONParam, validated
	// against InputSchema, which accepts everything Shape allows.
	Shape []ArgSpec `json:"shape,omitempty"`
	// Output names the fields of the tool's result a program can read (the
	// tool's Result.Fields; $prev.NAME in a chain): for MCP hosts its
	// outputSchema, each call's structuredContent. Required ones are in
	// every result that did not fail; a tool may add fields it does not
	// declare. Empty: the result is text only.
	Output []ArgSpec `json:"output,omitempty"`
}

// ArgType is a parameter's type. The names are the JSON Schema names that
// `clawedge tools --json` prints and tools files use.
type ArgType string

const (
	TypeString  ArgType = "string"
	TypeInteger ArgType = "integer"
	TypeNumber  ArgType = "number"
	TypeBoolean ArgType = "boolean"
	TypeArray   ArgType = "array"
	// Objects and unions of types appear only in a ToolSpec's Shape (and in
	// what the constraint compiler is given directly).
	TypeObject ArgType = "object"
	TypeAnyOf  ArgType = "any_of"
	// TypeAny is any JSON value (a schema's property without a type),
	// written nested at most FreeDepth objects and arrays deep with at most
	// FreeMembers members in an object (jsonvalue.go); with Values, one of
	// those values.
	TypeAny ArgType = "any"
)

// ArgSpec is one typed parameter. An array's Items describes every element
// (its Name is empty) and MinItems/MaxItems bound how many there are; an
// object's Props are its properties (in order, at most MaxNesting objects and
// arrays deep), a union's AnyOf the types its value may have.
type ArgSpec struct {
	Name     string   `json:"name,omitempty"`
	Doc      string   `json:"doc,omitempty"`
	Type     ArgType  `json:"type"`
	Required bool     `json:"required,omitempty"`
	Enum     []string `json:"enum,omitempty"`
	Min      *float64 `json:"min,omitempty"`
	Max      *float64 `json:"max,omitempty"`
	MaxLen   int      `json:"max_len,omitempty"` // characters (runes); 0 = no limit
	Items    *ArgSpec `json:"items,omitempty"`
	MinItems int      `json:"min_items,omitempty"` // arrays: at least this many items
	MaxItems int      `json:"max_items,omitempty"` // arrays: at most this many; 0 means no limit
	// Default is the value an absent optional parameter takes (a string,
	// number or boolean of Type). Validate fills it in, so tools read it
	// like any other; models are shown it in the schema.
	Default any `json:"default,omitempty"`
	// Props are an object's properties, AnyOf a union's choices.
	Props []ArgSpec `json:"props,omitempty"`
	AnyOf []ArgSpec `json:"any_of,omitempty"`
	// AnyProps makes an object free-form (a schema's object without
	// properties, a dict): any JSON object, its values nested at most
	// FreeDepth objects and arrays deep with at most FreeMembers members
	// each (jsonvalue.go). It has no Props.
	AnyProps bool `json:"any_props,omitempty"`
	// Values are the JSON values a boolean, array, object or any value may
	// take, exactly (a schema's enum of such values): literal alternatives,
	// as Enum is a string's. With them the parameter has no other
	// constraint (items, props, bounds, default). Only in a Shape.
	Values []json.RawMessage `json:"values,omitempty"`
}

// Shaped is the parameters a model writes: the Shape when there is one,
// otherwise Params.
func (t ToolSpec) Shaped() []ArgSpec {
	if len(t.Shape) > 0 {
		return t.Shape
	}
	return t.Params
}

// callParams is the parameters a model writes in a form: the command
// language cannot write a Shape's objects, so there a tool with one takes
// its one JSON parameter, as a tool without a shape does.
func (t ToolSpec) callParams(form Form) []ArgSpec {
	if form == FormCommand {
		return t.Params
	}
	return t.Shaped()
}

// MaxNesting bounds how many objects and arrays deep a parameter's value may
// be: real tool schemas rarely go past 2, and each level multiplies the
// automaton.
const MaxNesting = 4

// Form is the shape of the model output a constraint allows.
type Form string

const (
	// FormQwen: optional text, then <tool_call>\n{"name": ..., "arguments": {...}}\n</tool_call> blocks.
	FormQwen Form = "qwen"
	// FormCommand: the command language, @ns/tool{key=value;...}, chains with "->".
	FormCommand Form = "command"
	// FormJSON: one JSON object: the arguments of the only tool, or
	// {"name": ..., "arguments": {...}} when there are several.
	FormJSON Form = "json"
)

// Mode says whether the output may, must or must not call tools.
type Mode string

const (
	ModeAny   Mode = "any"   // text, or text then calls (the constraint starts at the form's trigger)
	ModeCalls Mode = "calls" // calls only
	ModeText  Mode = "text"  // text only: no call can be emitted
)

// Spec is what a constraint is compiled from: the allowed tools (only those
// the policy allows for this turn), the form and the mode. It travels as
// JSON to the runner, which compiles and caches it.
type Spec struct {
	Form  Form       `json:"form"`
	Mode  Mode       `json:"mode"`
	Tools []ToolSpec `json:"tools"`
	// MaxCalls bounds the calls in one output (qwen blocks, command
	// invocations); 0 means DefaultMaxCalls. Without a bound a model could
	// go on calling until its context is full.
	MaxCalls int `json:"max_calls,omitempty"`
	// Think lets the output start with a thinking model's <think>…</think>
	// section, free text, before the constraint applies (think.go): the
	// grammar must not cut the reasoning short.
	Think bool `json:"think,omitempty"`
}

// DefaultMaxCalls is the bound on calls per output when a spec sets none.
const DefaultMaxCalls = 4

// Check says what is wrong with a spec's form and mode; Compile checks the tools.
func (s Spec) Check() error {
	switch s.Form {
	case FormQwen, FormCommand, FormJSON:
	default:
		return fmt.Errorf("grammar: form %q: want qwen, command or json", s.Form)
	}
	switch s.Mode {
	case ModeAny, ModeCalls, ModeText:
	default:
		return fmt.Errorf("grammar: mode %q: want any, calls or text", s.Mode)
	}
	if s.MaxCalls < 0 || s.MaxCalls > 64 {
		return fmt.Errorf("grammar: max_calls %d: want 0 (the default, %d) to 64", s.MaxCalls, DefaultMaxCalls)
	}
	return nil
}

// Automaton is a deterministic byte-level automaton: the compiled constraint.
// States are small integers; Dead (-1) is the state after a byte that can
// never lead to a valid output. The token-mask engine needs only this.
type Automaton interface {
	Start() int32
	// Next is the state after byte b in state s, or Dead.
	Next(s int32, b byte) int32
	// Accepting reports whether the output may end in state s.
	Accepting(s int32) bool
	// NumStates bounds the state numbers: every state is in [0, NumStates).
	NumStates() int
}

// Dead is the state from which no output is valid.
const Dead int32 = -1
