//go:build llamacpp

package main

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clawedge/clawedge/cmd/clawedge-llm/internal/tokvocab"
	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/localmodel/gguf"
	"github.com/clawedge/clawedge/localmodel/llama"
	"github.com/clawedge/clawedge/localmodel/synth"
	"github.com/clawedge/clawedge/localmodel/wire"
)

// qwenVocab is the real Qwen2 vocabulary prepared for masking, in process.
func qwenVocab(t testing.TB) (*llama.Model, *grammar.Vocab) {
	t.Helper()
	llama.Init("", false)
	m, err := llama.LoadModel(vocabFile, llama.LoadOptions{VocabOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	start := time.Now()
	v, err := tokvocab.Build(m)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Qwen2 vocabulary: %d tokens, %d trie nodes, %.1f MiB, built in %v",
		v.Len(), v.Nodes(), float64(v.MemoryBytes())/(1<<20), time.Since(start).Round(time.Millisecond))
	return m, v
}

func tokenOf(t *testing.T, m *llama.Model, text string) int32 {
	t.Helper()
	toks, err := m.Tokenize(text, false, true)
	if err != nil || len(toks) != 1 {
		t.Fatalf("%q is tokens %v (%v), want one", text, toks, err)
	}
	return toks[0]
}

func TestQwenVocab(t *testing.T) {
	m, v := qwenVocab(t)
	if v.Len() != m.VocabSize() {
		t.Fatalf("%d tokens prepared of %d", v.Len(), m.VocabSize())
	}
	for _, tc := range []struct {
		text string
		kind grammar.TokenKind
	}{
		{"<|im_start|>", grammar.TokenControl},
		{"<|im_end|>", grammar.TokenEOG},
		{"<|endoftext|>", grammar.TokenEOG},
		{"Hello", grammar.TokenNormal},
		{" {\"", grammar.TokenNormal},
	} {
		tok := tokenOf(t, m, tc.text)
		if k := v.Kind(tok); k != tc.kind {
			t.Errorf("%q (%d) is %s, want %s", tc.text, tok, k, tc.kind)
		}
		if tc.kind == grammar.TokenNormal && string(v.Bytes(tok)) != tc.text {
			t.Errorf("%q (%d) has bytes %q", tc.text, tok, v.Bytes(tok))
		}
	}
	// The filler entries past the real vocabulary are never text.
	if last := int32(v.Len() - 1); v.Kind(last) != grammar.TokenControl {
		t.Errorf("last token %d %q is %s, want control", last, v.Bytes(last), v.Kind(last))
	}
	// A compiled constraint's sets agree with stepping every token of the
	// vocabulary through the automaton, in the states of one valid output.
	c, err := grammar.Compile(relaySpec(grammar.FormJSON, grammar.ModeCalls))
	if err != nil {
		t.Fatal(err)
	}
	masks := grammar.NewMaskCache(c, v)
	s := c.Start()
	for i, b := range []byte(`{"pin": "relay", "on": true}`) {
		if i%5 == 0 {
			checkState(t, c, v, masks, s)
		}
		if s = c.Next(s, b); s == grammar.Dead {
			t.Fatalf("the sample output dies at byte %d", i)
		}
	}
	checkState(t, c, v, masks, s)
}

// checkState compares the set of state s with each token's bytes stepped.
func checkState(t *testing.T, a grammar.Automaton, v *grammar.Vocab, masks *grammar.MaskCache, s int32) {
	t.Helper()
	set := masks.Allowed(s)
	n := 0
	for tok := range int32(v.Len()) {
		next := grammar.Advance(a, v, s, tok)
		if set.Allowed(tok) != (next != grammar.Dead) {
			t.Fatalf("state %d token %d %q (%s): allowed %v, stepping gives %d", s, tok, v.Bytes(tok), v.Kind(tok), set.Allowed(tok), next)
		}
		if next != grammar.Dead {
			n++
		}
	}
	if n != set.Len() || n == 0 {
		t.Fatalf("state %d: set of %d, %d tokens continue", s, set.Len(), n)
	}
}

// relaySpec: one tool with a finite language (an enum and a boolean), so a
// constrained generation must end.
func relaySpec(form grammar.Form, mode grammar.Mode) grammar.Spec {
	return grammar.Spec{Form: form, Mode: mode, Tools: []grammar.ToolSpec{{
		Name: "gpio/write",
		Params: []grammar.ArgSpec{
			{Name: "pin", Type: "string", Required: true, Enum: []string{"led", "relay", "fan"}},
			{Name: "on", Type: "boolean", Required: true},
		},
	}}}
}

// accepted steps the output through the spec's automaton: whether it stays
// alive, and whether it may end there.
func accepted(t *testing.T, spec grammar.Spec, out string) (alive, accepting bool) {
	t.Helper()
	c, err := grammar.Compile(spec)
	if err != nil {
		t.Fatal(err)
	}
	s := c.Start()
	for i := range len(out) {
		if s = c.Next(s, out[i]); s == grammar.Dead {
			return false, false
		}
	}
	return true, c.Accepting(s)
}

func TestConstrainedGeneration(t *testing.T) {
	c := loaded(t, 512)
	spec := relaySpec(grammar.FormJSON, grammar.ModeCalls)
	for i, s := range []wire.Sampling{{}, {Temperature: 1, Seed: 3}, {Temperature: 1.5, TopK: 40, Seed: 9}} {
		r := generate(t, c, wire.Generate{Prompt: chat, MaxTokens: 100, Sampling: s, Constraint: &spec})
		out := r.Text()
		t.Logf("sampling %+v: %q (%s, %d tokens, %d sets computed, masks %.2f ms)", s, out, r.Done.Reason, r.Done.Generated, r.Done.MaskStates, r.Done.MaskMS)
		alive, ok := accepted(t, spec, out)
		if r.Done.Reason != "eog" || !alive || !ok || r.Done.Incomplete {
			t.Errorf("sampling %+v: %q ended by %s (incomplete %v): alive %v, accepted %v", s, out, r.Done.Reason, r.Done.Incomplete, alive, ok)
		}
		// The first request computes sets; the same states later are cached.
		if i == 0 && r.Done.MaskStates == 0 {
			t.Errorf("first constrained generation computed no sets: %+v", r.Done)
		}
		if i == 0 {
			again := generate(t, c, wire.Generate{Prompt: chat, MaxTokens: 100, Constraint: &spec})
			if again.Text() != out || again.Done.MaskStates != 0 {
				t.Errorf("same request again: %q with %d new sets, want %q with 0", again.Text(), again.Done.MaskStates, out)
			}
		}
	}
	// Every form: the calls end (at most 4 of them) with an output the
	// constraint accepts.
	for _, form := range []grammar.Form{grammar.FormQwen, grammar.FormCommand} {
		spec := relaySpec(form, grammar.ModeCalls)
		r := generate(t, c, wire.Generate{Prompt: chat, MaxTokens: 300, Sampling: wire.Sampling{Temperature: 0.8, Seed: 11}, Constraint: &spec})
		t.Logf("%s: %q (%s, %d tokens)", form, r.Text(), r.Done.Reason, r.Done.Generated)
		if alive, ok := accepted(t, spec, r.Text()); r.Done.Reason != "eog" || !alive || !ok || r.Done.Incomplete {
			t.Errorf("%s: %q ended by %s: alive %v, accepted %v", form, r.Text(), r.Done.Reason, alive, ok)
		}
	}
	// The same model unconstrained writes something else entirely.
	free := generate(t, c, wire.Generate{Prompt: chat, MaxTokens: 20})
	if alive, _ := accepted(t, spec, free.Text()); alive {
		t.Logf("note: the unconstrained output %q happens to fit the constraint", free.Text())
	}
}

// TestConstrainedLimits: max_tokens and stop strings still end a constrained
// generation; the output is then a valid prefix, reported incomplete.
func TestConstrainedLimits(t *testing.T) {
	c := loaded(t, 512)
	spec := relaySpec(grammar.FormQwen, grammar.ModeCalls)
	r := generate(t, c, wire.Generate{Prompt: chat, MaxTokens: 3, Constraint: &spec})
	alive, ok := accepted(t, spec, r.Text())
	if r.Done.Reason != "max_tokens" || r.Done.Generated != 3 || !alive || ok || !r.Done.Incomplete {
		t.Errorf("max_tokens 3: %q, %+v; alive %v accepting %v", r.Text(), r.Done, alive, ok)
	}
	if !strings.HasPrefix("<tool_call>\n", r.Text()) && !strings.HasPrefix(r.Text(), "<tool_call>") {
		t.Errorf("qwen calls output starts %q", r.Text())
	}
	r = generate(t, c, wire.Generate{Prompt: chat, MaxTokens: 100, Stop: []string{`"pin"`}, Constraint: &spec})
	if r.Done.Reason != "stop" || strings.Contains(r.Text(), `"pin"`) || !r.Done.Incomplete {
		t.Errorf("stop at \"pin\": %q, %+v", r.Text(), r.Done)
	}
	// Mode any: free text may come first; whatever comes is a valid prefix.
	anySpec := relaySpec(grammar.FormQwen, grammar.ModeAny)
	r = generate(t, c, wire.Generate{Prompt: chat, MaxTokens: 30, Sampling: wire.Sampling{Temperature: 1, Seed: 5}, Constraint: &anySpec})
	t.Logf("mode any: %q", r.Text())
	if alive, ok := accepted(t, anySpec, r.Text()); !alive || ok == r.Done.Incomplete {
		t.Errorf("mode any: %q, %+v; alive %v accepting %v", r.Text(), r.Done, alive, ok)
	}
}

func TestConstraintErrors(t *testing.T) {
	c := loaded(t, 512)
	for _, tc := range []struct {
		spec grammar.Spec
		want string
	}{
		{grammar.Spec{Form: "xml", Mode: grammar.ModeCalls}, "form"},
		{grammar.Spec{Form: grammar.FormJSON, Mode: grammar.ModeCalls}, "no tools"},
		{grammar.Spec{Form: grammar.FormJSON, Mode: grammar.ModeCalls, Tools: []grammar.ToolSpec{{Name: "x", Params: []grammar.ArgSpec{{Name: "a", Type: "color"}}}}}, "color"},
	} {
		_, err := c.Generate(wire.Generate{Prompt: chat, MaxTokens: 5, Constraint: &tc.spec}, nil)
		if err == nil || !strings.Contains(err.Error(), "constraint") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("spec %+v: %v, want a constraint error naming %q", tc.spec, err, tc.want)
		}
	}
	generate(t, c, wire.Generate{Prompt: chat, MaxTokens: 2})
}

