package grammar

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Check reports a spec that could never be called or compiled: a bad name, a
// duplicate parameter, an enum on a non-string, min above max, an array
// without items, objects outside a Shape. Registries refuse such specs; the
// constraint compiler states the same rules through checkParams.
func (s ToolSpec) Check() error {
	if !validToolName(s.Name) {
		return fmt.Errorf("tool name %q: want ns/name of letters, digits, _ and -", s.Name)
	}
	if len(s.InputSchema) > 0 && (len(s.Params) != 1 || s.Params[0].Name != JSONParam || s.Params[0].Type != TypeString) {
		return fmt.Errorf("tool %s: input_schema is for a tool whose one parameter is the string %q", s.Name, JSONParam)
	}
	if len(s.Shape) > 0 && (len(s.InputSchema) == 0 || !NeedsShape(s.Shape)) {
		// A flat shape would be written as itself but validated as the json
		// parameter; flat parameters belong in params.
		return fmt.Errorf("tool %s: a shape is for a tool with an input_schema and nested parameters (objects or unions) or names the command language cannot write", s.Name)
	}
	if err := checkParams(s.Params, false); err != nil {
		return fmt.Errorf("tool %s: %w", s.Name, err)
	}
	if err := checkParams(s.Shape, true); err != nil {
		return fmt.Errorf("tool %s: shape: %w", s.Name, err)
	}
	if err := checkParams(s.Output, true); err != nil {
		return fmt.Errorf("tool %s: output: %w", s.Name, err)
	}
	return nil
}

// Nested reports whether params have objects, unions, any values, literal
// values (Values) or arrays of arrays: a tool's such parameters go into its
// Shape, not its Params.
func Nested(params []ArgSpec) bool {
	for _, p := range params {
		if p.Type == TypeObject || p.Type == TypeAnyOf || p.Type == TypeAny || len(p.Values) > 0 ||
			p.Items != nil && (p.Items.Type == TypeArray || Nested([]ArgSpec{*p.Items})) {
			return true
		}
	}
	return false
}

// NeedsShape reports whether params can only be a tool's Shape: they are
// Nested, or a name is not one the command language writes as a key (JSON
// allows any string: "_from", "max-count", "a b"), so they cannot be Params,
// whose calls are also rendered as command text.
func NeedsShape(params []ArgSpec) bool {
	for _, p := range params {
		if !IsIdent(p.Name) {
			return true
		}
	}
	return Nested(params)
}

// checkParams checks the names and declarations of an object's parameters;
// nested allows objects and unions of types (a Shape's, or what the
// constraint compiler is given).
func checkParams(ps []ArgSpec, nested bool) error {
	seen := map[string]bool{}
	for _, p := range ps {
		if p.Name == "" || seen[p.Name] {
			return fmt.Errorf("parameter name %q empty or repeated", p.Name)
		}
		seen[p.Name] = true
		if err := p.checkDecl(nested); err != nil {
			return fmt.Errorf("parameter %q: %w", p.Name, err)
		}
	}
	return nil
}

// checkDecl is the one declaration check of a parameter: what cannot be
// expressed, compiled or satisfied. Depth is the compiler's to bound.
func (p ArgSpec) checkDecl(nested bool) error {
	if len(p.Values) > 0 {
		if !nested {
			return fmt.Errorf("values are only for a tool's shape (an MCP input schema)")
		}
		return p.checkValues()
	}
	switch p.Type {
	case TypeObject, TypeAnyOf:
		if !nested {
			return fmt.Errorf("type %s is only for a tool's shape (an MCP input schema)", p.Type)
		}
		return p.checkNested()
	case TypeAny:
		if !nested {
			return fmt.Errorf("type %s is only for a tool's shape (an MCP input schema)", p.Type)
		}
		if p.hasConstraints() || p.Default != nil {
			return fmt.Errorf("a value of type any has no other constraint (items, props, bounds, default)")
		}
		return nil
	}
	if len(p.Props) > 0 || len(p.AnyOf) > 0 || p.AnyProps {
		return fmt.Errorf("props, any_props and any_of are for objects and unions")
	}
	switch p.Type {
	case TypeString, TypeInteger, TypeNumber, TypeBoolean:
	case TypeArray:
		if p.Items == nil {
			return fmt.Errorf("array without items")
		}
		if p.Items.Type == TypeArray && !nested {
			// The command language writes no array in an array.
			return fmt.Errorf("arrays of arrays are only for a tool's shape (an MCP input schema)")
		}
		if err := p.Items.checkDecl(nested); err != nil {
			return fmt.Errorf("items: %w", err)
		}
	default:
		return fmt.Errorf("unknown type %q", p.Type)
	}
	if len(p.Enum) > 0 && p.Type != TypeString {
		return fmt.Errorf("enum is only for strings")
	}
	for _, e := range p.Enum {
		if !utf8.ValidString(e) {
			return fmt.Errorf("enum value %q is not valid UTF-8", e)
		}
		if p.MaxLen > 0 && utf8.RuneCountInString(e) > p.MaxLen {
			return fmt.Errorf("enum value %q is longer than max_len %d", e, p.MaxLen)
		}
	}
	if (p.Min != nil || p.Max != nil) && p.Type != TypeInteger && p.Type != TypeNumber {
		return fmt.Errorf("min/max are only for numbers")
	}
	if p.Min != nil && p.Max != nil && *p.Min > *p.Max {
		return fmt.Errorf("min %s above max %s", FormatNumber(*p.Min), FormatNumber(*p.Max))
	}
	if p.MinItems < 0 || p.MaxItems < 0 || (p.MinItems > 0 || p.MaxItems > 0) && p.Type != TypeArray {
		return fmt.Errorf("min_items/max_items are only for arrays and must not be negative")
	}
	if p.MaxItems > 0 && p.MinItems > p.MaxItems {
		return fmt.Errorf("min_items %d above max_items %d", p.MinItems, p.MaxItems)
	}
	if p.MaxLen < 0 || (p.MaxLen > 0 && p.Type != TypeString) {
		return fmt.Errorf("max_len is only for strings and must be positive")
	}
	if p.Default != nil {
		if p.Required {
			return fmt.Errorf("a required parameter cannot have a default")
		}
		if p.Type == TypeArray {
			return fmt.Errorf("arrays cannot have a default")
		}
		if _, err := p.defaultValue(); err != nil {
			return err
		}
	}
	return nil
}

