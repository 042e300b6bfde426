package tools

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/clawedge/clawedge/grammar"
)

// TestSchemaClassesOfRealTools: the classes that degraded real (BFCL) tool
// schemas are read exactly: free-form objects, property names the command
// language cannot write, defaults that contradict their schema (left out,
// with a warning), numeric enums.
func TestSchemaClassesOfRealTools(t *testing.T) {
	obj := func(props string) map[string]any {
		var m map[string]any
		if err := jsonUnmarshal(`{"type": "object", "properties": `+props+`}`, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	for _, c := range []struct {
		name, props string
		warn        string // a warning it must have; "" for none
	}{
		{"dict", `{"d": {"type": "object", "description": "any"}}`, ""},
		{"dict open", `{"d": {"type": "object", "additionalProperties": true}, "e": {"type": "object", "additionalProperties": {}}}`, ""},
		{"no properties at all", `{"d": {"type": "object", "additionalProperties": false}}`, ""},
		{"dict items", `{"l": {"type": "array", "items": {"type": "object"}}}`, ""},
		{"underscore", `{"_from": {"type": "string"}, "_class": {"type": "integer"}}`, ""},
		{"any name", `{"a b": {"type": "string"}, "q\"uote": {"type": "boolean"}, "ünï": {"type": "number"}}`, ""},
		{"bool default", `{"b": {"type": "boolean", "default": "True"}}`, `property b: default "True" ignored`},
		{"enum default", `{"s": {"type": "string", "enum": ["a", "b"], "default": "all"}}`, `property s: default "all" ignored`},
		{"int default", `{"n": {"type": "integer", "default": "dontcare"}}`, `property n: default "dontcare" ignored`},
		{"nested default", `{"o": {"type": "object", "properties": {"x": {"type": "boolean", "default": "false"}}}}`, `property o.x: default "false" ignored`},
		{"int enum", `{"n": {"type": "integer", "enum": [1, 2, 3, 2]}}`, ""},
		{"number enum", `{"n": {"type": "number", "enum": [0.5, 10], "default": 3}}`, `property n: default 3 ignored`},
		{"bool enum", `{"b": {"type": "boolean", "enum": [true, false]}}`, ""},
	} {
		ft := SpecFromSchema("t/x", "", obj(c.props))
		if ft.Degraded != "" {
			t.Errorf("%s: degraded: %s", c.name, ft.Degraded)
			continue
		}
		if _, err := grammar.Compile(grammar.Spec{Form: grammar.FormQwen, Mode: grammar.ModeCalls, Tools: []grammar.ToolSpec{ft.Spec}}); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
		if err := ft.Spec.Check(); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
		got := strings.Join(ft.Warnings, "; ")
		if c.warn == "" && got != "" || !strings.Contains(got, c.warn) {
			t.Errorf("%s: warnings %q, want %q", c.name, got, c.warn)
		}
	}
	// Still degraded: what a free-form reading would make invalid, and
	// enums no value of the type can match.
	for _, c := range []struct{ props, why string }{
		{`{"d": {"type": "object", "required": ["a"]}}`, "property d: is an object without properties that requires some"},
		{`{"d": {"type": "object", "additionalProperties": {"type": "string"}}}`, "additionalProperties has a schema"},
		{`{"n": {"type": "integer", "enum": ["1", "dontcare"]}}`, `has an enum value "1" that is not an integer`},
		{`{"n": {"type": "integer", "enum": [1.5]}}`, `has an enum value 1.5 that is not an integer`},
		{`{"b": {"type": "boolean", "enum": ["True", "False"]}}`, "has a boolean enum"},
		{`{"": {"type": "string"}}`, "a property has an empty name"},
	} {
		if ft := SpecFromSchema("t/x", "", obj(c.props)); !strings.Contains(ft.Degraded, c.why) {
			t.Errorf("%s: degraded %q, want %q", c.props, ft.Degraded, c.why)
		}
	}
	// A flat tool whose names are plain stays flat; one with "_from" is a shape.
	if ft := SpecFromSchema("t/x", "", obj(`{"a": {"type": "string"}}`)); len(ft.Spec.Shape) != 0 || ft.Spec.Params[0].Name != "a" {
		t.Errorf("flat: %+v", ft.Spec)
	}
	if ft := SpecFromSchema("t/x", "", obj(`{"_from": {"type": "string"}}`)); len(ft.Spec.Shape) != 1 || ft.Spec.Params[0].Name != grammar.JSONParam {
		t.Errorf("_from: %+v", ft.Spec)
	}
}

// TestReadToolsFileEachRefusesOneTool: a tool with a name the model cannot
// write, a bad spec or a repeated name is refused alone; the others are read.
// ReadToolsFile still refuses the whole file.
func TestReadToolsFileEachRefusesOneTool(t *testing.T) {
	mcp := `[{"name": "__get_all_user_list", "inputSchema": {"type": "object"}},
 {"name": "ok", "inputSchema": {"type": "object", "properties": {"a": {"type": "string"}}}},
 {"name": "ok", "inputSchema": {"type": "object"}},
 {"name": "bad", "inputSchema": 3},
 {"name": "fine", "inputSchema": {"type": "object"}}]`
	fts, err := ReadToolsFileEach(strings.NewReader(mcp))
	if err != nil || len(fts) != 5 {
		t.Fatalf("%v %v", fts, err)
	}
	for i, want := range []string{`tool name "__get_all_user_list"`, "", `tool "ok" listed twice`, "inputSchema must be a JSON Schema object", ""} {
		if want == "" && fts[i].Refused != "" || !strings.Contains(fts[i].Refused, want) {
			t.Errorf("tool %d (%s): refused %q, want %q", i+1, fts[i].Spec.Name, fts[i].Refused, want)
		}
	}
	if _, err := ReadToolsFile(strings.NewReader(mcp)); err == nil || !strings.Contains(err.Error(), "spec 1: tool name") {
		t.Errorf("ReadToolsFile: %v", err)
	}
	specs := `[{"name": "x/_y", "doc": "", "params": []},
 {"name": "x/z", "doc": "", "params": [], "requird": true},
 {"name": "x/w", "doc": "",
  "params": 3},
 {"name": "x/v", "doc": "", "params": [{"name": "n", "type": "integer", "min": 2, "max": 1}]},
 {"name": "x/ok", "doc": "", "params": []}]`
	fts, err = ReadToolsFileEach(strings.NewReader(specs))
	if err != nil || len(fts) != 5 {
		t.Fatalf("%v %v", fts, err)
	}
	for i, want := range []string{`tool name "x/_y"`, `unknown field "requird"`, "line 4, column", "min 2 above max 1", ""} {
		if want == "" && fts[i].Refused != "" || !strings.Contains(fts[i].Refused, want) {
			t.Errorf("spec %d (%s): refused %q, want %q", i+1, fts[i].Spec.Name, fts[i].Refused, want)
		}
	}
	if fts[1].Spec.Name != "x/z" {
		t.Errorf("a spec refused on decoding is named %q", fts[1].Spec.Name)
	}
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }
