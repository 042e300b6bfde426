package tools

import (
	"bytes"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/clawedge/clawedge/grammar"
)

// TestCorpusOutputsValidAgainstSchemas: on the corpus of real MCP reference
// server schemas (scripts/bench/mcp-corpus.json), every exact tool's
// constraint writes only arguments its own JSON Schema accepts, checked by
// jsonschema-go (1,000 seeded walks for each nested tool, 100 for each flat
// one), and the nested ones are all exact.
func TestCorpusOutputsValidAgainstSchemas(t *testing.T) {
	data, err := os.ReadFile("../scripts/bench/mcp-corpus.json")
	if err != nil {
		t.Fatal(err)
	}
	fts, err := ReadToolsFile(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	nested := 0
	for _, ft := range fts {
		if ft.Degraded != "" {
			t.Errorf("%s: degraded: %s", ft.Spec.Name, ft.Degraded)
			continue
		}
		c, err := grammar.Compile(grammar.Spec{Form: grammar.FormJSON, Mode: grammar.ModeCalls, Tools: []grammar.ToolSpec{ft.Spec}})
		if err != nil {
			t.Fatalf("%s: %v", ft.Spec.Name, err)
		}
		res, err := ResolveSchema(ft.Schema)
		if err != nil {
			t.Fatalf("%s: %v", ft.Spec.Name, err)
		}
		walks := 100
		if len(ft.Spec.Shape) > 0 {
			walks = 1000
			nested++
		}
		rng := rand.New(rand.NewPCG(7, uint64(len(ft.Spec.Name))))
		for i := 0; i < walks; i++ {
			checkAgainstSchema(t, c, res, rng, ft.Spec)
		}
	}
	if nested < 7 {
		t.Errorf("%d nested tools in the corpus, want the 7 (arrays of objects, a union)", nested)
	}
}

// TestNestedConstraintOutputsValidate: nested tools beside flat ones, in the
// forms that write objects and each mode that calls: every output the
// automaton accepts parses, its nested arguments are valid against the
// shape's schema, and the command form refuses the nested tool by name.
func TestNestedConstraintOutputsValidate(t *testing.T) {
	specs := loadToolset(t, "nested.json")
	for _, form := range []grammar.Form{grammar.FormQwen, grammar.FormJSON} {
		for _, mode := range []grammar.Mode{grammar.ModeAny, grammar.ModeCalls} {
			spec := grammar.Spec{Form: form, Mode: mode, Tools: specs}
			c, err := grammar.Compile(spec)
			if err != nil {
				t.Fatalf("%s/%s: %v", form, mode, err)
			}
			rng := rand.New(rand.NewPCG(3, 4))
			trigger := map[grammar.Form]string{grammar.FormQwen: grammar.QwenTrigger, grammar.FormJSON: grammar.JSONTrigger}[form]
			for i := 0; i < 300; i++ {
				out, ok := randomOutput(c, rng, trigger, 1<<14)
				if !ok {
					t.Fatalf("%s/%s: dead end after %q", form, mode, out)
				}
				if len(out) < 1<<14 {
					checkOutput(t, spec, specs, out)
				}
			}
		}
	}
	// The command language cannot write objects: the shapes are refused by
	// name, and in that form the nested tools take their one JSON parameter.
	var shapes []grammar.ToolSpec
	for _, s := range specs {
		shapes = append(shapes, grammar.ToolSpec{Name: s.Name, Params: s.Shaped()})
	}
	_, err := grammar.Compile(grammar.Spec{Form: grammar.FormCommand, Mode: grammar.ModeCalls, Tools: shapes})
	if err == nil || !strings.Contains(err.Error(), "command language") {
		t.Errorf("command form: %v", err)
	}
	spec := grammar.Spec{Form: grammar.FormCommand, Mode: grammar.ModeCalls, Tools: specs}
	c, err := grammar.Compile(spec)
	if err != nil {
		t.Fatalf("command form with the json parameter: %v", err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 100; i++ {
		if out, ok := randomOutput(c, rng, "", 1<<12); !ok {
			t.Fatalf("command: dead end after %q", out)
		} else if len(out) < 1<<12 {
			checkOutput(t, spec, specs, out)
		}
	}
}