// hasConstraints reports whether p has any field that constrains a value
// beyond its type (Values aside).
func (p ArgSpec) hasConstraints() bool {
	return len(p.Enum) > 0 || p.Min != nil || p.Max != nil || p.MaxLen != 0 || p.Items != nil ||
		p.MinItems != 0 || p.MaxItems != 0 || len(p.Props) > 0 || len(p.AnyOf) > 0 || p.AnyProps
}

// checkValues checks literal values: each one JSON value of p's type
// (boolean, array, object, or any), and nothing else constraining p.
func (p ArgSpec) checkValues() error {
	switch p.Type {
	case TypeBoolean, TypeArray, TypeObject, TypeAny:
	default:
		return fmt.Errorf("values are for booleans, arrays, objects and any values, not %s (strings have enum, numbers unions)", p.Type)
	}
	if p.hasConstraints() || p.Default != nil {
		return fmt.Errorf("a parameter with values has no other constraint (items, props, bounds, default)")
	}
	for i, v := range p.Values {
		k, err := valueKind(v)
		if err != nil {
			return fmt.Errorf("value %d: %w", i+1, err)
		}
		if p.Type != TypeAny && k != p.Type {
			return fmt.Errorf("value %d (%s) is not of type %s", i+1, QuoteShort(string(v)), p.Type)
		}
	}
	return nil
}

// valueKind is the JSON Schema type of one JSON value: "number" for any
// number, "null" for null. Not one value: an error.
func valueKind(v json.RawMessage) (ArgType, error) {
	if !json.Valid(v) {
		return "", fmt.Errorf("%s is not one JSON value", QuoteShort(string(v)))
	}
	t := bytes.TrimSpace(v)
	switch t[0] {
	case '"':
		return TypeString, nil
	case 't', 'f':
		return TypeBoolean, nil
	case 'n':
		return "null", nil
	case '[':
		return TypeArray, nil
	case '{':
		return TypeObject, nil
	}
	return TypeNumber, nil
}

// checkNested checks an object (properties only) or a union (choices of
// types other than unions).
func (p ArgSpec) checkNested() error {
	if p.Type == TypeObject {
		if p.Default != nil || len(p.AnyOf) > 0 || p.Items != nil {
			return fmt.Errorf("an object has properties only")
		}
		if p.AnyProps && len(p.Props) > 0 {
			return fmt.Errorf("a free-form object (any_props) has no props")
		}
		return checkParams(p.Props, true)
	}
	if len(p.AnyOf) == 0 || p.Default != nil || len(p.Props) > 0 || p.Items != nil {
		return fmt.Errorf("a union has choices only")
	}
	for i, c := range p.AnyOf {
		if c.Type == TypeAnyOf {
			return fmt.Errorf("choice %d: unions of unions are not supported", i+1)
		}
		if err := c.checkDecl(true); err != nil {
			return fmt.Errorf("choice %d: %w", i+1, err)
		}
	}
	return nil
}

// checkCallTools checks the tools a constraint is compiled from, with the
// parameters a model writes in the form: names present and unique, each
// declaration by checkDecl.
func checkCallTools(tools []ToolSpec, form Form) error {
	seen := map[string]bool{}
	for _, t := range tools {
		if t.Name == "" {
			return fmt.Errorf("grammar: a tool has no name")
		}
		if seen[t.Name] {
			return fmt.Errorf("grammar: tool %s is listed twice", t.Name)
		}
		seen[t.Name] = true
		if err := checkParams(t.callParams(form), true); err != nil {
			return fmt.Errorf("grammar: tool %s: %w", t.Name, err)
		}
	}
	return nil
}

func validToolName(name string) bool {
	ns, n, hasNS := strings.Cut(name, "/")
	if !hasNS {
		return IsIdent(name)
	}
	return IsNamespace(ns) && IsIdent(n)
}
