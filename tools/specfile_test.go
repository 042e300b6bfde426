package tools

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/clawedge/clawedge/grammar"
)

func TestReadSpecsRoundTrip(t *testing.T) {
	in := []grammar.ToolSpec{writeSpec, {Name: "serial/read", Doc: "read", Params: []grammar.ArgSpec{
		{Name: "timeout_ms", Type: grammar.TypeInteger, Min: Float(1), Max: Float(60000), Default: 1000},
		{Name: "data", Type: grammar.TypeArray, MinItems: 1, MaxItems: 4, Items: &grammar.ArgSpec{Type: grammar.TypeString, MaxLen: 8}},
	}}}
	data, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := ReadSpecs(strings.NewReader(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	again, _ := json.Marshal(out)
	if string(again) != string(data) {
		t.Errorf("round trip changed the specs:\n%s\n%s", data, again)
	}
	// A default read from JSON is a float64 and still validates as an integer.
	a, err := out[1].Validate(nil)
	if err != nil || a.Int("timeout_ms") != 1000 {
		t.Errorf("default after JSON: %d, %v", a.Int("timeout_ms"), err)
	}
}

func TestReadSpecsErrors(t *testing.T) {
	for in, want := range map[string]string{
		`[{"name":"gpio/write","doc":"x","params":[{"name":"pin","type":"string","requird":true}]}]`: `unknown field "requird"`,
		"[\n  {\"name\": \"gpio/write\",\n   \"doc\": 5}]":                                           "line 3, column 11: doc must be string, found number",
		"[{\"name\":\"a/b\",,}]":                                  "line 1, column 16",
		`[{"name":"a/b","params":[{"name":"x","type":"float"}]}]`: `spec 1: tool a/b: parameter "x": unknown type "float"`,
		`[{"name":"a/b"},{"name":"a/b"}]`:                         `spec 2: tool "a/b" listed twice`,
		`[{"name":"a b"}]`:                                        `spec 1: tool name "a b"`,
		`[] []`:                                                   "more than one JSON value",
		`{"name":"a/b"}`:                                          "the file must be an array of tool specs, found object",
		``:                                                        "EOF",
	} {
		_, err := ReadSpecs(strings.NewReader(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", in, err, want)
		}
	}
}

func FuzzReadSpecs(f *testing.F) {
	data, _ := json.Marshal([]grammar.ToolSpec{writeSpec})
	f.Add(string(data))
	f.Add(`[{"name":"a/b","params":[{"name":"x","type":"array","items":{"type":"integer","min":0},"max_items":3}]}]`)
	f.Add(`[{"name":"a/b","params":[{"name":"x","type":"integer","default":1e400}]}]`)
	f.Fuzz(func(t *testing.T, in string) {
		specs, err := ReadSpecs(strings.NewReader(in))
		if err != nil {
			return
		}
		// Whatever was accepted must survive a round trip and be usable.
		data, err := json.Marshal(specs)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ReadSpecs(strings.NewReader(string(data))); err != nil {
			t.Fatalf("re-reading accepted specs: %v\n%s", err, data)
		}
		for _, s := range specs {
			s.Validate(nil)
		}
	})
}
