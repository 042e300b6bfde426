package grammar

import (
	"encoding/json"
	"strings"
	"testing"
)

func raws(vs ...string) []json.RawMessage {
	out := make([]json.RawMessage, len(vs))
	for i, v := range vs {
		out[i] = json.RawMessage(v)
	}
	return out
}

// TestAnyValueCompile: a parameter of type any is any JSON value within
// FreeDepth, in the automaton, the GBNF and a JSON Schema without a type.
func TestAnyValueCompile(t *testing.T) {
	tool := shaped("t/any", ArgSpec{Name: "v", Type: TypeAny, Required: true, Doc: "anything"})
	if err := tool.Check(); err != nil {
		t.Fatal(err)
	}
	c := mustCompile(t, Spec{Form: FormJSON, Mode: ModeCalls, Tools: []ToolSpec{tool}})
	for _, s := range []string{
		`{"v": 1}`, `{"v": -0.5}`, `{"v": "x"}`, `{"v": true}`, `{"v": false}`, `{"v": null}`,
		`{"v": []}`, `{"v": [1, "a", null]}`, `{"v": {"a": [1], "b": {"c": 2}}}`, `{"v": [{"a": 1}, [2]]}`,
	} {
		if !accepts(c, s) {
			t.Errorf("refused %s", s)
		}
	}
	for _, s := range []string{
		`{"v": }`, `{"v": tru}`, `{"v": [1,]}`, `{"v": 01}`,
		`{"v": [[[1]]]}`, `{"v": {"a": {"b": {"c": 1}}}}`, // deeper than FreeDepth
	} {
		if accepts(c, s) {
			t.Errorf("accepted %s", s)
		}
	}
	g, err := GBNF(Spec{Form: FormQwen, Mode: ModeAny, Tools: []ToolSpec{tool}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := checkLlamaLimits(g); err != nil {
		t.Errorf("GBNF beyond llama.cpp's limits: %v", err)
	}
	schema, err := ParamsSchema(tool)
	if err != nil || !strings.Contains(string(schema), `"v":{"description":"anything"}`) {
		t.Errorf("schema %s %v: want v without a type", schema, err)
	}
	bare := shaped("t/any", ArgSpec{Name: "v", Type: TypeAny})
	if schema := ToolSchema(bare, SchemaOptions{Closed: true}); !strings.Contains(string(schema), `"v":{}`) || !json.Valid(schema) {
		t.Errorf("schema %s: want v as {}", schema)
	}
	if _, ok := SchemaBlanks(Spec{Form: FormJSON, Mode: ModeCalls, Tools: []ToolSpec{tool}}); ok {
		t.Error("an any value's blanks are bounded")
	}
	// Only in a shape, and with nothing else constraining it.
	if err := (ToolSpec{Name: "t/x", Params: []ArgSpec{{Name: "v", Type: TypeAny}}}).Check(); err == nil || !strings.Contains(err.Error(), "only for a tool's shape") {
		t.Errorf("any in params: %v", err)
	}
	if err := (ArgSpec{Name: "v", Type: TypeAny, MaxLen: 3}).checkDecl(true); err == nil {
		t.Error("any with max_len passed its check")
	}
	if !Nested([]ArgSpec{{Name: "v", Type: TypeAny}}) {
		t.Error("any is not nested")
	}
	if _, err := Compile(Spec{Form: FormCommand, Mode: ModeCalls, Tools: []ToolSpec{{Name: "t/x", Params: []ArgSpec{{Name: "v", Type: TypeAny}}}}}); err == nil {
		t.Error("any compiled in the command form")
	}
}

// TestValuesCompile: literal values (an enum of booleans, arrays, objects or
// mixed values) are exactly those values, written as the JSON forms write
// arguments, and the schema's enum.
func TestValuesCompile(t *testing.T) {
	tool := shaped("t/lit",
		ArgSpec{Name: "b", Type: TypeBoolean, Values: raws("true")},
		ArgSpec{Name: "l", Type: TypeArray, Values: raws(`["a","b"]`, `[]`, `[1, {"y":2,"x":null}]`)},
		ArgSpec{Name: "m", Type: TypeAny, Values: raws(`"dontcare"`, `1`, `false`, `{"k": [true]}`)},
	)
	if err := tool.Check(); err != nil {
		t.Fatal(err)
	}
	c := mustCompile(t, Spec{Form: FormJSON, Mode: ModeCalls, Tools: []ToolSpec{tool}})
	for _, s := range []string{
		`{}`, `{"b": true}`, `{"l": ["a", "b"]}`, `{"l": []}`, `{"l": [1, {"x": null, "y": 2}]}`,
		`{"m": "dontcare"}`, `{"m": 1}`, `{"m": false}`, `{"m": {"k": [true]}}`,
		`{"b": true, "l": [], "m": 1}`,
	} {
		if !accepts(c, s) {
			t.Errorf("refused %s", s)
		}
	}
	for _, s := range []string{
		`{"b": false}`, `{"l": ["a"]}`, `{"l": ["b", "a"]}`, `{"l": ["a","b"]}`, `{"m": "x"}`, `{"m": true}`,
		`{"m": 2}`, `{"m": {"k": []}}`,
	} {
		if accepts(c, s) {
			t.Errorf("accepted %s", s)
		}
	}
	schema, err := ParamsSchema(tool)
	want := `"b":{"type":"boolean","enum":[true]},"l":{"type":"array","enum":[["a","b"],[],[1,{"y":2,"x":null}]]},"m":{"enum":["dontcare",1,false,{"k":[true]}]}`
	if err != nil || !strings.Contains(string(schema), want) {
		t.Errorf("schema %s %v\nwant %s", schema, err, want)
	}
	g, err := GBNF(Spec{Form: FormQwen, Mode: ModeCalls, Tools: []ToolSpec{tool}})
	if err != nil || !strings.Contains(g, `[1, {\"x\": null, \"y\": 2}]`) {
		t.Errorf("GBNF %v:\n%s", err, g)
	}
	if n, ok := SchemaBlanks(Spec{Form: FormJSON, Mode: ModeCalls, Tools: []ToolSpec{tool}}); !ok || n != ServerBlank*(2+3*4) {
		t.Errorf("blanks %d %v", n, ok)
	}
	for _, c := range []struct {
		p    ArgSpec
		want string
	}{
		{ArgSpec{Name: "v", Type: TypeBoolean, Values: raws(`"true"`)}, `value 1 ("\"true\"") is not of type boolean`},
		{ArgSpec{Name: "v", Type: TypeArray, Values: raws(`{}`)}, "is not of type array"},
		{ArgSpec{Name: "v", Type: TypeAny, Values: raws(`[1`)}, "value 1: \"[1\" is not one JSON value"},
		{ArgSpec{Name: "v", Type: TypeAny, Values: raws(`1 2`)}, "is not one JSON value"},
		{ArgSpec{Name: "v", Type: TypeString, Values: raws(`"a"`)}, "values are for booleans, arrays, objects and any values, not string"},
		{ArgSpec{Name: "v", Type: TypeArray, Items: &ArgSpec{Type: TypeString}, Values: raws(`["a"]`)}, "no other constraint"},
		{ArgSpec{Name: "v", Type: TypeBoolean, Values: raws(`true`), Default: true}, "no other constraint"},
	} {
		err := shaped("t/x", c.p).Check()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.p, err, c.want)
		}
	}
	if err := (ToolSpec{Name: "t/x", Params: []ArgSpec{{Name: "b", Type: TypeBoolean, Values: raws("true")}}}).Check(); err == nil || !strings.Contains(err.Error(), "values are only for a tool's shape") {
		t.Errorf("values in params: %v", err)
	}
}

