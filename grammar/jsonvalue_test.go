package grammar

import (
	"encoding/json"
	"strings"
	"testing"
)

// shaped is a tool with its own schema whose calls are constrained to shape.
func shaped(name string, shape ...ArgSpec) ToolSpec {
	return ToolSpec{Name: name, InputSchema: []byte(`{}`), Params: []ArgSpec{{Name: JSONParam, Type: TypeString, Required: true}}, Shape: shape}
}

// TestFreeObjectCompile: a free-form object (a dict) is any JSON object within
// FreeDepth and FreeMembers, in the automaton, the GBNF (within llama.cpp's
// limits) and an open JSON Schema.
func TestFreeObjectCompile(t *testing.T) {
	tool := shaped("t/dict", ArgSpec{Name: "d", Type: TypeObject, AnyProps: true, Required: true})
	if err := tool.Check(); err != nil {
		t.Fatal(err)
	}
	spec := Spec{Form: FormJSON, Mode: ModeCalls, Tools: []ToolSpec{tool}}
	c := mustCompile(t, spec)
	for _, s := range []string{
		`{"d": {}}`,
		`{"d": {"a": 1}}`,
		`{"d": {"a": -0.5, "b": "x\n", "c": true, "d": false, "e": null}}`,
		`{"d": {"a": [1, "x", null], "b": {"c": 1, "d": "e"}, "c": [], "d": {}}}`,
		`{"d": {"1": 1, "2": 2, "3": 3, "4": 4, "5": 5, "6": 6, "7": 7, "8": 8}}`,
		`{"d": {"_from": "ü\u0001", "": 12345678901234567890}}`,
	} {
		if !accepts(c, s) {
			t.Errorf("refused %s", s)
		}
		var v any
		if json.Unmarshal([]byte(s), &v) != nil {
			t.Errorf("accepted %s is not JSON", s)
		}
	}
	for _, s := range []string{
		`{"d": []}`, `{"d": "x"}`, `{"d": {"a": 1,}}`, `{"d": {a: 1}}`, `{"d": {"a": 01}}`, `{"d": {"a": 1e5}}`,
		`{"d": {"a": {"b": {"c": 1}}}}`, `{"d": {"b": {"c": []}}}`, // deeper than FreeDepth
		`{"d": {"a": [[1]]}}`,
		`{"d": {"1": 1, "2": 2, "3": 3, "4": 4, "5": 5, "6": 6, "7": 7, "8": 8, "9": 9}}`, // more than FreeMembers
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
		t.Errorf("GBNF beyond llama.cpp's limits: %v\n%s", err, g)
	}
	schema, err := ParamsSchema(tool)
	if err != nil || !strings.Contains(string(schema), `"d":{"type":"object"}`) {
		t.Errorf("schema %s %v: want the dict open", schema, err)
	}
	if err := (ArgSpec{Name: "d", Type: TypeObject, AnyProps: true, Props: []ArgSpec{{Name: "a", Type: TypeString}}}).checkDecl(true); err == nil {
		t.Error("a free-form object with props passed its check")
	}
	if err := (ArgSpec{Name: "d", Type: TypeString, AnyProps: true}).checkDecl(true); err == nil {
		t.Error("any_props on a string passed its check")
	}
}

// TestAnyPropertyNameCompile: a property may have any name JSON allows; in a
// shape it is quoted and escaped the same in the automaton, the GBNF and the
// JSON Schema. The command language cannot write such names, so they are a
// shape's (NeedsShape), never flat params.
func TestAnyPropertyNameCompile(t *testing.T) {
	names := []string{"_from", "_class", "max-count", "a b", `q"uote`, `back\slash`, "new\nline", "ünïcode", "$ref", "1st"}
	var shape []ArgSpec
	for _, n := range names {
		shape = append(shape, ArgSpec{Name: n, Type: TypeInteger, Min: f64(0), Max: f64(9)})
	}
	shape[0].Required = true
	if !NeedsShape(shape) || NeedsShape([]ArgSpec{{Name: "plain", Type: TypeString}}) {
		t.Error("NeedsShape")
	}
	tool := shaped("t/names", shape...)
	if err := tool.Check(); err != nil {
		t.Fatal(err)
	}
	c := mustCompile(t, Spec{Form: FormJSON, Mode: ModeCalls, Tools: []ToolSpec{tool}})
	var all []string
	for _, n := range names {
		k, _ := json.Marshal(n)
		all = append(all, string(k)+": 1")
	}
	for _, s := range []string{`{"_from": 1}`, "{" + strings.Join(all, ", ") + "}", `{"_from": 1, "q\"uote": 2, "new\nline": 3}`} {
		if !accepts(c, s) {
			t.Errorf("refused %s", s)
		}
	}
	for _, s := range []string{`{"from": 1}`, `{"_from": 1, "q"uote": 2}`, "{\"_from\": 1, \"new\nline\": 3}"} {
		if accepts(c, s) {
			t.Errorf("accepted %s", s)
		}
	}
	g, err := GBNF(Spec{Form: FormQwen, Mode: ModeCalls, Tools: []ToolSpec{tool}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(g, `"\"q\\\"uote\": "`) || !strings.Contains(g, `"\"new\\nline\": "`) {
		t.Errorf("GBNF keys not escaped:\n%s", g)
	}
	if _, err := checkLlamaLimits(g); err != nil {
		t.Error(err)
	}
	schema, err := ParamsSchema(tool)
	var parsed struct{ Properties map[string]any }
	if err != nil || json.Unmarshal(schema, &parsed) != nil || len(parsed.Properties) != len(names) {
		t.Errorf("schema %s %v", schema, err)
	}
	for _, n := range names {
		if _, ok := parsed.Properties[n]; !ok {
			t.Errorf("schema lost %q", n)
		}
	}
	// A flat tool with such a name is a shape's: the command form takes
	// the one json parameter.
	if err := (ToolSpec{Name: "t/flat", InputSchema: []byte(`{}`), Params: []ArgSpec{{Name: JSONParam, Type: TypeString}}, Shape: []ArgSpec{{Name: "plain", Type: TypeString}}}).Check(); err == nil {
		t.Error("a flat shape of plain names passed its check")
	}
	mustCompile(t, Spec{Form: FormCommand, Mode: ModeCalls, Tools: []ToolSpec{tool}})
}
