package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/llm"
	"github.com/clawedge/clawedge/tools"
	"github.com/clawedge/clawedge/tools/toolstest"
)

// bfclFiles are tools files cut from the BFCL's distinct tool schemas
// (tools/testdata/bfcl): every tool that compiles exactly, the largest
// grammars first, n to a file (the last may hold fewer). The first file is
// the hardest a server will meet.
func bfclFiles(t *testing.T, n int) [][]grammar.ToolSpec {
	t.Helper()
	defs := toolstest.BFCLDefinitions(t)
	type sized struct {
		spec grammar.ToolSpec
		size int
	}
	var all []sized
	for _, d := range defs {
		fts, err := tools.ReadToolsFile(bytes.NewReader(append(append([]byte("["), d...), ']')))
		if err != nil || fts[0].Degraded != "" {
			continue
		}
		g, err := grammar.GBNF(llm.WireSpec(grammar.Spec{Form: grammar.FormQwen, Mode: grammar.ModeCalls, Tools: []grammar.ToolSpec{fts[0].Spec}}))
		if err != nil {
			continue
		}
		all = append(all, sized{fts[0].Spec, len(g)})
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].size > all[j].size })
	var out [][]grammar.ToolSpec
	for i := 0; i < len(all); i += n {
		var set []grammar.ToolSpec
		seen := map[string]bool{}
		for _, s := range all[i:min(i+n, len(all))] {
			if !seen[llm.WireName(s.spec.Name)] { // two BFCL names may share a wire name
				seen[llm.WireName(s.spec.Name)] = true
				set = append(set, s.spec)
			}
		}
		out = append(out, set)
	}
	return out
}

// bfclGrammarsAccepted: the GBNF of BFCL-sized tools files is accepted by
// the real llama-server at url (a subtest of TestLlamaServerRequiredCalls,
// which starts it once): every tool of the BFCL that compiles
// exactly, 64 to a file, the largest grammars first, in the qwen form under
// the wire names the openai provider sends (mode calls; the first file in
// mode any too). Each request answers 200 with one token, not HTTP 400
// "failed to parse grammar"; a broken grammar, sent the same way, is refused
// (the server does read the field).
func bfclGrammarsAccepted(t *testing.T, url string) {
	send := func(g string) (int, []byte, int) {
		t.Helper()
		body, _ := json.Marshal(map[string]any{
			"model":    "tiny",
			"messages": []map[string]string{{"role": "user", "content": "call a tool"}},
			"grammar":  g, "max_tokens": 1, "seed": 7,
		})
		resp, err := http.Post(url+"/chat/completions", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		reply, _ := io.ReadAll(resp.Body)
		var r struct {
			Usage struct {
				CompletionTokens int `json:"completion_tokens"`
			} `json:"usage"`
		}
		json.Unmarshal(reply, &r)
		return resp.StatusCode, reply, r.Usage.CompletionTokens
	}
	if code, reply, _ := send("root ::= call\n"); code != 400 || !strings.Contains(string(reply), "grammar") {
		t.Fatalf("a grammar with an undefined rule: HTTP %d %.300s; want 400 naming the grammar", code, reply)
	}
	files := bfclFiles(t, 64)
	toolCount, biggest, slowest := 0, 0, time.Duration(0)
	for i, set := range files {
		modes := []grammar.Mode{grammar.ModeCalls}
		if i == 0 {
			modes = append(modes, grammar.ModeAny)
		}
		for _, mode := range modes {
			g, err := grammar.GBNF(llm.WireSpec(grammar.Spec{Form: grammar.FormQwen, Mode: mode, Tools: set}))
			if err != nil {
				t.Fatalf("file %d, %s: %v", i, mode, err)
			}
			start := time.Now()
			if code, reply, n := send(g); code != 200 || n != 1 {
				t.Errorf("file %d (%d tools, GBNF of %d bytes, %d rules), %s: HTTP %d, %d tokens\n%.600s", i, len(set), len(g),
					strings.Count(g, "\n"), mode, code, n, reply)
			}
			biggest, slowest = max(biggest, len(g)), max(slowest, time.Since(start))
		}
		toolCount += len(set)
	}
	t.Logf("%d tools in %d files accepted; the largest GBNF %d bytes, the slowest request %v", toolCount, len(files), biggest, slowest.Round(time.Millisecond))
}
