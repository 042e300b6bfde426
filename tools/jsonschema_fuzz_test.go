package tools

import (
	"encoding/json"
	"testing"
)

// FuzzParamsFromSchema: any input schema a server sends is mapped or refused with a
// reason, never a panic; a mapped one is a spec the registry accepts.
func FuzzParamsFromSchema(f *testing.F) {
	f.Add(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"string","enum":["x","y"],"default":"x"}},"required":["a"]}`)
	f.Add(`{"type":"object","properties":{"where":{"type":"object","properties":{"lat":{"type":"number"}}}}}`)
	f.Add(`{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string","maxLength":8},"maxItems":3}}}`)
	f.Add(`{"type":"object","properties":{"n":{"type":"integer","minimum":5,"maximum":1,"default":2.5}}}`)
	f.Add(`{"anyOf":[{"type":"string"}]}`)
	f.Fuzz(func(t *testing.T, s string) {
		var schema map[string]any
		if json.Unmarshal([]byte(s), &schema) != nil {
			return
		}
		params, why := ParamsFromSchema(schema)
		if why != "" {
			return
		}
		if err := (Spec{Name: "fuzz/tool", Params: params}).Check(); err != nil {
			t.Fatalf("mapped schema %s gives a bad spec: %v", s, err)
		}
	})
}
