package tools

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/clawedge/clawedge/grammar"
)

// ParamsFromSchema maps a JSON Schema of a tool's input (MCP's inputSchema)
// onto the spec type: nested objects, arrays of objects and unions of simple
// types included (Nested says whether the result has any). What it cannot
// express ($ref, oneOf, numeric enums, patterns...) is not approximated: it
// returns the reason, and the tool is offered with one JSON parameter
// validated after generation instead.
func ParamsFromSchema(schema map[string]any) ([]grammar.ArgSpec, string) {
	if t, _ := schema["type"].(string); t != "object" && schema["type"] != nil {
		return nil, fmt.Sprintf("the input schema's type is %v, not object", schema["type"])
	}
	for _, k := range objectRefused {
		if _, ok := schema[k]; ok {
			return nil, "the input schema uses " + k
		}
	}
	return objectParams(schema, 0)
}

// objectRefused are the keywords of an object schema the mapping does not
// express: each could make a written object invalid.
var objectRefused = []string{"anyOf", "oneOf", "allOf", "$ref", "not", "if", "patternProperties",
	"minProperties", "maxProperties", "propertyNames", "dependentRequired", "dependentSchemas", "dependencies", "unevaluatedProperties"}

// objectParams maps the properties of an object schema, sorted by name;
// depth counts the objects and arrays around it.
func objectParams(schema map[string]any, depth int) ([]grammar.ArgSpec, string) {
	props, _ := schema["properties"].(map[string]any)
	required := map[string]bool{}
	if rs, ok := schema["required"].([]any); ok {
		for _, r := range rs {
			if s, ok := r.(string); ok {
				required[s] = true
			}
		}
	}
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []grammar.ArgSpec
	for _, n := range names {
		if !grammar.IsIdent(n) {
			return nil, fmt.Sprintf("property %q is not a plain name", n)
		}
		ps, _ := props[n].(map[string]any)
		p, why := param(ps, depth)
		if why != "" {
			return nil, fmt.Sprintf("property %s: %s", n, why)
		}
		p.Name, p.Required = n, required[n]
		if p.Required {
			p.Default = nil
		}
		out = append(out, p)
	}
	for r := range required {
		if _, ok := props[r]; !ok {
			return nil, fmt.Sprintf("required property %q is not described", r)
		}
	}
	return out, ""
}

// param maps one property's schema; depth counts the objects and arrays
// around it.
func param(s map[string]any, depth int) (grammar.ArgSpec, string) {
	if s == nil {
		return grammar.ArgSpec{}, "no schema"
	}
	s = notNull(s)
	if depth > grammar.MaxNesting {
		return grammar.ArgSpec{}, fmt.Sprintf("is nested deeper than %d objects and arrays", grammar.MaxNesting)
	}
	desc, _ := s["description"].(string)
	// format is an annotation in JSON Schema 2020-12 (asserted only with the
	// format-assertion vocabulary): it goes into the doc, for the model to read.
	if f, ok := s["format"].(string); ok && f != "" {
		desc = strings.TrimSpace(desc + " (format: " + f + ")")
	}
	if u, ok := union(s, depth); ok {
		u.Doc = OneLine(desc, 200)
		return u, ""
	} else if u.Type != "" {
		return u, "is a union of types other than simple ones (string, integer, number, boolean)"
	}
	if s["type"] == "object" || s["type"] == nil && s["properties"] != nil {
		for _, k := range objectRefused {
			if _, ok := s[k]; ok {
				return grammar.ArgSpec{}, "is an object that uses " + k
			}
		}
		if _, ok := s["properties"].(map[string]any); !ok {
			return grammar.ArgSpec{}, "is an object without properties"
		}
		props, why := objectParams(s, depth+1)
		return grammar.ArgSpec{Doc: OneLine(desc, 200), Type: grammar.TypeObject, Props: props}, why
	}
	for _, k := range []string{"oneOf", "allOf", "$ref", "not", "const", "pattern", "uniqueItems", "contains", "prefixItems"} {
		if _, ok := s[k]; ok {
			return grammar.ArgSpec{}, "uses " + k
		}
	}
	t, ok := s["type"].(string)
	if !ok {
		return grammar.ArgSpec{}, fmt.Sprintf("type %v is not one simple type", s["type"])
	}
	p := grammar.ArgSpec{Doc: OneLine(desc, 200), Type: grammar.ArgType(t)}
	switch p.Type {
	case grammar.TypeString:
		if ml, ok := number(s["maxLength"]); ok && ml < 1 {
			return p, "has maxLength below 1" // MaxLen 0 would mean no limit
		} else if ok && ml <= math.MaxInt32 {
			p.MaxLen = int(ml)
		}
		if _, ok := s["minLength"]; ok {
			return p, "uses minLength"
		}
		if e, ok := s["enum"]; ok && len(asList(e)) == 0 {
			return p, "has an empty enum: no value is valid"
		}
		if e, ok := s["enum"].([]any); ok {
			for _, v := range e {
				str, ok := v.(string)
				if !ok {
					return p, "has an enum value that is not a string"
				}
				p.Enum = append(p.Enum, str)
			}
		}
	case grammar.TypeInteger, grammar.TypeNumber:
		if _, ok := s["enum"]; ok {
			return p, "has a numeric enum"
		}
		for _, k := range []string{"exclusiveMinimum", "exclusiveMaximum", "multipleOf"} {
			if _, ok := s[k]; ok {
				return p, "uses " + k
			}
		}
		if v, ok := number(s["minimum"]); ok {
			p.Min = Float(v)
		}
		if v, ok := number(s["maximum"]); ok {
			p.Max = Float(v)
		}
	case grammar.TypeBoolean:
		if _, ok := s["enum"]; ok {
			return p, "has a boolean enum"
		}
	case grammar.TypeArray:
		if _, ok := s["enum"]; ok {
			return p, "has an enum of arrays"
		}
		items, _ := s["items"].(map[string]any)
		it, why := param(items, depth+1)
		if why != "" {
			return p, "items: " + why
		}
		if it.Type == grammar.TypeArray {
			return p, "is an array of arrays"
		}
		it.Doc = ""
		p.Items = &it
		if v, ok := number(s["minItems"]); ok && v > math.MaxInt32 {
			return p, "has minItems out of range"
		} else if ok && v > 0 {
			p.MinItems = int(math.Ceil(v))
		}
		if v, ok := number(s["maxItems"]); ok && v < 1 {
			return p, "has maxItems below 1" // MaxItems 0 would mean no limit
		} else if ok && v <= math.MaxInt32 {
			p.MaxItems = int(v)
		}
	default:
		return p, fmt.Sprintf("type %q cannot be expressed", t)
	}
	if d, ok := s["default"]; ok && p.Type != grammar.TypeArray {
		switch d.(type) {
		case string, bool, float64:
			p.Default = d
		}
	}
	check := grammar.ToolSpec{Name: "x/y", Params: []grammar.ArgSpec{withName(p)}}.Check
	if grammar.Nested([]grammar.ArgSpec{p}) {
		check = grammar.ToolSpec{Name: "x/y", InputSchema: []byte("{}"), Params: []grammar.ArgSpec{{Name: grammar.JSONParam, Type: grammar.TypeString}}, Shape: []grammar.ArgSpec{withName(p)}}.Check
	}
	if err := check(); err != nil {
		return p, err.Error()
	}
	return p, ""
}

