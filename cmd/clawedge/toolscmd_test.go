package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/llm"
	"github.com/clawedge/clawedge/llm/openai"
	"github.com/clawedge/clawedge/llm/openai/openaitest"
	"github.com/clawedge/clawedge/llm/remote"
)

// TestToolsExportTheConstraint: clawedge tools --gbnf and --json-schema print what
// the openai provider sends a server with constraint: gbnf or json_schema, for the
// configuration's tools or a file's, so that a server configured by hand gets the
// same grammar; the tools are named as they are offered (gpio__write).
func TestToolsExportTheConstraint(t *testing.T) {
	file, _ := filepath.Abs("../../tools/testdata/toolsets/gpio10.json")
	specs, err := readToolsFile(file)
	if err != nil {
		t.Fatal(err)
	}
	sent := func(style openai.Style) openaitest.ChatRequest {
		srv := openaitest.New(t)
		srv.Push(openaitest.Text("ok"))
		p, err := openai.New(openai.Options{Options: remote.Options{BaseURL: srv.URL, Model: "m"}, Constraint: style})
		if err != nil {
			t.Fatal(err)
		}
		spec := grammar.Spec{Form: grammar.FormQwen, Mode: grammar.ModeAny, Tools: specs}
		if _, _, err := llm.Collect(mustStream(p.Chat(context.Background(), llm.Request{
			Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}, Constraint: &spec}))); err != nil {
			t.Fatal(err)
		}
		return srv.Requests()[0].Body
	}
	if out := runCLI(t, 0, "", "tools", "--gbnf", "--tools", file); out != sent(openai.StyleGBNF).Grammar || !strings.Contains(out, "gpio__write") {
		t.Errorf("--gbnf:\n%s", out)
	}
	out := runCLI(t, 0, "", "tools", "--json-schema", "--tools", file)
	if want := sent(openai.StyleJSONSchema).ResponseFormat.JSONSchema.Schema; strings.TrimSpace(out) != string(want) {
		t.Errorf("--json-schema:\n%s\nwant\n%s", out, want)
	}
	// The configuration's tools, and a flag error.
	cfgPath, _ := writeConfig(t, "")
	if out := runCLI(t, 0, "", "tools", "--json-schema", "--mode", "calls", "--config", cfgPath); !json.Valid([]byte(out)) ||
		!strings.Contains(out, `"gpio__write"`) || strings.Contains(out, `"answer"`) {
		t.Errorf("the configuration's tools:\n%s", out)
	}
	if out := runCLI(t, 2, "", "tools", "--gbnf", "--form", "yaml", "--config", cfgPath); !strings.Contains(out, `form "yaml"`) {
		t.Errorf("a bad form:\n%s", out)
	}
}

// TestParseWithToolsFile: clawedge parse --tools FILE checks a line against tools
// outside the built-in set: namespace, name and arguments.
func TestParseWithToolsFile(t *testing.T) {
	file, _ := filepath.Abs("../../tools/testdata/toolsets/gpio10.json")
	if out := runCLI(t, 0, "", "parse", "--tools", file, `@thermostat/set{zone="bedroom";celsius=21.5}`); !strings.Contains(out, `"tool":"thermostat/set"`) {
		t.Errorf("a call of the file's tools:\n%s", out)
	}
	for line, want := range map[string]string{
		`@gpio/write{pin="lamp";level=true}`: `line 1, column 17: gpio/write: parameter "pin" is "lamp"`,
		`@gpio/nope{}`:                       "line 1, column 1: gpio/nope is not a tool of " + file,
		`@auto/list{}`:                       `unknown namespace "auto"`,
	} {
		if out := runCLI(t, 1, "", "parse", "--tools", file, line); !strings.Contains(out, want) {
			t.Errorf("%s:\n%s", line, out)
		}
	}
}
