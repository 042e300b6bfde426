package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/clawedge/clawedge/agent"
	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/llm"
	"github.com/clawedge/clawedge/localmodel"
	"github.com/clawedge/clawedge/localmodel/gguf"
	"github.com/clawedge/clawedge/tools"
)

// TestMCPNestedToolsGenerated: the local model (the micro random-weight shape,
// in the real runner, one process for all generations) constrained to the
// nested tools of the corpus of real MCP tool schemas (arrays of objects,
// unions): CLAWEDGE_CONSTRAINED_RUNS seeded generations (scripts/test.sh's
// constrained-decoding step sets 1,000), each tool in turn, in the json form
// (the arguments object itself: the fewest tokens around the nested part,
// which the qwen form wraps unchanged). Every call's arguments are checked
// against the tool's original inputSchema by two validators that are not
// clawedge's: google/jsonschema-go at once, and Ajv (the TypeScript MCP SDK's
// validator) in node over all of them at the end; and by the tool spec's own
// validation. Random weights are the harshest test-taker.
func TestMCPNestedToolsGenerated(t *testing.T) {
	runs := constrainedRuns(t) // scripts/test.sh's constrained-decoding step: 1000
	nm := mcpNodeModules(t)
	needLocalModel(t)
	data, err := os.ReadFile(filepath.Join("..", "..", "scripts", "bench", "mcp-corpus.json"))
	if err != nil {
		t.Fatal(err)
	}
	fts, err := tools.ReadToolsFile(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	type nestedTool struct {
		spec   grammar.ToolSpec
		schema map[string]any
		res    *jsonschema.Resolved
	}
	var nested []nestedTool
	for _, ft := range fts {
		if len(ft.Spec.Shape) == 0 {
			continue
		}
		res, err := tools.ResolveSchema(ft.Schema)
		if err != nil {
			t.Fatalf("%s: %v", ft.Spec.Name, err)
		}
		nested = append(nested, nestedTool{ft.Spec, ft.Schema, res})
	}
	if len(nested) < 7 {
		t.Fatalf("%d nested tools in the corpus, want the 7 (arrays of objects, a union)", len(nested))
	}

	model := synthModel(t, "micro", gguf.Q8_0, vocabFile)
	c, err := localmodel.New(localmodel.Options{Model: model, Threads: 1, Context: 1024,
		Runner: filepath.Join(filepath.Dir(binPath), "clawedge-llm")})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	type call struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	var calls []call
	start, tokens := time.Now(), 0
	for i := range runs {
		nt := nested[i*len(nested)/runs] // in blocks: one compile per tool
		spec := grammar.Spec{Form: grammar.FormJSON, Mode: grammar.ModeCalls, Tools: shortened([]grammar.ToolSpec{nt.spec}), MaxCalls: 1}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		text, fin, err := llm.Collect(mustStream(c.Chat(ctx, llm.Request{
			Messages:  []llm.Message{{Role: llm.RoleUser, Content: "Go on."}},
			Tools:     agent.ToolDefs([]grammar.ToolSpec{nt.spec}, true),
			MaxTokens: 512, NoThink: true, Constraint: &spec,
			Sampling: &llm.Sampling{Temperature: 1, Seed: uint64(i + 1)},
		})))
		cancel()
		if verdict := checkGenerated(spec, []grammar.ToolSpec{nt.spec}, text, fin, err); !strings.HasPrefix(verdict, "ok") {
			t.Fatalf("%s seed %d: %s\noutput: %q", nt.spec.Name, i+1, verdict, rawText(text, fin))
		}
		tokens += fin.Usage.CompletionTokens
		tc := fin.ToolCalls[0]
		var v any
		if err := json.Unmarshal(tc.Arguments, &v); err != nil {
			t.Fatalf("%s seed %d: arguments %s: %v", nt.spec.Name, i+1, tc.Arguments, err)
		}
		if err := nt.res.Validate(v); err != nil {
			t.Fatalf("%s seed %d: arguments %s are not valid against the tool's inputSchema (jsonschema-go): %v", nt.spec.Name, i+1, tc.Arguments, err)
		}
		calls = append(calls, call{nt.spec.Name, tc.Arguments})
	}
	took := time.Since(start)

	schemas := map[string]any{}
	for _, nt := range nested {
		schemas[nt.spec.Name] = nt.schema
	}
	in, _ := json.Marshal(map[string]any{"schemas": schemas, "calls": calls})
	cmd := exec.Command("node", "testdata/ajv-check.cjs")
	cmd.Env = append(os.Environ(), "NODE_PATH="+nm)
	cmd.Stdin = bytes.NewReader(in)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ajv: %v", err)
	}
	var ajv struct {
		Checked int               `json:"checked"`
		Invalid []json.RawMessage `json:"invalid"`
	}
	if err := json.Unmarshal(out, &ajv); err != nil || ajv.Checked != len(calls) {
		t.Fatalf("ajv: %v, %s", err, out)
	}
	for _, bad := range ajv.Invalid {
		t.Errorf("not valid against the tool's inputSchema (Ajv): %s", bad)
	}
	t.Logf("%d generations over %d nested MCP tools, %d/%d valid (jsonschema-go and Ajv), %d tokens, %v (%v per generation)",
		runs, len(nested), runs-len(ajv.Invalid), runs, tokens, took.Round(time.Millisecond), (took / time.Duration(runs)).Round(time.Microsecond))
}

// shortened bounds the free strings and arrays of tool specs (8 characters, 2
// items) where the schema leaves them unbounded: a random-weight model ends
// a free string only when it happens to pick a token with a quote in it, about
// one in a hundred, and 1,000 generations must stay cheap. The constraint
// then allows a subset of what the schema allows, so every output must still
// be valid against the original schema; the nesting (objects in arrays,
// unions) is unchanged.
func shortened(ts []grammar.ToolSpec) []grammar.ToolSpec {
	var arg func(a grammar.ArgSpec) grammar.ArgSpec
	arg = func(a grammar.ArgSpec) grammar.ArgSpec {
		switch {
		case a.Type == grammar.TypeString && len(a.Enum) == 0 && (a.MaxLen == 0 || a.MaxLen > 8):
			a.MaxLen = 8
		case a.Type == grammar.TypeArray && (a.MaxItems == 0 || a.MaxItems > 2):
			a.MaxItems = max(2, a.MinItems)
		}
		if a.Items != nil {
			items := arg(*a.Items)
			a.Items = &items
		}
		a.Props = args(a.Props, arg)
		a.AnyOf = args(a.AnyOf, arg)
		return a
	}
	out := make([]grammar.ToolSpec, len(ts))
	for i, t := range ts {
		t.Params, t.Shape = args(t.Params, arg), args(t.Shape, arg)
		out[i] = t
	}
	return out
}

func args(as []grammar.ArgSpec, f func(grammar.ArgSpec) grammar.ArgSpec) []grammar.ArgSpec {
	if as == nil {
		return nil
	}
	out := make([]grammar.ArgSpec, len(as))
	for i, a := range as {
		out[i] = f(a)
	}
	return out
}
