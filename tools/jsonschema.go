package tools

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/clawedge/clawedge/grammar"
)

// ParamsFromSchema maps a JSON Schema of a tool's input (MCP's inputSchema)
// onto the spec type: nested objects, arrays of objects and of arrays,
// free-form objects, unions of simple types, properties without a type (any
// value) and enums of any values included (grammar.NeedsShape says whether
// the result must be a Shape). What it cannot express ($ref, oneOf, patterns...)
// is not approximated: it returns the reason, and the tool is offered with
// one JSON parameter validated after generation instead.
func ParamsFromSchema(schema map[string]any) ([]grammar.ArgSpec, string) {
	var r schemaReader
	return r.params(schema)
}

// schemaReader reads one input schema and keeps what it left out without
// degrading the tool (a default that contradicts its schema).
type schemaReader struct{ warnings []string }

func (r *schemaReader) warn(format string, a ...any) {
	r.warnings = append(r.warnings, fmt.Sprintf(format, a...))
}

func (r *schemaReader) params(schema map[string]any) ([]grammar.ArgSpec, string) {
	if t, _ := schema["type"].(string); t != "object" && schema["type"] != nil {
		return nil, fmt.Sprintf("the input schema's type is %v, not object", schema["type"])
	}
	for _, k := range objectRefused {
		if _, ok := schema[k]; ok {
			return nil, "the input schema uses " + k
		}
	}
	return r.objectParams(schema, 0, "")
}

// objectRefused are the keywords of an object schema the mapping does not
// express: each could make a written object invalid.
var objectRefused = []string{"anyOf", "oneOf", "allOf", "$ref", "not", "if", "patternProperties",
	"minProperties", "maxProperties", "propertyNames", "dependentRequired", "dependentSchemas", "dependencies", "unevaluatedProperties"}

