package config

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// The router's keys: models.local scores, the remote models' window,
// costs, scores, tools, constraint and timeout, and the router's order and
// queue budget.
func TestModelKeys(t *testing.T) {
	c, err := Parse([]byte(`
models:
  local: {path: m.gguf, quality: 3, speed: 4.5}
  remote:
    - name: lan
      kind: openai
      base_url: http://192.168.1.10:11434/v1
      model: qwen2.5:7b
      context: 32768
      cost_in: 0
      cost_out: 0.0002
      quality: 6
      speed: 8
      tools: false
      constraint: ollama
      timeout: 90s
      temperature: 0.2
      seed: 42
    - name: claude
      kind: anthropic
      model: claude-sonnet-4-5
      api_key: ${ANTHROPIC_API_KEY}
      cost_in: ${COST_IN}
      cost_out: 15
  router:
    strategy: balanced
    order: [claude, local]
    local_queue_budget: 5s
`), "test.yaml", envFrom(map[string]string{"ANTHROPIC_API_KEY": anthropicKey, "COST_IN": "3"}))
	if err != nil {
		t.Fatal(err)
	}
	want := Models{
		Local: &LocalModel{Path: "m.gguf", Threads: 4, Context: 4096, ThinkBudget: 256, IdleUnload: Duration(10 * time.Minute), Quality: 3, Speed: 4.5},
		Remote: []RemoteModel{
			{Name: "lan", Kind: "openai", BaseURL: "http://192.168.1.10:11434/v1", Model: "qwen2.5:7b", Context: 32768,
				CostOut: 0.0002, Quality: 6, Speed: 8, Tools: false, Constraint: "ollama", Timeout: Duration(90 * time.Second),
				Temperature: 0.2, Seed: 42},
			{Name: "claude", Kind: "anthropic", BaseURL: "https://api.anthropic.com", Model: "claude-sonnet-4-5", APIKey: anthropicKey,
				CostIn: 3, CostOut: 15, Quality: 5, Speed: 5, Tools: true, Temperature: 0.7},
		},
		Router: Router{Strategy: "balanced", Order: []string{"claude", "local"}, LocalQueueBudget: Duration(5 * time.Second)},
	}
	if !reflect.DeepEqual(c.Models, want) {
		t.Errorf("models\ngot  %+v\nwant %+v", c.Models, want)
	}
}

// A file that names only what the README's example names gets the
// defaults: scores 5, tools on, the public Anthropic endpoint, no queue
// budget, no order.
func TestModelDefaults(t *testing.T) {
	c := mustParse(t, "models:\n  remote:\n    - {name: c, kind: anthropic, model: m, api_key: k}\n    - {name: o, kind: openai, model: m, base_url: https://api.openai.com/v1}\n")
	for _, r := range c.Models.Remote {
		if r.Quality != 5 || r.Speed != 5 || !r.Tools || r.Context != 0 || r.CostIn != 0 || r.Constraint != "" || r.Timeout != 0 {
			t.Errorf("remote defaults %+v", r)
		}
	}
	if c.Models.Remote[0].BaseURL != "https://api.anthropic.com" || c.Models.Remote[1].BaseURL != "https://api.openai.com/v1" {
		t.Errorf("base_url %+v", c.Models.Remote)
	}
	if r := c.Models.Router; r.Strategy != "local-first" || r.Order != nil || r.LocalQueueBudget != 0 {
		t.Errorf("router defaults %+v", r)
	}
	if d := Default(); d.Models.Router.LocalQueueBudget != 0 || d.Models.Router.Order != nil {
		t.Errorf("Default router %+v", d.Models.Router)
	}
}

func TestModelProblems(t *testing.T) {
	const lan = "models:\n  remote:\n    - {name: lan, kind: openai, base_url: http://h/v1, model: m"
	const local = "models:\n  local: {path: m.gguf"
	for _, tc := range []struct{ src, at, msg string }{
		{"models:\n  remote:\n    - {name: lan, kind: openai, model: m}\n", "{name",
			"models.remote[0]: base_url is required for kind openai (the server's endpoint, such as http://192.168.1.10:11434/v1)"},
		{"models:\n  remote:\n    - {name: lan, kind: openai, model: m, base_url: ''}\n", "''",
			"models.remote[0].base_url: must not be empty"},
		{"models:\n  remote:\n    - {name: c, kind: anthropic, model: m, base_url: api.anthropic.com}\n", "api.",
			`models.remote[0].base_url: must be an http or https URL such as https://host/path, found "api.anthropic.com"`},
		{"models:\n  remote:\n    - {name: local, kind: anthropic, model: m}\n", "local",
			`models.remote[0].name: "local" is the name of the local model (models.local); choose another`},
		{lan + ", context: 0}\n", "0}", "models.remote[0].context: must be at least 1, found 0 (leave context out if the window is not known)"},
		{lan + ", context: 4k}\n", "4k", `models.remote[0].context: expected an integer, found "4k"`},
		{lan + ", cost_in: -1}\n", "-1", "models.remote[0].cost_in: must not be negative (a cost per 1,000 tokens), found -1"},
		{lan + ", cost_out: \"0.1\"}\n", `"0.1"`, `models.remote[0].cost_out: expected a number, found "0.1"`},
		{lan + ", cost_out: cheap}\n", "cheap", `models.remote[0].cost_out: expected a number, found "cheap"`},
		{lan + ", cost_out: .inf}\n", ".inf", `models.remote[0].cost_out: expected a number, found ".inf"`},
		{lan + ", quality: 11}\n", "11", "models.remote[0].quality: must be from 1 to 10 (10 best), found 11"},
		{lan + ", speed: 0.5}\n", "0.5", "models.remote[0].speed: must be from 1 to 10 (10 best), found 0.5"},
		{lan + ", tools: yes}\n", "yes", `models.remote[0].tools: expected true or false, found "yes"`},
		{lan + ", constraint: regex}\n", "regex", `models.remote[0].constraint: must be none, gbnf, json_schema or ollama, found "regex"`},
		{"models:\n  remote:\n    - {name: c, kind: anthropic, model: m, constraint: json_schema}\n", "json_schema",
			"models.remote[0].constraint: applies to kind openai only: the Anthropic API takes no grammar or schema"},
		{lan + ", timeout: 0s}\n", "0s", "models.remote[0].timeout: must be greater than zero (leave timeout out for the provider's default), found 0s"},
		{lan + ", timeout: 30}\n", "30", "models.remote[0].timeout: expected a duration such as 10m, 1h30m or 500ms"},
		{local + ", quality: 0}\n", "0}", "models.local.quality: must be from 1 to 10 (10 best), found 0"},
		{local + ", speed: [1]}\n", "[1]", "models.local.speed: expected a number, found a list"},
		{lan + "}\n  router:\n    order: [lan, clade]\n", "clade", `models.router.order[1]: "clade" is not a configured model (models: lan)`},
		{lan + "}\n  router:\n    order: [local]\n", "local]", `models.router.order[0]: "local" is not a configured model (models: lan)`},
		{"models:\n  router:\n    order: [local]\n", "local]", `models.router.order[0]: "local" is not a configured model (none are configured)`},
		{local + "}\n" + strings.TrimPrefix(lan, "models:\n") + "}\n  router:\n    order: [lan, local, lan]\n", "lan]",
			`models.router.order[2]: "lan" is already listed (models.router.order[0])`},
		{"models:\n  router: {order: local}\n", "local}", `models.router.order: expected a list, found "local"`},
		{"models:\n  router: {local_queue_budget: -1s}\n", "-1s", "models.router.local_queue_budget: must not be negative (0 waits for the local model), found -1s"},
		{"models:\n  router: {local_queue_budget: soon}\n", "soon", "models.router.local_queue_budget: expected a duration"},
	} {
		problemAt(t, tc.src, tc.at, tc.msg)
	}
}

// api_key is a Secret: redacted in Redacted, and the new keys survive the
// round trip through it.
func TestModelsRedactedRoundTrip(t *testing.T) {
	src := `
models:
  local: {path: m.gguf, quality: 2.5, speed: 9}
  remote:
    - {name: lan, kind: openai, base_url: http://h/v1, model: m, context: 8192, cost_in: 0.00001, cost_out: 1234567.5,
       quality: 10, speed: 1, tools: false, constraint: gbnf, timeout: 1m30s}
    - {name: "order: x", kind: anthropic, model: m, api_key: ${ANTHROPIC_API_KEY}, constraint: ~}
  router: {strategy: fallback, order: ["order: x", local], local_queue_budget: 250ms}
`
	c := mustParse(t, src)
	out, err := c.Redacted()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), anthropicKey) || !strings.Contains(string(out), `api_key: "[redacted]"`) {
		t.Errorf("api_key not redacted:\n%s", out)
	}
	for _, want := range []string{"cost_in: 0.00001\n", "cost_out: 1234567.5\n", "tools: false\n", "constraint: gbnf\n",
		"timeout: 1m30s\n", "local_queue_budget: 250ms\n", "quality: 2.5\n", "base_url: https://api.anthropic.com\n"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("Redacted lacks %q:\n%s", want, out)
		}
	}
	again := strings.ReplaceAll(string(out), `api_key: "[redacted]"`, `api_key: ${ANTHROPIC_API_KEY}`)
	c2, err := Parse([]byte(again), "test.yaml", envFrom(testEnv))
	if err != nil {
		t.Fatalf("Redacted output does not parse: %v\n%s", err, out)
	}
	if !reflect.DeepEqual(c, c2) {
		t.Errorf("round trip changed the models\nbefore %+v\nafter  %+v\nyaml:\n%s", c.Models, c2.Models, out)
	}
}

func TestExampleDocumentsModelValues(t *testing.T) {
	data := string(readTestdata(t, "example.yaml"))
	for _, v := range append(append([]string{}, constraints...), "https://api.anthropic.com") {
		if !strings.Contains(data, v) {
			t.Errorf("example.yaml does not mention %q", v)
		}
	}
}
