package tools

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/clawedge/clawedge/grammar"
)

// JSONParam is the one parameter of a tool whose schema the spec type cannot
// express: the arguments as a JSON object, checked against the tool's own
// schema after generation, before the call.
const JSONParam = "json"

// ParamsFromSchema maps a JSON Schema of a tool's input (MCP's inputSchema)
// onto the spec type. What it cannot express
// (nested objects, arrays of objects, anyOf, $ref, numeric enums, nullable
// types...) is not approximated: it returns the reason, and the tool is
// offered with one JSON parameter validated after generation instead.
func ParamsFromSchema(schema map[string]any) ([]Param, string) {
	if t, _ := schema["type"].(string); t != "object" && schema["type"] != nil {
		return nil, fmt.Sprintf("the input schema's type is %v, not object", schema["type"])
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf", "$ref", "not", "if", "patternProperties"} {
		if _, ok := schema[k]; ok {
			return nil, "the input schema uses " + k
		}
	}
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
	var out []Param
	for _, n := range names {
		if !grammar.IsIdent(n) {
			return nil, fmt.Sprintf("property %q is not a plain name", n)
		}
		ps, _ := props[n].(map[string]any)
		p, why := param(ps)
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

// param maps one property's schema; items are mapped the same way, without nesting.
func param(s map[string]any) (Param, string) {
	if s == nil {
		return Param{}, "no schema"
	}
	s = notNull(s)
	if s["type"] == "object" || s["properties"] != nil {
		return Param{}, "is a nested object"
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf", "$ref", "not", "const", "pattern"} {
		if _, ok := s[k]; ok {
			return Param{}, "uses " + k
		}
	}
	t, ok := s["type"].(string)
	if !ok {
		return Param{}, fmt.Sprintf("type %v is not one simple type", s["type"])
	}
	desc, _ := s["description"].(string)
	// format is an annotation in JSON Schema 2020-12 (asserted only with the
	// format-assertion vocabulary): it goes into the doc, for the model to read.
	if f, ok := s["format"].(string); ok && f != "" {
		desc = strings.TrimSpace(desc + " (format: " + f + ")")
	}
	p := Param{Doc: OneLine(desc, 200), Type: Kind(t)}
	switch p.Type {
	case KindString:
		if ml, ok := number(s["maxLength"]); ok && ml >= 1 && ml <= math.MaxInt32 {
			p.MaxLen = int(ml)
		}
		if _, ok := s["minLength"]; ok {
			return p, "uses minLength"
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
	case KindInteger, KindNumber:
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
	case KindBoolean:
	case KindArray:
		items, _ := s["items"].(map[string]any)
		it, why := param(items)
		if why != "" {
			return p, "items: " + why
		}
		if it.Type == KindArray {
			return p, "is an array of arrays"
		}
		it.Doc = ""
		p.Items = &it
		if v, ok := number(s["minItems"]); ok && v >= 0 && v <= math.MaxInt32 {
			p.MinItems = int(v)
		}
		if v, ok := number(s["maxItems"]); ok && v >= 0 && v <= math.MaxInt32 {
			p.MaxItems = int(v)
		}
	default:
		return p, fmt.Sprintf("type %q cannot be expressed", t)
	}
	if d, ok := s["default"]; ok && p.Type != KindArray {
		switch d.(type) {
		case string, bool, float64:
			p.Default = d
		}
	}
	if err := (Spec{Name: "x/y", Params: []Param{withName(p)}}).Check(); err != nil {
		return p, err.Error()
	}
	return p, ""
}

func withName(p Param) Param { p.Name = "p"; return p }

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