// objectParams maps the properties of an object schema, sorted by name;
// depth counts the objects and arrays around it, path names it in warnings.
// A property may have any name JSON allows (but the empty one); one the
// command language cannot write makes the parameters a Shape. An optional
// property no value satisfies (an enum none of whose values has its type)
// is left out, with a warning: a valid object never has it. A required name
// that properties do not describe is a property of any value (or of
// additionalProperties' schema).
func (r *schemaReader) objectParams(schema map[string]any, depth int, path string) ([]grammar.ArgSpec, string) {
	props, _ := schema["properties"].(map[string]any)
	required := map[string]bool{}
	var requiredList []string
	if rs, ok := schema["required"].([]any); ok {
		for _, r := range rs {
			if s, ok := r.(string); ok && !required[s] {
				required[s] = true
				requiredList = append(requiredList, s)
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
		if n == "" {
			return nil, "a property has an empty name"
		}
		var p grammar.ArgSpec
		var why string
		switch ps := props[n].(type) {
		case map[string]any:
			p, why = r.param(ps, depth, path+n)
		case bool:
			// The boolean schemas: true allows any value, false none.
			p = grammar.ArgSpec{Type: grammar.TypeAny}
			if !ps {
				why = noValue + "its schema is false"
			}
		default:
			why = "no schema"
		}
		if rest, ok := strings.CutPrefix(why, noValue); ok {
			if required[n] {
				return nil, fmt.Sprintf("property %s is required, but no value is valid: %s", n, rest)
			}
			r.warn("property %s left out: no value is valid: %s", path+n, rest)
			continue
		}
		if why != "" {
			return nil, fmt.Sprintf("property %s: %s", n, why)
		}
		p.Name, p.Required = n, required[n]
		if p.Required {
			p.Default = nil
		}
		out = append(out, p)
	}
	for _, n := range requiredList {
		if _, ok := props[n]; ok {
			continue
		}
		if n == "" {
			return nil, "a required property has an empty name"
		}
		p := grammar.ArgSpec{Type: grammar.TypeAny}
		switch ap := schema["additionalProperties"].(type) {
		case nil:
		case bool:
			if !ap {
				return nil, fmt.Sprintf("required property %q is not described and additionalProperties is false: no object is valid", n)
			}
		case map[string]any:
			if len(ap) > 0 {
				var why string
				if p, why = r.param(ap, depth, path+n); why != "" {
					return nil, fmt.Sprintf("required property %q (additionalProperties): %s", n, strings.TrimPrefix(why, noValue))
				}
			}
		default:
			return nil, "additionalProperties is neither a schema nor a boolean"
		}
		p.Name, p.Required, p.Default = n, true, nil
		out = append(out, p)
	}
	return out, ""
}

// noValue begins the reason of a property schema no value satisfies: left
// out when the property is optional (objectParams), a reason to degrade
// otherwise.
const noValue = "no value is valid: "

// param maps one property's schema; depth counts the objects and arrays
// around it, path names it in warnings.
func (r *schemaReader) param(s map[string]any, depth int, path string) (grammar.ArgSpec, string) {
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
	if _, ok := s["enum"]; ok {
		return r.enum(s, desc, path)
	}
	if u, ok := r.union(s, depth, path); ok {
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
		if _, ok := s["properties"].(map[string]any); !ok && len(asList(s["required"])) == 0 {
			// A dict: any JSON object, unless additionalProperties says
			// what its values are (or that it has none: then {}). One
			// that requires keys is read as an object of those keys.
			switch ap := s["additionalProperties"].(type) {
			case nil, bool:
				if ap == false {
					return grammar.ArgSpec{Doc: OneLine(desc, 200), Type: grammar.TypeObject}, ""
				}
			case map[string]any:
				if len(ap) > 0 {
					return grammar.ArgSpec{}, "is an object without properties whose additionalProperties has a schema"
				}
			default:
				return grammar.ArgSpec{}, "is an object whose additionalProperties is neither a schema nor a boolean"
			}
			return grammar.ArgSpec{Doc: OneLine(desc, 200), Type: grammar.TypeObject, AnyProps: true}, ""
		}
		props, why := r.objectParams(s, depth+1, path+".")
		return grammar.ArgSpec{Doc: OneLine(desc, 200), Type: grammar.TypeObject, Props: props}, why
	}
	for _, k := range []string{"oneOf", "allOf", "$ref", "not", "const", "pattern", "uniqueItems", "contains", "prefixItems"} {
		if _, ok := s[k]; ok {
			return grammar.ArgSpec{}, "uses " + k
		}
	}
	if s["type"] == nil {
		// No type: any JSON value, unless a keyword constrains some kind
		// of value (items, minimum...), which the mapping does not read
		// without a type.
		for k := range s {
			if !anyOfSibling[k] && k != "type" {
				return grammar.ArgSpec{}, "has no type but uses " + k
			}
		}
		return grammar.ArgSpec{Doc: OneLine(desc, 200), Type: grammar.TypeAny}, ""
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
	case grammar.TypeInteger, grammar.TypeNumber:
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
	case grammar.TypeArray:
		items, _ := s["items"].(map[string]any)
		it, why := r.param(items, depth+1, path+"[]")
		if why != "" {
			return p, "items: " + why
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
	err := checkParam(p)
	if err != nil && p.Default != nil {
		// A default the schema contradicts ("True" for a boolean, "all"
		// outside an enum) is the schema's mistake, not the tool's: it is
		// left out, and said.
		q := p
		q.Default = nil
		if checkParam(q) == nil {
			d, _ := json.Marshal(p.Default)
			msg := strings.TrimPrefix(err.Error(), "tool x/y: parameter \"p\": ")
			msg = strings.TrimPrefix(msg, fmt.Sprintf("default %v ", p.Default))
			r.warn("property %s: default %s ignored: %s", path, d, msg)
			return q, ""
		}
	}
	if err != nil {
		return p, err.Error()
	}
	return p, ""
}

// checkParam is the registry's check of one parameter, as a tool's only one.
func checkParam(p grammar.ArgSpec) error {
	if grammar.Nested([]grammar.ArgSpec{p}) {
		return grammar.ToolSpec{Name: "x/y", InputSchema: []byte("{}"), Params: []grammar.ArgSpec{{Name: grammar.JSONParam, Type: grammar.TypeString}}, Shape: []grammar.ArgSpec{withName(p)}}.Check()
	}
	return grammar.ToolSpec{Name: "x/y", Params: []grammar.ArgSpec{withName(p)}}.Check()
}

// enum maps a schema with an enum: its values are the enum's values that are
// valid against the whole schema (its type, bounds, items...; checked by
// jsonschema-go), the others left out with a warning. Strings become an
// enum, numbers a union of exact values (each a range of one number), true
// and false both a boolean, anything else literal values (Values: an enum of
// arrays, of objects, of one boolean, or of mixed values without a type).
// No valid value: a reason starting with noValue.
func (r *schemaReader) enum(s map[string]any, desc, path string) (grammar.ArgSpec, string) {
	vals, ok := s["enum"].([]any)
	if !ok {
		return grammar.ArgSpec{}, "has an enum that is not a list"
	}
	t, _ := s["type"].(string)
	what := "value"
	if t != "" {
		what = t
	} else if ts, ok := s["type"].([]any); ok {
		var names []string
		for _, x := range ts {
			names = append(names, fmt.Sprint(x))
		}
		what = "value of type " + strings.Join(names, " or ")
	}
	if len(vals) == 0 {
		return grammar.ArgSpec{}, noValue + "its enum is empty"
	}
	res, err := ResolveSchema(s)
	if err != nil {
		return grammar.ArgSpec{}, "cannot be read: " + err.Error()
	}
	var keep []any
	var dropped []string
	seen := map[string]bool{}
	for _, v := range vals {
		text := jsonText(v)
		if f, ok := number(v); ok {
			text = grammar.FormatNumber(f) // 1 and 1.0 are one value
		}
		if seen[text] {
			continue
		}
		seen[text] = true
		if res.Validate(v) != nil {
			dropped = append(dropped, jsonText(v))
			continue
		}
		keep = append(keep, v)
	}
	list := func(l []string) string {
		if len(l) > 4 {
			l = append(l[:4:4], "…")
		}
		return strings.Join(l, ", ")
	}
	if len(keep) == 0 {
		return grammar.ArgSpec{}, fmt.Sprintf("%sno value of its enum (%s) is a valid %s", noValue, list(dropped), what)
	}
	if len(dropped) > 0 {
		r.warn("property %s: enum values %s left out: not a valid %s", path, list(dropped), what)
	}
	// The values' own kinds say what they are, whatever the declared type.
	all := func(kind func(any) bool) bool {
		return !slices.ContainsFunc(keep, func(v any) bool { return !kind(v) })
	}
	p := grammar.ArgSpec{Doc: OneLine(desc, 200)}
	switch {
	case all(func(v any) bool { _, ok := v.(string); return ok }):
		p.Type = grammar.TypeString
		for _, v := range keep {
			p.Enum = append(p.Enum, v.(string))
		}
	case all(func(v any) bool { _, ok := number(v); return ok }):
		nt := grammar.TypeNumber
		if t == "integer" {
			nt = grammar.TypeInteger
		}
		p.Type = grammar.TypeAnyOf
		for _, v := range keep {
			f, _ := number(v)
			p.AnyOf = append(p.AnyOf, grammar.ArgSpec{Type: nt, Min: Float(f), Max: Float(f)})
		}
		if len(p.AnyOf) == 1 {
			p.AnyOf[0].Doc = p.Doc
			p = p.AnyOf[0]
		}
	case len(keep) == 2 && all(func(v any) bool { _, ok := v.(bool); return ok }):
		p.Type = grammar.TypeBoolean // true and false: any boolean
	default:
		p.Type = grammar.TypeAny
		switch t {
		case "boolean", "array", "object":
			p.Type = grammar.ArgType(t)
		}
		for _, v := range keep {
			b, err := json.Marshal(v)
			if err != nil {
				return grammar.ArgSpec{}, "has an enum value that cannot be written: " + err.Error()
			}
			p.Values = append(p.Values, b)
		}
	}
	if d, ok := s["default"]; ok {
		if !slices.ContainsFunc(keep, func(v any) bool { return jsonText(v) == jsonText(d) }) {
			r.warn("property %s: default %s ignored: not one of the enum's valid values", path, jsonText(d))
		} else if str, ok := d.(string); ok && p.Type == grammar.TypeString {
			p.Default = str
		} else if b, ok := d.(bool); ok && p.Type == grammar.TypeBoolean && len(p.Values) == 0 {
			p.Default = b
		}
	}
	if err := checkParam(p); err != nil {
		return grammar.ArgSpec{}, err.Error()
	}
	return p, ""
}

func jsonText(v any) string { b, _ := json.Marshal(v); return string(b) }

// union maps {"type": [T, U...]} and {"anyOf": [S, R...]} of simple types
// (null choices left out, as notNull does): ok with the ArgSpec when it is
// one, or an ArgSpec of Type any_of with no choices and ok false when the
// schema is a union that cannot be expressed. A zero ArgSpec: not a union.
func (r *schemaReader) union(s map[string]any, depth int, path string) (grammar.ArgSpec, bool) {
	var choices []map[string]any
	_, hasAnyOf := s["anyOf"]
	if ts, ok := s["type"].([]any); ok {
		if hasAnyOf {
			// Both hold at once (a value of one of the types that is also
			// one of anyOf's): not a union of choices.
			return grammar.ArgSpec{Type: grammar.TypeAnyOf}, false
		}
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
		for k := range s {
			if !anyOfSibling[k] {
				// {"type": "integer", "anyOf": [...]}: the keyword holds
				// beside whichever choice is taken, which the choices
				// alone would not say.
				return grammar.ArgSpec{Type: grammar.TypeAnyOf}, false
			}
		}
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
		p, why := r.param(c, depth, path)
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

// anyOfSibling are the keywords that may stand beside anyOf in a union the
// mapping takes: anyOf itself and annotations, which constrain nothing.
var anyOfSibling = map[string]bool{"anyOf": true, "description": true, "default": true, "title": true,
	"examples": true, "$comment": true, "deprecated": true, "readOnly": true, "writeOnly": true, "format": true}

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

// PlainName makes an outside tool name (MCP's, which may hold dots or start
// with "_") a name of the command language: characters other than letters,
// digits, _ and - become _ ("get.weather" is get_weather), and a name that
// does not start with a letter gets the prefix "x" ("__get_all_user_list" is
// x__get_all_user_list, "3d" is x3d), as the language's names start with a
// letter. The caller keeps the outside name to call the tool by (the MCP
// client; a tools file warns of the mapping). The empty name stays empty.
func PlainName(name string) string {
	b := []byte(name)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	if len(b) > 0 && !(b[0] >= 'a' && b[0] <= 'z' || b[0] >= 'A' && b[0] <= 'Z') {
		return "x" + string(b)
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
