package tools

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/clawedge/clawedge/grammar"
)

// FuzzParamsFromSchema: any input schema a server sends is mapped or refused with a
// reason, never a panic; a mapped one is a spec the registry accepts, and what
// its constraint writes is valid against the schema (checked by jsonschema-go,
// an independent validator).
func FuzzParamsFromSchema(f *testing.F) {
	f.Add(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"string","enum":["x","y"],"default":"x"}},"required":["a"]}`)
	f.Add(`{"type":"object","properties":{"where":{"type":"object","properties":{"lat":{"type":"number"}}}}}`)
	f.Add(`{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string","maxLength":8},"maxItems":3}}}`)
	f.Add(`{"type":"object","properties":{"n":{"type":"integer","minimum":5,"maximum":1,"default":2.5}}}`)
	f.Add(`{"anyOf":[{"type":"string"}]}`)
	f.Add(`{"type":"object","properties":{"u":{"type":["boolean","string","null"],"maxLength":2},"v":{"anyOf":[{"type":"integer","minimum":-3},{"type":"string","enum":["all"]}]}},"required":["u"]}`)
	f.Add(`{"type":"object","properties":{"e":{"type":"array","maxItems":2,"items":{"type":"object","required":["a"],"additionalProperties":false,"properties":{"a":{"type":"string","maxLength":3},"b":{"type":"object","properties":{"c":{"type":"boolean"}}}}}}},"required":["e"]}`)
	f.Add(`{"type":"object","properties":{"o":{"type":"object","properties":{},"minProperties":1}}}`)
	f.Fuzz(func(t *testing.T, s string) {
		var schema map[string]any
		if json.Unmarshal([]byte(s), &schema) != nil {
			return
		}
		ft := SpecFromSchema("fuzz/tool", "", schema)
		if err := ft.Spec.Check(); err != nil {
			t.Fatalf("schema %s gives a bad spec: %v", s, err)
		}
		if ft.Degraded != "" {
			return
		}
		spec := grammar.Spec{Form: grammar.FormJSON, Mode: grammar.ModeCalls, Tools: []grammar.ToolSpec{ft.Spec}}
		c, err := grammar.Compile(spec)
		if err != nil {
			t.Fatalf("schema %s is exact but does not compile: %v", s, err)
		}
		var js jsonschema.Schema
		if json.Unmarshal([]byte(s), &js) != nil {
			return // not a schema jsonschema-go reads: nothing to compare with
		}
		// jsonschema-go decodes keywords as encoding/json does, without
		// regard to case ("mAXLength" is maxLength to it, nothing to JSON
		// Schema): compare only where it read what was written. A keyword
		// in another case can also survive the round trip (it keeps the key
		// among its extra keywords as well: {"anyof": []} is read as an
		// anyOf nothing satisfies), so such schemas are skipped outright.
		if hasKeywordInOtherCase(schema) {
			return
		}
		var back map[string]any
		if b, err := json.Marshal(&js); err != nil || json.Unmarshal(b, &back) != nil || !reflect.DeepEqual(back, schema) {
			return
		}
		res, err := js.Resolve(nil)
		if err != nil {
			return
		}
		rng := rand.New(rand.NewPCG(uint64(len(s)), 0))
		for i := 0; i < 3; i++ {
			checkAgainstSchema(t, c, res, rng, ft.Spec)
		}
	})
}

// schemaKeywords are the keywords jsonschema-go decodes, by their JSON names
// (the three it decodes by hand are not tagged).
var schemaKeywords = func() map[string]bool {
	names := map[string]bool{"type": true, "items": true, "dependencies": true}
	t := reflect.TypeFor[jsonschema.Schema]()
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
			names[name] = true
		}
	}
	return names
}()

// hasKeywordInOtherCase reports whether any object in v has a key that is a
// keyword but for its case ("anyof", "MaxLength").
func hasKeywordInOtherCase(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		for k, sub := range v {
			if !schemaKeywords[k] {
				for kw := range schemaKeywords {
					if strings.EqualFold(k, kw) {
						return true
					}
				}
			}
			if hasKeywordInOtherCase(sub) {
				return true
			}
		}
	case []any:
		for _, sub := range v {
			if hasKeywordInOtherCase(sub) {
				return true
			}
		}
	}
	return false
}

// checkAgainstSchema walks the constraint of one tool in the json form (its
// arguments object) and checks the output against the tool's JSON Schema and,
// as the agent passes it, against the spec.
func checkAgainstSchema(t *testing.T, c *grammar.Constraint, res *jsonschema.Resolved, rng *rand.Rand, spec grammar.ToolSpec) {
	t.Helper()
	out, ok := randomOutput(c, rng, "", 1<<12)
	if !ok {
		t.Fatalf("%s: dead end after %q", spec.Name, out)
	}
	if len(out) >= 1<<12 {
		return // cut short: not a whole output
	}
	var v any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("%s: %q is not JSON: %v", spec.Name, out, err)
	}
	if err := res.Validate(v); err != nil {
		t.Fatalf("%s: %q is not valid against the schema: %v", spec.Name, out, err)
	}
	if _, err := spec.ValidateJSON([]byte(out)); err != nil {
		t.Fatalf("%s: %q: %v", spec.Name, out, err)
	}
}

// checkShapeSchema checks nested arguments against the JSON Schema of the
// spec's shape, with jsonschema-go.
func checkShapeSchema(t *testing.T, spec grammar.ToolSpec, args json.RawMessage) {
	t.Helper()
	var js jsonschema.Schema
	schema := grammar.ToolSchema(spec, grammar.SchemaOptions{Closed: true})
	if err := json.Unmarshal(schema, &js); err != nil {
		t.Fatalf("%s: schema %s: %v", spec.Name, schema, err)
	}
	res, err := js.Resolve(nil)
	if err != nil {
		t.Fatalf("%s: schema %s: %v", spec.Name, schema, err)
	}
	var v any
	if err := json.Unmarshal(args, &v); err != nil {
		t.Fatalf("%s: %s: %v", spec.Name, args, err)
	}
	if err := res.Validate(v); err != nil {
		t.Fatalf("%s: %s is not valid against %s: %v", spec.Name, args, schema, err)
	}
}
