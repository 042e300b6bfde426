package tools

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/clawedge/clawedge/grammar"
)

// FuzzConstraintFromSpecs compiles random tools files in every form: the
// compiler never panics, and whatever compiles only emits calls that parse and
// validate.
func FuzzConstraintFromSpecs(f *testing.F) {
	f.Add([]byte(`[{"name":"gpio/write","doc":"","params":[{"name":"pin","type":"string","required":true,"enum":["led"]},{"name":"level","type":"boolean","required":true}]}]`), uint64(1))
	f.Add([]byte(`[{"name":"a","doc":"","params":[{"name":"x","type":"number","min":-2.5,"max":0.125},{"name":"y","type":"array","items":{"type":"string","max_len":2},"min_items":1,"max_items":2}]}]`), uint64(2))
	f.Add([]byte(`[{"name":"b/c","doc":"","params":[{"name":"n","type":"integer","min":-9,"max":12,"required":true},{"name":"s","type":"string","max_len":3}]},{"name":"d","doc":"","params":[]}]`), uint64(3))
	// Nested: a tool with its own schema and a shape (arrays of objects, a union).
	f.Add([]byte(`[{"name":"m/e","doc":"","input_schema":{"type":"object"},"params":[{"name":"json","type":"string","required":true}],"shape":[{"name":"e","type":"array","required":true,"max_items":2,"items":{"type":"object","props":[{"name":"a","type":"string","required":true,"max_len":3},{"name":"u","type":"any_of","any_of":[{"type":"boolean"},{"type":"integer","min":0,"max":9}]}]}},{"name":"o","type":"object","props":[{"name":"n","type":"number","min":-1,"max":1}]}]},{"name":"p","doc":"","params":[{"name":"x","type":"boolean"}]}]`), uint64(4))
	f.Fuzz(func(t *testing.T, file []byte, seed uint64) {
		specs, err := ReadSpecs(bytes.NewReader(file))
		if err != nil || len(specs) == 0 {
			return
		}
		rng := rand.New(rand.NewPCG(seed, 0))
		for _, form := range []grammar.Form{grammar.FormQwen, grammar.FormCommand, grammar.FormJSON} {
			spec := grammar.Spec{Form: form, Mode: grammar.ModeCalls, Tools: specs}
			if _, err := grammar.GBNF(spec); err != nil {
				continue // refused with an error: fine
			}
			c, err := grammar.Compile(spec)
			if err != nil {
				continue
			}
			for i := 0; i < 5; i++ {
				out, ok := randomOutput(c, rng, "", 1<<12)
				if !ok {
					t.Fatalf("%s: dead end after %q", form, out)
				}
				if len(out) < 1<<12 {
					checkOutput(t, spec, specs, out)
				}
			}
		}
	})
}