// TestArraysOfArraysInAShape: an array of arrays (a table) is a shape's, its
// counts bounded at each level; params and the command form refuse it.
func TestArraysOfArraysInAShape(t *testing.T) {
	row := ArgSpec{Type: TypeArray, Items: &ArgSpec{Type: TypeInteger, Min: f64(0), Max: f64(9)}, MinItems: 2, MaxItems: 2}
	table := ArgSpec{Name: "table", Type: TypeArray, Items: &row, MaxItems: 2, Required: true}
	if !Nested([]ArgSpec{table}) {
		t.Fatal("an array of arrays is not nested")
	}
	tool := shaped("t/table", table)
	if err := tool.Check(); err != nil {
		t.Fatal(err)
	}
	c := mustCompile(t, Spec{Form: FormJSON, Mode: ModeCalls, Tools: []ToolSpec{tool}})
	for _, s := range []string{`{"table": []}`, `{"table": [[1, 2]]}`, `{"table": [[1, 2], [3, 4]]}`} {
		if !accepts(c, s) {
			t.Errorf("refused %s", s)
		}
	}
	for _, s := range []string{`{"table": [[1]]}`, `{"table": [[1, 2], [3, 4], [5, 6]]}`, `{"table": [1, 2]}`, `{"table": [[10, 2]]}`} {
		if accepts(c, s) {
			t.Errorf("accepted %s", s)
		}
	}
	schema, err := ParamsSchema(tool)
	if err != nil || !strings.Contains(string(schema), `"items":{"type":"array","items":{"type":"integer","minimum":0,"maximum":9},"minItems":2,"maxItems":2},"maxItems":2`) {
		t.Errorf("schema %s %v", schema, err)
	}
	if err := (ToolSpec{Name: "t/x", Params: []ArgSpec{table}}).Check(); err == nil || !strings.Contains(err.Error(), "arrays of arrays are only for a tool's shape") {
		t.Errorf("array of arrays in params: %v", err)
	}
}
