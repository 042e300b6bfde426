package grammar

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ArgError says which parameter of which tool was wrong and where it was written.
type ArgError struct {
	Tool    string
	ArgSpec string
	Pos     Pos // zero when the value did not come from source text
	Msg     string
}

func (e *ArgError) Error() string {
	where := ""
	if e.Pos.Line > 0 {
		where = fmt.Sprintf("line %d, column %d: ", e.Pos.Line, e.Pos.Column)
	}
	if e.ArgSpec == "" {
		return fmt.Sprintf("%s%s: %s", where, e.Tool, e.Msg)
	}
	return fmt.Sprintf("%s%s: parameter %s %s", where, e.Tool, QuoteShort(e.ArgSpec), e.Msg)
}

// Validate checks concrete (already resolved) params against the spec and returns
// typed Args. It is the one place where argument types and ranges are checked:
// tools never re-check what the spec declares.
func (s ToolSpec) Validate(params []Param) (Args, error) {
	return s.validate(params, false)
}

// Precheck validates what can be checked before a command runs: names, literal
// values and required parameters. A reference stands for a value that is only
// known once the previous stage has run, so it counts as present and is checked
// by Validate after resolution.
func (s ToolSpec) Precheck(params []Param) error {
	_, err := s.validate(params, true)
	return err
}

func (s ToolSpec) validate(params []Param, skipRefs bool) (Args, error) {
	values := make(map[string]Value, len(params))
	for _, p := range params {
		decl, ok := s.param(p.Key)
		if !ok {
			return Args{}, &ArgError{Tool: s.Name, ArgSpec: p.Key, Pos: p.Pos, Msg: "is not a parameter of this tool" + s.paramList()}
		}
		if _, dup := values[p.Key]; dup {
			return Args{}, &ArgError{Tool: s.Name, ArgSpec: p.Key, Pos: p.Pos, Msg: "is given twice"}
		}
		if skipRefs && p.Value.Kind == Ref {
			values[p.Key] = p.Value
			continue
		}
		v, err := decl.check(p.Value)
		if err != nil {
			pos := p.Value.Pos
			if pos.Line == 0 {
				pos = p.Pos
			}
			return Args{}, &ArgError{Tool: s.Name, ArgSpec: p.Key, Pos: pos, Msg: err.Error()}
		}
		values[p.Key] = v
	}
	for _, decl := range s.Params {
		if _, ok := values[decl.Name]; ok {
			continue
		}
		if decl.Required {
			return Args{}, &ArgError{Tool: s.Name, ArgSpec: decl.Name, Msg: "is required (" + decl.describe() + ")"}
		}
		if decl.Default != nil {
			v, err := decl.defaultValue()
			if err != nil { // ToolSpec.Check refuses such specs at registration
				return Args{}, &ArgError{Tool: s.Name, ArgSpec: decl.Name, Msg: err.Error()}
			}
			values[decl.Name] = v
		}
	}
	return Args{values: values}, nil
}

func (s ToolSpec) param(name string) (ArgSpec, bool) {
	for _, p := range s.Params {
		if p.Name == name {
			return p, true
		}
	}
	return ArgSpec{}, false
}

func (s ToolSpec) paramList() string {
	if len(s.Params) == 0 {
		return " (it takes none)"
	}
	names := make([]string, len(s.Params))
	for i, p := range s.Params {
		names[i] = p.Name
	}
	return " (parameters: " + strings.Join(names, ", ") + ")"
}

// check returns v converted to the declared type (an integer given for a number
// becomes a float) or an error that reads after `parameter "x"`.
func (p ArgSpec) check(v Value) (Value, error) {
	switch p.Type {
	case TypeString:
		if v.Kind != String {
			return v, p.mismatch(v)
		}
		if p.MaxLen > 0 && utf8.RuneCountInString(v.Str) > p.MaxLen {
			return v, fmt.Errorf("is %d characters long, at most %d allowed", utf8.RuneCountInString(v.Str), p.MaxLen)
		}
		if len(p.Enum) > 0 && !slices.Contains(p.Enum, v.Str) {
			return v, fmt.Errorf("is %s, must be one of %s", QuoteShort(v.Str), strings.Join(p.Enum, ", "))
		}
	case TypeInteger:
		if v.Kind != Int {
			return v, p.mismatch(v)
		}
		if err := p.inRange(float64(v.Int)); err != nil {
			return v, err
		}
	case TypeNumber:
		switch v.Kind {
		case Int:
			v = Value{Kind: Float, Float: float64(v.Int), Pos: v.Pos}
		case Float:
		default:
			return v, p.mismatch(v)
		}
		if math.IsNaN(v.Float) || math.IsInf(v.Float, 0) {
			return v, fmt.Errorf("must be a finite number")
		}
		if err := p.inRange(v.Float); err != nil {
			return v, err
		}
	case TypeBoolean:
		if v.Kind != Bool {
			return v, p.mismatch(v)
		}
	case TypeArray:
		if v.Kind != Array {
			return v, p.mismatch(v)
		}
		if p.Items == nil {
			return v, fmt.Errorf("has no declared item type")
		}
		if n := len(v.Items); n < p.MinItems || p.MaxItems > 0 && n > p.MaxItems {
			return v, fmt.Errorf("has %d items, must have %s", n, p.itemCount())
		}
		out := v
		out.Items = make([]Value, len(v.Items))
		for i, it := range v.Items {
			c, err := p.Items.check(it)
			if err != nil {
				return v, fmt.Errorf("item %d %w", i+1, err)
			}
			out.Items[i] = c
		}
		return out, nil
	default:
		return v, fmt.Errorf("has unknown declared type %q", p.Type)
	}
	return v, nil
}

func (p ArgSpec) inRange(f float64) error {
	if p.Min != nil && f < *p.Min {
		return fmt.Errorf("is %s, must be at least %s", FormatNumber(f), FormatNumber(*p.Min))
	}
	if p.Max != nil && f > *p.Max {
		return fmt.Errorf("is %s, must be at most %s", FormatNumber(f), FormatNumber(*p.Max))
	}
	return nil
}

func (p ArgSpec) mismatch(v Value) error {
	if v.Kind == Ref {
		return fmt.Errorf("is an unresolved reference $%s.%s", v.Ref.Scope, v.Ref.Name)
	}
	return fmt.Errorf("must be %s, got %s", p.describe(), v.Kind)
}

// describe renders the type for error messages and help: "an integer 0..1".
func (p ArgSpec) describe() string {
	var b strings.Builder
	switch p.Type {
	case TypeInteger:
		b.WriteString("an integer")
	case TypeNumber:
		b.WriteString("a number")
	case TypeBoolean:
		b.WriteString("a boolean")
	case TypeArray:
		b.WriteString("an array")
		if p.MinItems > 0 || p.MaxItems > 0 {
			b.WriteString(" of " + p.itemCount())
		}
		if p.Items != nil {
			b.WriteString(" of (" + p.Items.describe() + ")")
		}
	default:
		b.WriteString("a string")
		if len(p.Enum) > 0 {
			b.WriteString(" (one of " + strings.Join(p.Enum, ", ") + ")")
		}
	}
	if r := p.Range(); r != "" {
		b.WriteString(" " + r)
	}
	if d := p.DefaultText(); d != "" {
		b.WriteString(", default " + d)
	}
	return b.String()
}

// defaultValue converts Default to a checked value of the declared type.
func (p ArgSpec) defaultValue() (Value, error) {
	v, err := p.rawDefault()
	if err != nil {
		return v, err
	}
	c, err := p.check(v)
	if err != nil {
		return v, fmt.Errorf("default %v %w", p.Default, err)
	}
	return c, nil
}

// rawDefault converts Default to a value without checking it against the
// declaration. Go code writes integers as int; a tools file read from JSON
// gives float64.
func (p ArgSpec) rawDefault() (Value, error) {
	switch d := p.Default.(type) {
	case string:
		return StringValue(d), nil
	case bool:
		return BoolValue(d), nil
	case int:
		return IntValue(int64(d)), nil
	case int64:
		return IntValue(d), nil
	case float64:
		if p.Type == TypeInteger && d == math.Trunc(d) && math.Abs(d) < 1<<53 {
			return IntValue(int64(d)), nil
		}
		return FloatValue(d), nil
	}
	return Value{}, fmt.Errorf("default %v: want a string, number or boolean", p.Default)
}

// DefaultText renders the default for people, "" when there is none.
func (p ArgSpec) DefaultText() string {
	v, err := p.rawDefault()
	if p.Default == nil || err != nil {
		return ""
	}
	return v.String()
}

// itemCount renders an array's bounds on its length: "1..32 items".
func (p ArgSpec) itemCount() string {
	if p.MaxItems == 0 {
		return fmt.Sprintf("at least %d items", p.MinItems)
	}
	return fmt.Sprintf("%d..%d items", p.MinItems, p.MaxItems)
}

// Range renders the bounds as "0..1", "1.." or "..100"; "" when there are none.
func (p ArgSpec) Range() string {
	if p.Min == nil && p.Max == nil {
		return ""
	}
	lo, hi := "", ""
	if p.Min != nil {
		lo = FormatNumber(*p.Min)
	}
	if p.Max != nil {
		hi = FormatNumber(*p.Max)
	}
	return lo + ".." + hi
}

// FormatNumber prints a bound the way people write it: 3600000, not 3.6e+06.
func FormatNumber(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
