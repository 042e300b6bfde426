// Package grammar owns the command language (@ns/tool{key=value;...}), the one
// tool-spec type (ToolSpec: its declaration check, validation of a call's
// arguments, its JSON Schema) and the constraint that the model's output must
// follow (the allowed specs compiled to a byte automaton and token masks, or
// exported as GBNF and JSON Schema). It imports nothing of ours.
package grammar

// Pos is a 1-based line and column in the input, counted in bytes.
type Pos struct {
	Line   int `json:"line"`
	Column int `json:"column"`
}

// Command is one parsed command line: stages run in order ("->"), each stage is a
// single invocation or a parallel block ("[a,b]"). The result of a stage is what the
// next stage sees as $prev.
type Command struct {
	Stages []Stage
}

// Stage is either one invocation or a parallel block of invocations.
// Parallel is true only for a "[...]" block (even a block of one).
type Stage struct {
	Parallel bool
	Calls    []Invoke
}

// Invoke is one "@ns/name{...}" call.
type Invoke struct {
	Namespace string // "" for a bare name ("@ping{}")
	Name      string
	Params    []Param // in source order; keys are unique
	Pos       Pos     // position of the '@'
}

// Tool is the full tool name as tools register it: "ns/name", or "name" without a namespace.
func (c Invoke) Tool() string {
	if c.Namespace == "" {
		return c.Name
	}
	return c.Namespace + "/" + c.Name
}

// Param is one key=value pair.
type Param struct {
	Key   string
	Value Value
	Pos   Pos // position of the key
}

// Kind says which field of a Value is set.
type Kind int

const (
	String Kind = iota + 1
	Int
	Float
	Bool
	Array
	Ref
)

func (k Kind) String() string {
	switch k {
	case String:
		return "string"
	case Int:
		return "integer"
	case Float:
		return "number"
	case Bool:
		return "boolean"
	case Array:
		return "array"
	case Ref:
		return "reference"
	}
	return "invalid"
}

// Value is a typed literal, an array of them, or a reference that is resolved when
// the command runs. Exactly the field named by Kind is meaningful.
type Value struct {
	Kind  Kind
	Str   string
	Int   int64
	Float float64
	Bool  bool
	Items []Value
	Ref   Reference
	Pos   Pos
}

// Reference is "$scope.name": scope is one of prev, ctx, env, self.
type Reference struct {
	Scope string
	Name  string
}

// Constructors keep call sites short where values are built in code (tool results, tests).
func StringValue(s string) Value { return Value{Kind: String, Str: s} }
func IntValue(i int64) Value     { return Value{Kind: Int, Int: i} }
func FloatValue(f float64) Value { return Value{Kind: Float, Float: f} }
func BoolValue(b bool) Value     { return Value{Kind: Bool, Bool: b} }
func ArrayValue(items ...Value) Value {
	return Value{Kind: Array, Items: items}
}

// Plain returns the value as the Go value encoding/json prints naturally:
// string, int64, float64, bool or []any. A reference, which has no value until
// it is resolved, is its source text.
func (v Value) Plain() any {
	switch v.Kind {
	case String:
		return v.Str
	case Int:
		return v.Int
	case Float:
		return v.Float
	case Bool:
		return v.Bool
	case Array:
		items := make([]any, len(v.Items))
		for i, it := range v.Items {
			items[i] = it.Plain()
		}
		return items
	}
	return v.String()
}
