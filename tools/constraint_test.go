package tools

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawedge/clawedge/grammar"
)

func loadToolset(t testing.TB, name string) []grammar.ToolSpec {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "toolsets", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	specs, err := ReadSpecs(f)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return specs
}

// randomOutput walks the automaton: at each step it picks one of the distinct
// next states at random (then a byte leading there), and stops in an accepting
// state with a chance. Choosing among states rather than bytes makes closing
// a string as likely as continuing it, so outputs stay short.
func randomOutput(a grammar.Automaton, rng *rand.Rand, prefix string, limit int) (string, bool) {
	out := []byte(prefix)
	s := a.Start()
	for i := 0; i < len(prefix) && s != grammar.Dead; i++ {
		s = a.Next(s, prefix[i])
	}
	if s == grammar.Dead {
		return prefix, false
	}
	var targets []int32
	var bytesTo [][]byte
	for len(out) < limit {
		targets, bytesTo = targets[:0], bytesTo[:0]
		for b := 0; b < 256; b++ {
			n := a.Next(s, byte(b))
			if n == grammar.Dead {
				continue
			}
			k := 0
			for k < len(targets) && targets[k] != n {
				k++
			}
			if k == len(targets) {
				targets = append(targets, n)
				bytesTo = append(bytesTo, nil)
			}
			bytesTo[k] = append(bytesTo[k], byte(b))
		}
		if a.Accepting(s) && (len(targets) == 0 || rng.IntN(len(targets)+1) == 0) {
			return string(out), true
		}
		if len(targets) == 0 {
			return string(out), false // a dead end: must never happen
		}
		k := rng.IntN(len(targets))
		out = append(out, bytesTo[k][rng.IntN(len(bytesTo[k]))])
		s = targets[k]
	}
	return string(out), true // long enough; not a failure of the automaton
}

// checkOutput parses an output and validates every call against the specs.
func checkOutput(t *testing.T, spec grammar.Spec, specs []grammar.ToolSpec, out string) {
	t.Helper()
	parsed, err := grammar.ParseOutput(spec, out)
	if err != nil {
		t.Fatalf("%s/%s: %q does not parse: %v", spec.Form, spec.Mode, out, err)
	}
	if spec.Mode == grammar.ModeCalls && len(parsed.Calls) == 0 {
		t.Fatalf("%s/calls: %q has no call", spec.Form, out)
	}
	if spec.Mode == grammar.ModeText && len(parsed.Calls) > 0 {
		t.Fatalf("%s/text: %q has calls", spec.Form, out)
	}
	byName := map[string]grammar.ToolSpec{}
	for _, s := range specs {
		byName[s.Name] = s
	}
	if parsed.Command != nil {
		for _, st := range parsed.Command.Stages {
			for _, inv := range st.Calls {
				s, ok := byName[inv.Tool()]
				if !ok {
					t.Fatalf("%q calls %s, not allowed", out, inv.Tool())
				}
				if _, err := s.Validate(inv.Params); err != nil {
					t.Fatalf("%q: %v", out, err)
				}
			}
		}
	}
	for _, c := range parsed.Calls {
		s, ok := byName[c.Name]
		if !ok {
			t.Fatalf("%q calls %s, not allowed", out, c.Name)
		}
		if len(s.Shape) > 0 && spec.Form != grammar.FormCommand {
			// Nested arguments: valid against the shape's own schema
			// (jsonschema-go), then passed as the one JSON parameter.
			checkShapeSchema(t, s, c.Arguments)
		}
		if _, err := s.ValidateJSON(c.Arguments); err != nil {
			t.Fatalf("%s: %q: %v", spec.Form, out, err)
		}
	}
}

// TestConstraintOutputsValidate: every output the automaton accepts parses
// and validates, for each tool set, form and mode (1,000 seeded walks each).
func TestConstraintOutputsValidate(t *testing.T) {
	for _, set := range []string{"gpio10.json", "escapes.json", "ranges.json", "many24.json"} {
		specs := loadToolset(t, set)
		for _, form := range []grammar.Form{grammar.FormQwen, grammar.FormCommand, grammar.FormJSON} {
			for _, mode := range []grammar.Mode{grammar.ModeAny, grammar.ModeCalls, grammar.ModeText} {
				spec := grammar.Spec{Form: form, Mode: mode, Tools: specs}
				c, err := grammar.Compile(spec)
				if err != nil {
					t.Fatalf("%s %s/%s: %v", set, form, mode, err)
				}
				rng := rand.New(rand.NewPCG(1, uint64(len(set))))
				calls := 0
				trigger := map[grammar.Form]string{grammar.FormQwen: grammar.QwenTrigger, grammar.FormCommand: grammar.CommandTrigger, grammar.FormJSON: grammar.JSONTrigger}[form]
				for i := 0; i < 1000; i++ {
					// In mode any, every other walk is steered into a call:
					// a random walk rarely spells "<tool_call>" by itself.
					prefix := ""
					if mode == grammar.ModeAny && i%2 == 1 {
						prefix = "Sure. " + trigger
					}
					out, ok := randomOutput(c, rng, prefix, 1<<14)
					if !ok {
						t.Fatalf("%s %s/%s: dead end after %q", set, form, mode, out)
					}
					checkOutput(t, spec, specs, out)
					if strings.Contains(out, trigger) {
						calls++
					}
				}
				if mode != grammar.ModeText && calls == 0 {
					t.Errorf("%s %s/%s: 1,000 walks produced no call", set, form, mode)
				}
				t.Logf("%s %s/%s: %d states, %d/1000 with calls", set, form, mode, c.NumStates(), calls)
			}
		}
	}
}
