package tools

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/clawedge/clawedge/grammar"
)

func TestReadToolsFileMCPDefinitions(t *testing.T) {
	fts, err := ReadToolsFile(strings.NewReader(`[
	 {"name": "get.weather", "description": "Weather\nfor a city", "inputSchema": {"type": "object",
	   "properties": {"city": {"type": "string", "maxLength": 40}, "days": {"type": "integer", "minimum": 1, "maximum": 7, "default": 1}},
	   "required": ["city"]}, "annotations": {"readOnlyHint": true}, "execution": {"taskSupport": "optional"}},
	 {"name": "search", "inputSchema": {"type": "object", "properties": {"filter": {"type": "object", "properties": {"tag": {"type": "string"}}}}}}
	]`))
	if err != nil {
		t.Fatal(err)
	}
	w := fts[0]
	if w.Spec.Name != "get_weather" || w.Spec.Doc != "Weather for a city" || w.Degraded != "" || len(w.Spec.Params) != 2 {
		t.Fatalf("get.weather: %+v", w)
	}
	if _, err := w.Spec.ValidateJSON([]byte(`{"city": "Oslo", "days": 9}`)); err == nil {
		t.Error("days=9 accepted")
	}
	args, err := w.Spec.ValidateJSON([]byte(`{"city": "Oslo"}`))
	if err != nil || args.Int("days") != 1 {
		t.Errorf("default not applied: %v %v", args, err)
	}
	s := fts[1]
	// A nested object is exact: its Shape is what the constraint writes, and
	// the arguments travel as the one JSON parameter checked by the schema.
	if s.Degraded != "" || len(s.Spec.Params) != 1 || s.Spec.Params[0].Name != grammar.JSONParam || len(s.Spec.InputSchema) == 0 ||
		len(s.Spec.Shape) != 1 || s.Spec.Shape[0].Type != grammar.TypeObject || s.Spec.Shape[0].Props[0].Name != "tag" {
		t.Errorf("search: %+v", s)
	}
	if g := s.Spec.Shaped(); g[0].Type != "object" || g[0].Props[0].Type != "string" {
		t.Errorf("search: grammar %+v", g)
	}
	// A free-form object (a dict) is constrained to a JSON object.
	if ft := SpecFromSchema("x", "", map[string]any{"type": "object", "properties": map[string]any{"free": map[string]any{"type": "object"}}}); ft.Degraded != "" || len(ft.Spec.Shape) != 1 || !ft.Spec.Shape[0].AnyProps {
		t.Errorf("free-form object: %+v", ft)
	}
	// ReadSpecs (generate --tools) takes the same file.
	if specs, err := ReadSpecs(strings.NewReader(`[{"name": "x", "inputSchema": {"type": "object"}}]`)); err != nil || specs[0].Name != "x" {
		t.Errorf("ReadSpecs: %v %v", specs, err)
	}
	for _, c := range []struct{ in, want string }{
		{`[{"name": "x", "inputSchema": {}, "inputschema": 1}]`, `tool 1: unknown key "inputschema"`},
		{`[{"name": "", "inputSchema": {}}]`, "tool 1: name must be a non-empty string"},
		{`[{"name": "x", "inputSchema": 3}]`, "tool 1: x: inputSchema must be a JSON Schema object"},
		{`[{"name": "x", "inputSchema": {}}, {"name": "x", "inputSchema": {}}]`, `spec 2: tool "x" listed twice`},
		{"[{\"name\": \"x\",\n \"inputSchema\": {]", "line 2, column 18"},
	} {
		if _, err := ReadToolsFile(strings.NewReader(c.in)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.in, err, c.want)
		}
	}
}

// format is an annotation (JSON Schema 2020-12): the string stays exact and the
// format is told in the doc.
func TestSchemaFormatIsAnAnnotation(t *testing.T) {
	fts, err := ReadToolsFile(strings.NewReader(`[{"name": "fetch", "inputSchema": {"type": "object",
	  "properties": {"url": {"type": "string", "format": "uri", "description": "where"}}}}]`))
	if err != nil {
		t.Fatal(err)
	}
	if ft := fts[0]; ft.Degraded != "" || ft.Spec.Params[0].Doc != "where (format: uri)" {
		t.Errorf("fetch: %+v", ft)
	}
}

// A nullable property (type [T, "null"], or anyOf [S, {type: null}] as pydantic
// writes Optional) is its non-null part: every value offered is valid.
func TestSchemaNullableIsItsNonNullPart(t *testing.T) {
	fts, err := ReadToolsFile(strings.NewReader(`[{"name": "q", "inputSchema": {"type": "object", "properties": {
	  "limit": {"type": ["integer", "null"], "minimum": 1, "maximum": 50},
	  "tag": {"anyOf": [{"type": "string", "enum": ["a", "b"]}, {"type": "null"}], "default": null, "description": "a tag"},
	  "mixed": {"type": ["boolean", "string", "null"]},
	  "either": {"anyOf": [{"type": "integer", "minimum": 0}, {"type": "string", "enum": ["all"]}]}}}}]`))
	if err != nil {
		t.Fatal(err)
	}
	ft := fts[0]
	if ft.Degraded != "" || len(ft.Spec.Shape) != 4 {
		t.Fatalf("unions: %+v", ft)
	}
	either, mixed := ft.Spec.Shape[0], ft.Spec.Shape[2]
	if either.Type != grammar.TypeAnyOf || len(either.AnyOf) != 2 || *either.AnyOf[0].Min != 0 || either.AnyOf[1].Enum[0] != "all" {
		t.Errorf("either: %+v", either)
	}
	if mixed.Type != grammar.TypeAnyOf || len(mixed.AnyOf) != 2 || mixed.AnyOf[0].Type != grammar.TypeBoolean || mixed.AnyOf[1].Type != grammar.TypeString {
		t.Errorf("mixed: %+v", mixed)
	}
	for in, want := range map[string]string{
		`{"type": ["string", "object"]}`:                   "is a union of types other than simple ones",
		`{"anyOf": [{"type": "string"}, {"$ref": "#/x"}]}`: "is a union of types other than simple ones",
		`{"type": "object", "properties": {"a": ` + strings.Repeat(`{"type": "object", "properties": {"a": `, 5) + `{"type": "string"}` + strings.Repeat("}}", 6): "is nested deeper than 4",
	} {
		var s map[string]any
		if err := json.Unmarshal([]byte(in), &s); err != nil {
			t.Fatal(err)
		}
		if ft := SpecFromSchema("x", "", map[string]any{"type": "object", "properties": map[string]any{"p": s}}); !strings.Contains(ft.Degraded, want) {
			t.Errorf("%s: degraded %q, want %q", in, ft.Degraded, want)
		}
	}
	p, why := ParamsFromSchema(map[string]any{"type": "object", "properties": map[string]any{
		"limit": map[string]any{"type": []any{"integer", "null"}, "minimum": 1.0, "maximum": 50.0},
		"tag":   map[string]any{"anyOf": []any{map[string]any{"type": "string", "enum": []any{"a", "b"}}, map[string]any{"type": "null"}}, "description": "a tag"},
	}})
	if why != "" || len(p) != 2 || p[0].Type != grammar.TypeInteger || *p[0].Max != 50 || p[1].Type != grammar.TypeString || len(p[1].Enum) != 2 || p[1].Doc != "a tag" {
		t.Errorf("nullable: %+v %q", p, why)
	}
}

// input_schema belongs to a tool whose one parameter is the json string.
func TestInputSchemaNeedsTheJSONParam(t *testing.T) {
	_, err := ReadSpecs(strings.NewReader(`[{"name": "x/y", "doc": "", "input_schema": {"type": "object"},
	  "params": [{"name": "pin", "type": "string"}]}]`))
	if err == nil || !strings.Contains(err.Error(), `input_schema is for a tool whose one parameter is the string "json"`) {
		t.Errorf("got %v", err)
	}
}