// TestConstraintStuck: in a model whose vocabulary has no usable token with
// "{" (all typed control), a JSON call cannot even start: the generation ends
// at once with an error naming the state and the output so far, and the
// runner goes on serving.
func TestConstraintStuck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nobrace.gguf")
	err := synthesize(path, "tiny", func(m *synth.Model) {
		var toks []string
		for _, kv := range m.KV {
			if kv.Key == gguf.KeyTokens {
				toks, _ = kv.Value.Strings()
			}
		}
		for i, kv := range m.KV {
			if kv.Key == "tokenizer.ggml.token_type" {
				types := slices.Clone(kv.Value.Any().([]int32))
				for j, s := range toks {
					if strings.Contains(s, "{") {
						types[j] = 3 // control
					}
				}
				m.KV[i].Value = gguf.Array(types)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	c := start(t)
	if _, err := c.Load(wire.Load{Path: path, Threads: 1, Context: 256}); err != nil {
		t.Fatal(err)
	}
	spec := relaySpec(grammar.FormJSON, grammar.ModeCalls)
	done := make(chan error, 1)
	go func() {
		_, err := c.Generate(wire.Generate{Prompt: "Switch the relay on.", MaxTokens: 50, Constraint: &spec}, nil)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "cannot go on") || !strings.Contains(err.Error(), "state") || !strings.Contains(err.Error(), `output so far ""`) {
			t.Errorf("stuck constraint: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("stuck constraint: no answer in 60 s")
	}
	// Mode any can still write text.
	anySpec := relaySpec(grammar.FormJSON, grammar.ModeAny)
	r := generate(t, c, wire.Generate{Prompt: "Hello", MaxTokens: 5, Constraint: &anySpec})
	if strings.Contains(r.Text(), "{") {
		t.Errorf("text with a forbidden brace: %q", r.Text())
	}
}

// BenchmarkConstraintMask: the per-token cost of the constraint on the Qwen
// vocabulary with the 10-tool set, over the tokens of one valid output (the
// set lookup and the advance; scripts/bench/grammar.sh measures the whole
// step and llama.cpp's sampler). cold: a fresh cache each pass.
func BenchmarkConstraintMask(b *testing.B) {
	m, v := qwenVocab(b)
	body, err := os.ReadFile("testdata/tools10.json")
	if err != nil {
		b.Fatal(err)
	}
	spec := grammar.Spec{Form: grammar.FormQwen, Mode: grammar.ModeCalls}
	if err := json.Unmarshal(body, &spec.Tools); err != nil {
		b.Fatal(err)
	}
	c, err := grammar.Compile(spec)
	if err != nil {
		b.Fatal(err)
	}
	out := "<tool_call>\n{\"name\": \"i2c/write\", \"arguments\": {\"bus\": \"i2c-1\", \"addr\": 64, \"register\": 3, \"bytes\": [1, 255, 16]}}\n</tool_call>"
	toks, err := m.Tokenize(out, false, false)
	if err != nil {
		b.Fatal(err)
	}
	pass := func(masks *grammar.MaskCache) {
		s := c.Start()
		for _, t := range toks {
			if !masks.Allowed(s).Allowed(t) {
				b.Fatalf("token %d %q not allowed in state %d", t, v.Bytes(t), s)
			}
			s = masks.Advance(s, t)
		}
		if !c.Accepting(s) {
			b.Fatal("the sample output is not accepted")
		}
	}
	b.Run("warm", func(b *testing.B) {
		masks := grammar.NewMaskCache(c, v)
		pass(masks)
		for b.Loop() {
			pass(masks)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(toks)), "ns/token")
	})
	b.Run("cold", func(b *testing.B) {
		for b.Loop() {
			pass(grammar.NewMaskCache(c, v))
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(toks)), "ns/token")
	})
}

// TestUserDefinedToolCallToken: in Qwen2.5's own files <tool_call> and
// </tool_call> are user-defined added tokens. A model whose vocabulary has
// them (written here over two padding entries) gets them as normal tokens
// whose bytes are their text, allowed where the constraint allows that text.
func TestUserDefinedToolCallToken(t *testing.T) {
	path := filepath.Join(t.TempDir(), "toolcall.gguf")
	err := synthesize(path, "tiny", func(m *synth.Model) {
		for i, kv := range m.KV {
			if kv.Key == gguf.KeyTokens {
				toks, _ := kv.Value.Strings()
				toks = slices.Clone(toks)
				toks[151657], toks[151658] = "<tool_call>", "</tool_call>"
				m.KV[i].Value = gguf.Array(toks)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	llama.Init("", false)
	m, err := llama.LoadModel(path, llama.LoadOptions{VocabOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	v, err := tokvocab.Build(m)
	if err != nil {
		t.Fatal(err)
	}
	open, end := tokenOf(t, m, "<tool_call>"), tokenOf(t, m, "</tool_call>")
	if open != 151657 || v.Kind(open) != grammar.TokenNormal || string(v.Bytes(open)) != "<tool_call>" || v.Kind(end) != grammar.TokenNormal {
		t.Fatalf("<tool_call> is %d, %s %q", open, v.Kind(open), v.Bytes(open))
	}
	c, err := grammar.Compile(relaySpec(grammar.FormQwen, grammar.ModeCalls))
	if err != nil {
		t.Fatal(err)
	}
	masks := grammar.NewMaskCache(c, v)
	if !masks.Allowed(c.Start()).Allowed(open) || masks.Allowed(c.Start()).Allowed(end) {
		t.Errorf("at the start of a call: <tool_call> allowed %v, </tool_call> allowed %v", masks.Allowed(c.Start()).Allowed(open), masks.Allowed(c.Start()).Allowed(end))
	}
	s := masks.Advance(c.Start(), open)
	for _, b := range []byte("\n{\"name\": \"gpio/write\", \"arguments\": {\"pin\": \"led\", \"on\": true}}\n") {
		s = c.Next(s, b)
	}
	if !masks.Allowed(s).Allowed(end) || c.Accepting(s) {
		t.Errorf("at the end of a call: </tool_call> allowed %v", masks.Allowed(s).Allowed(end))
	}
	if s = masks.Advance(s, end); !c.Accepting(s) {
		t.Errorf("after </tool_call> the output may not end")
	}
	checkState(t, c, v, masks, c.Start())
}

// TestGBNFAgreesWithMasks: the GBNF export of each form and mode
// (Constraint.GBNF(), what llama-server gets) is accepted by llama.cpp's
// grammar sampler, and along random walks through the constraint the tokens
// it allows are the ones the mask allows, except that llama.cpp also lets
// through tokens with bytes that can never occur in UTF-8 (0xC0, 0xC1,
// 0xF5-0xFF), which the DFA refuses, and control and padding tokens where
// their text fits (the mask never allows them), and never allows a token
// with a NUL byte (its grammar reads a token's code points as a
// zero-terminated string).
func TestGBNFAgreesWithMasks(t *testing.T) {
	m, v := qwenVocab(t)
	body, err := os.ReadFile("testdata/tools10.json")
	if err != nil {
		t.Fatal(err)
	}
	var tools []grammar.ToolSpec
	if err := json.Unmarshal(body, &tools); err != nil {
		t.Fatal(err)
	}
	logits := make([]float32, v.Len())
	neverUTF8 := func(b []byte) bool {
		return slices.ContainsFunc(b, func(c byte) bool { return c == 0xC0 || c == 0xC1 || c >= 0xF5 })
	}
	for _, form := range []grammar.Form{grammar.FormQwen, grammar.FormJSON, grammar.FormCommand} {
		for _, mode := range []grammar.Mode{grammar.ModeCalls, grammar.ModeAny} {
			c, err := grammar.Compile(grammar.Spec{Form: form, Mode: mode, Tools: tools})
			if err != nil {
				t.Fatal(err)
			}
			g, err := m.NewGrammarSampler(c.GBNF(), "root")
			if err != nil {
				hint := ""
				if strings.Contains(c.GBNF(), `\^`) {
					hint = ` (llama.cpp's GBNF parser knows the escapes \x \u \U \t \r \n \\ \" \[ \] \- but not \^: write ^ as \x5E)`
				}
				t.Errorf("%s/%s: llama.cpp refuses Constraint.GBNF(): %v%s", form, mode, err, hint)
				continue
			}
			masks := grammar.NewMaskCache(c, v)
			rng := rand.New(rand.NewPCG(uint64(len(form)), uint64(len(mode))))
			s := c.Start()
			for step := range 12 {
				set := masks.Allowed(s)
				_, n := g.Apply(logits)
				for tok := range int32(v.Len()) {
					ours, theirs := set.Allowed(tok), g.Allowed(tok)
					theirsOnly := theirs && (neverUTF8(v.Bytes(tok)) || v.Kind(tok) == grammar.TokenControl)
					if ours != theirs && !theirsOnly && !(ours && slices.Contains(v.Bytes(tok), 0)) {
						t.Fatalf("%s/%s step %d (state %d, %d vs %d allowed): token %d %q (%s): mask %v, llama.cpp %v",
							form, mode, step, s, set.Len(), n, tok, v.Bytes(tok), v.Kind(tok), ours, theirs)
					}
				}
				toks := set.AppendTokens(nil)
				toks = slices.DeleteFunc(toks, func(t int32) bool { return v.Kind(t) != grammar.TokenNormal })
				if len(toks) == 0 {
					break
				}
				tok := toks[rng.IntN(len(toks))]
				g.Accept(tok)
				s = masks.Advance(s, tok)
			}
			g.Close()
		}
	}
}