// union maps {"type": [T, U...]} and {"anyOf": [S, R...]} of simple types
// (null choices left out, as notNull does): ok with the ArgSpec when it is
// one, or an ArgSpec of Type any_of with no choices and ok false when the
// schema is a union that cannot be expressed. A zero ArgSpec: not a union.
func union(s map[string]any, depth int) (grammar.ArgSpec, bool) {
	var choices []map[string]any
	if ts, ok := s["type"].([]any); ok {
		for _, t := range ts {
			if t == "null" {
				continue
			}
			c := map[string]any{}
			for k, v := range s {
				if k != "default" && k != "description" {
					c[k] = v
				}
			}
			c["type"] = t
			choices = append(choices, c)
		}
	} else if as, ok := s["anyOf"].([]any); ok {
		for _, a := range as {
			m, _ := a.(map[string]any)
			if m["type"] == "null" && len(m) == 1 {
				continue
			}
			choices = append(choices, m)
		}
	} else {
		return grammar.ArgSpec{}, false
	}
	if len(choices) == 0 {
		return grammar.ArgSpec{Type: grammar.TypeAnyOf}, false
	}
	u := grammar.ArgSpec{Type: grammar.TypeAnyOf}
	for _, c := range choices {
		p, why := param(c, depth)
		if why != "" || p.Type == grammar.TypeAnyOf || p.Type == grammar.TypeObject || p.Type == grammar.TypeArray {
			return grammar.ArgSpec{Type: grammar.TypeAnyOf}, false
		}
		p.Doc, p.Default = "", nil
		u.AnyOf = append(u.AnyOf, p)
	}
	if len(u.AnyOf) == 1 {
		return u.AnyOf[0], true
	}
	return u, true
}

func asList(v any) []any { l, _ := v.([]any); return l }

func withName(p grammar.ArgSpec) grammar.ArgSpec { p.Name = "p"; return p }

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case int:
		return float64(x), true
	}
	return 0, false
}

// OneLine cuts outside text (a server's description) to one line of at most max
// bytes, on a rune boundary.
func OneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > max {
		cut := max
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// PlainName makes an outside tool name (MCP's, which may hold dots) a name of
// the command language: characters other than letters, digits, _ and - become
// _ ("get.weather" is get_weather).
func PlainName(name string) string {
	b := []byte(name)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	return string(b)
}

// notNull reads a nullable schema as its non-null part: {"type": [T, "null"]}
// or {"anyOf": [S, {"type": "null"}]} (how Optional fields are generated). A
// value of the non-null part is valid against the whole, so constraining to it
// never produces an invalid call; it only never sends null (leaving an
// optional parameter out does the same).
func notNull(s map[string]any) map[string]any {
	isNull := func(v any) bool { m, ok := v.(map[string]any); return ok && m["type"] == "null" && len(m) == 1 }
	out := func(base map[string]any, drop string) map[string]any {
		c := map[string]any{}
		for k, v := range s {
			if k != drop {
				c[k] = v
			}
		}
		for k, v := range base {
			if _, set := c[k]; !set || k == "type" {
				c[k] = v
			}
		}
		return c
	}
	if ts, ok := s["type"].([]any); ok && len(ts) == 2 {
		for i, t := range ts {
			if t == "null" {
				return out(map[string]any{"type": ts[1-i]}, "")
			}
		}
	}
	if as, ok := s["anyOf"].([]any); ok && len(as) == 2 {
		for i, a := range as {
			if m, ok := as[1-i].(map[string]any); ok && isNull(a) {
				return out(m, "anyOf")
			}
		}
	}
	return s
}
