package grammar

import (
	"fmt"
)

// ToolSpec is a tool as the constraint compiler sees it: its name and typed
// parameters. It has the JSON shape `clawedge tools --json` prints (tools.Spec
// converts to it), so a tools file decodes straight into it.
type ToolSpec struct {
	Name   string    `json:"name"`
	Doc    string    `json:"doc,omitempty"`
	Params []ArgSpec `json:"params"`
}

// ArgSpec is one typed parameter. Type is one of string, integer, number,
// boolean, array, object, any_of; an array's Items describes every element,
// an object's Props its properties (in order, at most MaxNesting objects and
// arrays deep), and an any_of's AnyOf the types its value may have.
type ArgSpec struct {
	Name     string    `json:"name,omitempty"`
	Doc      string    `json:"doc,omitempty"`
	Type     string    `json:"type"`
	Required bool      `json:"required,omitempty"`
	Enum     []string  `json:"enum,omitempty"`
	Min      *float64  `json:"min,omitempty"`
	Max      *float64  `json:"max,omitempty"`
	MaxLen   int       `json:"max_len,omitempty"` // characters (runes); 0 = no limit
	Items    *ArgSpec  `json:"items,omitempty"`
	MinItems int       `json:"min_items,omitempty"`
	MaxItems int       `json:"max_items,omitempty"` // 0 = no limit
	Props    []ArgSpec `json:"props,omitempty"`
	AnyOf    []ArgSpec `json:"any_of,omitempty"`
	// Default is the value an absent optional parameter takes: shown to
	// models in the schema, not part of the constraint.
	Default any `json:"default,omitempty"`
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
