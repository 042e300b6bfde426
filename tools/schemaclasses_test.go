package tools

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/clawedge/clawedge/grammar"
)

// TestSchemaClassesOfRealTools: the classes that degraded real (BFCL) tool
// schemas are read exactly: free-form objects, property names the command
// language cannot write, defaults that contradict their schema (left out,
// with a warning), numeric enums, properties without a type, enums of
// booleans, arrays, objects and mixed values, enums with values of another
// type (those left out, with a warning; a property none of whose values is
// valid left out), keys required of an object without properties, arrays of
// arrays. Random walks of each one's constraint write calls valid against the
// schema (jsonschema-go) and against the shape's own schema.
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
		// Issue 36's classes.
		{"no type", `{"v": {"description": "any value"}, "w": {}, "x": true}`, ""},
		{"true enum", `{"b": {"type": "boolean", "enum": [true]}}`, ""},
		{"enum of arrays", `{"l": {"type": "array", "items": {"type": "string"}, "enum": [["a"], ["b", "c"], []]}}`, ""},
		{"enum of objects", `{"o": {"type": "object", "enum": [{"a": 1, "b": [true]}, {}]}}`, ""},
		{"untyped enum", `{"m": {"enum": ["dontcare", 1, 2.5, true, null, ["x"]]}}`, ""},
		{"string-only untyped enum", `{"m": {"enum": ["a", "b"]}}`, ""},
		{"bool enum of strings", `{"b": {"type": "boolean", "enum": ["True", "False", "dontcare"], "default": "dontcare"}, "c": {"type": "string"}}`,
			`property b left out: no value is valid: no value of its enum ("True", "False", "dontcare") is a valid boolean`},
		{"int enum of strings", `{"n": {"type": "integer", "enum": ["1", "dontcare"]}, "c": {"type": "string"}}`, `property n left out: no value is valid`},
		{"int enum partly strings", `{"n": {"type": "integer", "enum": [1, "2", 3, 1.5]}}`, `property n: enum values "2", 1.5 left out: not a valid integer`},
		{"string enum with a number", `{"s": {"type": "string", "enum": ["a", 1], "default": "a"}}`, `property s: enum values 1 left out: not a valid string`},
		{"array enum of strings", `{"l": {"type": "array", "items": {"type": "string"}, "enum": ["MT10", "MT11"], "default": []}, "c": {"type": "string"}}`,
			`property l left out: no value is valid: no value of its enum ("MT10", "MT11") is a valid array`},
		{"empty enum", `{"e": {"type": "string", "enum": []}, "c": {"type": "string"}}`, `property e left out: no value is valid: its enum is empty`},
		{"false schema", `{"f": false, "c": {"type": "string"}}`, `property f left out: no value is valid: its schema is false`},
		{"nested left out", `{"o": {"type": "object", "properties": {"b": {"type": "boolean", "enum": ["yes"]}, "c": {"type": "integer"}}}}`, `property o.b left out`},
		{"required keys", `{"d": {"type": "object", "description": "adults, children", "required": ["adults", "children"]}}`, ""},
		{"required beside properties", `{"d": {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x", "y"]}}`, ""},
		{"array of arrays", `{"table": {"type": "array", "items": {"type": "array", "items": {"type": "integer"}, "maxItems": 2}, "maxItems": 2}}`, ""},
		{"required of additionalProperties", `{"d": {"type": "object", "required": ["a"], "additionalProperties": {"type": "integer", "minimum": 0}}}`, ""},
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
		walkSchemaClass(t, c.name, ft)
	}
	// Still degraded: what a free-form reading would make invalid, and
	// enums no value of the type can match.
	for _, c := range []struct{ props, why string }{
		{`{"d": {"type": "object", "additionalProperties": {"type": "string"}}}`, "additionalProperties has a schema"},
		{`{"o": {"type": "object", "properties": {"n": {"type": "integer", "enum": ["1", "dontcare"]}}, "required": ["n"]}}`,
			`property o: property n is required, but no value is valid: no value of its enum ("1", "dontcare") is a valid integer`},
		{`{"o": {"type": "object", "properties": {"f": false}, "required": ["f"]}}`, "property f is required, but no value is valid: its schema is false"},
		{`{"d": {"type": "object", "required": ["a"], "additionalProperties": false}}`, `required property "a" is not described and additionalProperties is false: no object is valid`},
		{`{"d": {"type": "object", "required": ["a"], "additionalProperties": {"type": "string", "pattern": "x"}}}`, `required property "a" (additionalProperties): uses pattern`},
		{`{"d": {"type": "object", "required": ["a"], "additionalProperties": 3}}`, "additionalProperties is neither a schema nor a boolean"},
		{`{"v": {"minimum": 1}}`, "property v: has no type but uses minimum"},
		{`{"n": {"type": "integer", "enum": 3}}`, "property n: has an enum that is not a list"},
		{`{"o": {"type": "object", "properties": {"n": {"type": "string", "enum": ["abc"], "maxLength": 2}}, "required": ["n"]}}`,
			`property n is required, but no value is valid: no value of its enum ("abc") is a valid string`},
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

// TestReadToolsFileEachRefusesOneTool: a bad definition, a bad spec or a
// repeated name is refused alone; the others are read (an MCP name starting
// with "_" renamed, with a warning; a spec's is refused: specs are
// clawedge's own). ReadToolsFile still refuses the whole file.
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
	for i, want := range []string{"", "", `tool "ok" listed twice`, "inputSchema must be a JSON Schema object", ""} {
		if want == "" && fts[i].Refused != "" || !strings.Contains(fts[i].Refused, want) {
			t.Errorf("tool %d (%s): refused %q, want %q", i+1, fts[i].Spec.Name, fts[i].Refused, want)
		}
	}
	if fts[0].Spec.Name != "x__get_all_user_list" || len(fts[0].Warnings) != 1 ||
		fts[0].Warnings[0] != `named x__get_all_user_list: "__get_all_user_list" is not a name of the command language` {
		t.Errorf("__get_all_user_list read as %s, warnings %q", fts[0].Spec.Name, fts[0].Warnings)
	}
	if _, err := ReadToolsFile(strings.NewReader(mcp)); err == nil || !strings.Contains(err.Error(), `spec 3: tool "ok" listed twice`) {
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

// walkSchemaClass walks the json form's constraint of an exact tool 40 times
// and validates each call against the tool's schema (jsonschema-go), the
// schema of its shape, and the spec; every property the spec keeps must
// appear in some call.
func walkSchemaClass(t *testing.T, name string, ft FileTool) {
	t.Helper()
	c, err := grammar.Compile(grammar.Spec{Form: grammar.FormJSON, Mode: grammar.ModeCalls, Tools: []grammar.ToolSpec{ft.Spec}})
	if err != nil {
		t.Errorf("%s: %v", name, err)
		return
	}
	res, err := ResolveSchema(ft.Schema)
	if err != nil {
		t.Errorf("%s: jsonschema-go: %v", name, err)
		return
	}
	seen := map[string]bool{}
	rng := rand.New(rand.NewPCG(36, uint64(len(name))))
	for i := 0; i < 40; i++ {
		out, ok := randomOutput(c, rng, "", 1<<12)
		if !ok || len(out) >= 1<<12 {
			continue
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatalf("%s: %q is not a JSON object: %v", name, out, err)
		}
		if err := res.Validate(v); err != nil {
			t.Fatalf("%s: %q is not valid against the schema: %v", name, out, err)
		}
		if len(ft.Spec.Shape) > 0 {
			checkShapeSchema(t, ft.Spec, json.RawMessage(out))
		}
		if _, err := ft.Spec.ValidateJSON([]byte(out)); err != nil {
			t.Fatalf("%s: %q: %v", name, out, err)
		}
		for k := range v {
			seen[k] = true
		}
	}
	for _, p := range ft.Spec.Shaped() {
		if !seen[p.Name] {
			t.Errorf("%s: 40 walks never wrote %s", name, p.Name)
		}
	}
}

// TestPlainNames: an outside name becomes a name of the command language
// (the MCP client calls the tool by its own name): other characters become
// _, a name not starting with a letter gets the prefix x. A tools file says
// so in a warning; two names that map to one are the second refused.
func TestPlainNames(t *testing.T) {
	for in, want := range map[string]string{
		"get.weather": "get_weather", "__get_all_user_list": "x__get_all_user_list", "_a": "x_a",
		"3d": "x3d", "-x": "x-x", "ok": "ok", "a b": "a_b", "ü": "x__", "": "",
	} {
		got := PlainName(in)
		if got != want {
			t.Errorf("PlainName(%q) = %q, want %q", in, got, want)
		}
		if in != "" && !grammar.IsIdent(got) {
			t.Errorf("PlainName(%q) = %q is not a name of the command language", in, got)
		}
	}
	fts, err := ReadToolsFileEach(strings.NewReader(`[{"name": "_a", "inputSchema": {"type": "object"}}, {"name": "x_a", "inputSchema": {"type": "object"}},
 {"name": "srv/_b", "inputSchema": {"type": "object"}}]`))
	if err != nil || len(fts) != 3 {
		t.Fatalf("%v %v", fts, err)
	}
	if fts[0].Spec.Name != "x_a" || fts[0].Refused != "" || !strings.Contains(fts[1].Refused, `tool "x_a" listed twice`) {
		t.Errorf("_a and x_a: %+v", fts[:2])
	}
	if fts[2].Spec.Name != "srv/x_b" || fts[2].Refused != "" || len(fts[2].Warnings) != 1 || !strings.Contains(fts[2].Warnings[0], `"srv/_b"`) {
		t.Errorf("srv/_b: %+v", fts[2])
	}
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }
