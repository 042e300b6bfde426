package agent

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/clawedge/clawedge/agent/agenttest"
	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/llm"
	"github.com/clawedge/clawedge/llm/anthropic"
	"github.com/clawedge/clawedge/llm/anthropic/anthropictest"
	"github.com/clawedge/clawedge/llm/openai"
	"github.com/clawedge/clawedge/llm/openai/openaitest"
	"github.com/clawedge/clawedge/llm/remote"
	"github.com/clawedge/clawedge/llm/router"
)

// The turns of agent_test.go again, over the real wire formats: the providers of
// llm/openai and llm/anthropic against their fake servers on 127.0.0.1 (SSE
// streaming, tool calls split across chunks, usage, errors), behind the router.

func openaiProvider(t *testing.T, srv *openaitest.Server) llm.Provider {
	p, err := openai.New(openai.Options{Options: remote.Options{Name: "lan", BaseURL: srv.URL, Model: "qwen2.5:7b", RetryBase: 10 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func routed(t *testing.T, entries ...router.Entry) llm.Provider {
	r, err := router.New(entries, router.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestOpenAITurnCallsGPIOWrite(t *testing.T) {
	srv := openaitest.New(t)
	srv.Push(
		openaitest.Reply{Text: []string{"Switching ", "it on."}, Calls: []openaitest.Call{{Name: "gpio/write", Args: `{"pin": "led", "value": 1}`, Pieces: 4}}},
		openaitest.Text("The LED ", "is on."),
	)
	e := newEnv(t, Options{Provider: routed(t, router.Entry{Provider: openaiProvider(t, srv)})})
	out := e.turn("turn on the led")
	if e.level("led") != hal.High || out.Text != "Switching it on.\nThe LED is on." || out.State != Idle {
		t.Fatalf("led %v, %+v", e.level("led"), out)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	if names := reqs[0].ToolNames(); len(names) == 0 {
		t.Error("no tools sent")
	}
	// The second request carries the call and its result, tied by the call's id.
	msgs := reqs[1].Body.Messages
	last := msgs[len(msgs)-1]
	if last.Role != "tool" || last.ToolCallID == "" || last.Content == nil || !strings.Contains(*last.Content, "ok: ") {
		t.Errorf("tool result: %+v", last)
	}
	es := e.audited()
	if len(es) != 1 || es[0].Command != `@gpio/write{pin="led";value=1}` || !es[0].OK {
		t.Errorf("audit %v", es)
	}
	// The route and the usage reached the totals.
	st, _ := e.ag.Status()
	if len(st.Models) != 1 || st.Models[0].Calls != 2 || st.Models[0].PromptTokens != 20 || len(st.Models[0].Routes) == 0 {
		t.Errorf("totals %+v", st.Models)
	}
}

func TestAnthropicToolErrorThenRecovery(t *testing.T) {
	srv := anthropictest.New(t)
	srv.Push(
		anthropictest.ToolCall("gpio/write", `{"pin": "lamp", "value": 1}`),
		anthropictest.ToolCall("gpio/write", `{"pin": "led", "value": 1}`),
		anthropictest.Text("Done: the led is on."),
	)
	p, err := anthropic.New(anthropic.Options{Options: remote.Options{Name: "claude", BaseURL: srv.URL, Model: "claude-sonnet-4-5", APIKey: "sk-test-secret"}})
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, Options{Provider: routed(t, router.Entry{Provider: p, CostIn: 0.003, CostOut: 0.015})})
	out := e.turn("switch the lamp on")
	if e.level("led") != hal.High || out.Text != "Done: the led is on." {
		t.Fatalf("led %v, %+v", e.level("led"), out)
	}
	if out.Calls[0].Status != callRefused || out.Calls[1].Status != callOK {
		t.Errorf("calls %+v", out.Calls)
	}
	// The refusal went back as a tool_result of the right tool_use.
	raw := string(srv.Requests()[1].Raw)
	if !strings.Contains(raw, "tool_result") || !strings.Contains(raw, `parameter \"pin\"`) {
		t.Errorf("second request: %s", raw)
	}
	st, _ := e.ag.Status()
	if st.Models[0].Cost <= 0 {
		t.Errorf("no cost recorded: %+v", st.Models)
	}
	// The key is in no step record.
	steps, _ := e.st.StepsSince(0, 0)
	for _, s := range steps {
		if strings.Contains(string(s.Data), "sk-test-secret") {
			t.Fatal("the API key reached the store")
		}
	}
}

func TestOpenAIRepeatedCallStops(t *testing.T) {
	srv := openaitest.New(t)
	srv.Default(func(openaitest.Request) openaitest.Reply { return openaitest.ToolCall("gpio/toggle", `{"pin":"led"}`) })
	e := newEnv(t, Options{Provider: routed(t, router.Entry{Provider: openaiProvider(t, srv)})})
	out := e.turn("blink")
	if out.Stop != "repeat" || !strings.Contains(out.Text, "kept repeating the same call") || len(e.audited()) != 2 {
		t.Fatalf("%+v", out)
	}
}

func TestOpenAICostBudgetAndRetry(t *testing.T) {
	srv := openaitest.New(t)
	srv.Push(openaitest.RateLimited("0.05")) // retried by the provider, honouring Retry-After
	read := openaitest.Reply{Calls: []openaitest.Call{{Name: "gpio/read", Args: `{"pin":"led"}`}}, Usage: &openaitest.Usage{Prompt: 1000, Completion: 100}}
	srv.Default(func(openaitest.Request) openaitest.Reply { return read })
	// 1000 in at 0.01/1k + 100 out at 0.1/1k = 0.02 a step.
	p := routed(t, router.Entry{Provider: openaiProvider(t, srv), CostIn: 0.01, CostOut: 0.1})
	e := newEnv(t, Options{Provider: p, Limits: Limits{MaxCost: 0.05, MaxRepeats: 100}})
	out := e.turn("keep reading the led")
	if out.Stop != "cost" || out.State != Halted || !strings.Contains(out.Text, "cost budget of 0.05") ||
		!strings.Contains(out.Text, `@gpio/read{pin="led"}: ok`) {
		t.Fatalf("%+v", out)
	}
	if n := len(e.audited()); n != 3 {
		t.Errorf("%d calls ran, want 3 (0.02 a step, stop at 0.05)", n)
	}
	if n := len(srv.Requests()); n != 4 {
		t.Errorf("%d requests, want the 429 and 3 steps", n)
	}
}

func TestRemoteDownAnswers(t *testing.T) {
	srv := openaitest.New(t)
	srv.Default(func(openaitest.Request) openaitest.Reply { return openaitest.Error(500, "boom") })
	p, _ := openai.New(openai.Options{Options: remote.Options{Name: "lan", BaseURL: srv.URL, Model: "m", RetryBase: time.Millisecond, MaxRetries: 1}})
	e := newEnv(t, Options{Provider: routed(t, router.Entry{Provider: p})})
	out := e.turn("hello")
	if out.State != Error || !strings.Contains(out.Text, "could not get an answer from the model") || !strings.Contains(out.Text, "lan") {
		t.Fatalf("%+v", out)
	}
}

// The same tool error twice from the local model: the agent asks the router to go
// further up (router.Escalate) and the next step is the remote model's.
func TestSameErrorEscalates(t *testing.T) {
	local := agenttest.New()
	local.ProviderName = "local"
	local.Capabilities = llm.Caps{Context: 4096, Local: true, Tools: true}
	local.Last = &agenttest.Step{Text: qwenCall("gpio/write", `{"pin": "lamp", "value": 1}`)}
	remote := agenttest.New(agenttest.Step{Calls: []llm.ToolCall{{ID: "r1", Name: "gpio/write", Arguments: []byte(`{"pin":"led","value":1}`)}}},
		agenttest.Step{Text: "Done, by the remote model."})
	remote.ProviderName = "lan"
	e := newEnv(t, Options{Provider: routed(t, router.Entry{Provider: local}, router.Entry{Provider: remote})})
	out := e.turn("lamp on")
	if out.Text != "Done, by the remote model." || e.level("led") != hal.High {
		t.Fatalf("%+v", out)
	}
	if n := len(local.Requests()); n != 2 {
		t.Errorf("local asked %d times, want 2", n)
	}
	st, _ := e.ag.Status()
	found := false
	for _, m := range st.Models {
		for why := range m.Routes {
			found = found || (m.Provider == "lan" && strings.Contains(why, "escalated"))
		}
	}
	if !found {
		t.Errorf("no escalation route recorded: %+v", st.Models)
	}
}

// Whatever the constraint style, a remote model's call runs: the server writes it as
// text in the constraint's form (a <tool_call> block under a GBNF grammar, one JSON
// object under a JSON Schema), in the tool's wire name, and the provider hands it
// back parsed. Before, the agent printed the JSON object to the person as the answer.
func TestConstrainedRemoteCallsRun(t *testing.T) {
	cases := map[openai.Style][2]string{
		openai.StyleGBNF: {"Switching it on.\n<tool_call>\n{\"name\": \"gpio__write\", \"arguments\": {\"pin\": \"led\", \"value\": 1}}\n</tool_call>",
			"The LED is on."},
		openai.StyleJSONSchema: {`{"name": "gpio__write", "arguments": {"pin": "led", "value": 1}}`, `{"answer": "The LED is on."}`},
		openai.StyleOllama:     {`{"name":"gpio__write","arguments":{"pin":"led","value":1}}`, `{"answer":"The LED is on."}`},
	}
	for style, replies := range cases {
		t.Run(string(style), func(t *testing.T) {
			srv := openaitest.New(t)
			srv.Push(openaitest.Reply{Text: []string{replies[0][:9], replies[0][9:]}}, openaitest.Text(replies[1]))
			p, err := openai.New(openai.Options{Options: remote.Options{Name: "lan", BaseURL: srv.URL, Model: "qwen2.5:7b", RetryBase: 10 * time.Millisecond}, Constraint: style})
			if err != nil {
				t.Fatal(err)
			}
			e := newEnv(t, Options{Provider: p})
			out := e.turn("turn on the led")
			if e.level("led") != hal.High || out.State != Idle || !strings.HasSuffix(out.Text, "The LED is on.") || strings.Contains(out.Text, "gpio") {
				t.Fatalf("led %v, %+v", e.level("led"), out)
			}
			if es := e.audited(); len(es) != 1 || es[0].Command != `@gpio/write{pin="led";value=1}` || !es[0].OK {
				t.Errorf("audit %v", es)
			}
			reqs := srv.Requests()
			if len(reqs) != 2 || reqs[0].Body.Grammar == "" && reqs[0].Body.ResponseFormat == nil {
				t.Fatalf("%d requests, the first unconstrained: %s", len(reqs), reqs[0].Raw)
			}
			// The call went back to the model in the API's own form, with its result.
			msgs := reqs[1].Body.Messages
			if asst := msgs[len(msgs)-2]; len(asst.ToolCalls) != 1 || asst.ToolCalls[0].Function.Name != "gpio__write" {
				t.Errorf("assistant message %+v", asst)
			}
		})
	}
}

// A server that refuses the request because of how it was started says why, and the
// person reads it with the fix: llama-server started without --jinja answers 500 to any
// request with tools. Retrying cannot help, so the request is sent once.
func TestServerRefusalReachesThePerson(t *testing.T) {
	srv := openaitest.New(t)
	srv.Default(func(openaitest.Request) openaitest.Reply {
		return openaitest.Error(500, "tools param requires --jinja flag")
	})
	e := newEnv(t, Options{Provider: routed(t, router.Entry{Provider: openaiProvider(t, srv)})})
	out := e.turn("turn on the led")
	if !strings.Contains(out.Text, "500 Internal Server Error: tools param requires --jinja flag (start llama-server with --jinja") ||
		out.Stop != "model" || out.State != Error || len(srv.Requests()) != 1 {
		t.Errorf("%d requests, %+v", len(srv.Requests()), out)
	}
}

// The audit's digest is of the whole request: the same conversation sent with a
// GBNF grammar and with a JSON Schema gives two digests (it covered only the
// messages and the tools, the same for both).
func TestStepDigestCoversTheConstraint(t *testing.T) {
	digest := func(style openai.Style) string {
		srv := openaitest.New(t)
		srv.Push(openaitest.Text("Hello."))
		p, err := openai.New(openai.Options{Options: remote.Options{Name: "lan", BaseURL: srv.URL, Model: "m"}, Constraint: style})
		if err != nil {
			t.Fatal(err)
		}
		e := newEnv(t, Options{Provider: p})
		e.turn("hello")
		steps, err := e.st.StepsSince(0, 0)
		if err != nil || len(steps) != 1 {
			t.Fatalf("%d steps, %v", len(steps), err)
		}
		var sr stepRecord
		json.Unmarshal(steps[0].Data, &sr)
		if want := llm.SentOf(srv.Requests()[0].Raw); sr.InSHA256 != want.SHA256 || sr.InBytes != want.Bytes {
			t.Errorf("%s: digest %s of %d bytes, the body's is %s of %d", style, sr.InSHA256, sr.InBytes, want.SHA256, want.Bytes)
		}
		return sr.InSHA256
	}
	if g, j := digest(openai.StyleGBNF), digest(openai.StyleJSONSchema); g == j {
		t.Errorf("gbnf and json_schema: one digest %s", g)
	}
	// A provider that reports no body (the local model): the digest is of the whole
	// llm.Request, the constraint and the sampling included.
	local := func(constrained bool) string {
		p := agenttest.New(agenttest.Step{Text: "Hello."})
		p.Capabilities.Grammar = constrained
		e := newEnv(t, Options{Provider: p})
		e.turn("hello")
		steps, _ := e.st.StepsSince(0, 0)
		var sr stepRecord
		json.Unmarshal(steps[0].Data, &sr)
		return sr.InSHA256
	}
	if local(true) == local(false) {
		t.Error("with and without a constraint: one digest")
	}
}
