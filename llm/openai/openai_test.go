package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/llm"
	"github.com/clawedge/clawedge/llm/openai"
	"github.com/clawedge/clawedge/llm/openai/openaitest"
	"github.com/clawedge/clawedge/llm/remote"
)

const key = "sk-test-0123456789abcdef"

func provider(t *testing.T, srv *openaitest.Server, opts openai.Options) *openai.Provider {
	t.Helper()
	opts.BaseURL, opts.APIKey = srv.URL, key
	if opts.Model == "" {
		opts.Model = "qwen2.5:7b"
	}
	if opts.RetryBase == 0 {
		opts.RetryBase = 5 * time.Millisecond
	}
	p, err := openai.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func chat(t *testing.T, p llm.Provider, req llm.Request) ([]string, *llm.Final, error) {
	t.Helper()
	s, err := p.Chat(context.Background(), req)
	if err != nil {
		return nil, nil, err
	}
	defer s.Close()
	var chunks []string
	for {
		c, err := s.Next()
		if err != nil {
			return chunks, nil, err
		}
		if c.Text != "" {
			chunks = append(chunks, c.Text)
		}
		if c.Final != nil {
			if _, err := s.Next(); err != io.EOF {
				t.Errorf("after the final chunk: %v, want io.EOF", err)
			}
			return chunks, c.Final, nil
		}
	}
}

var tools = []llm.ToolDef{
	{Name: "gpio/write", Doc: "Set an output pin.", Params: json.RawMessage(`{"type":"object","properties":{"pin":{"type":"string"},"level":{"type":"string","enum":["low","high"]}},"required":["pin","level"]}`)},
	{Name: "sys/time", Doc: "The time."},
}

func TestStreamingText(t *testing.T) {
	srv := openaitest.New(t)
	srv.Push(openaitest.Reply{Text: []string{"Hel", "lo", ", wörld"}, Usage: &openaitest.Usage{Prompt: 42, Completion: 3, Cached: 32}})
	p := provider(t, srv, openai.Options{Options: remote.Options{Name: "lan"}})
	chunks, f, err := chat(t, p, llm.Request{Messages: []llm.Message{{Role: llm.RoleSystem, Content: "Be brief."}, {Role: llm.RoleUser, Content: "hi"}},
		MaxTokens: 100, Stop: []string{"\n\n"}, Sampling: &llm.Sampling{Temperature: 0.7, TopP: 0.8, TopK: 20, Seed: 7}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(chunks, "|") != "Hel|lo|, wörld" {
		t.Errorf("chunks %q", chunks)
	}
	if f.Reason != llm.ReasonStop || f.Usage != (llm.Usage{PromptTokens: 42, CompletionTokens: 3, CachedTokens: 32}) ||
		f.Provider != "lan" || f.Model != "qwen2.5:7b" || len(f.ToolCalls) != 0 || f.Timing.FirstToken <= 0 {
		t.Errorf("final %+v", f)
	}
	r := srv.Requests()[0]
	if r.Header.Get("Authorization") != "Bearer "+key || r.Header.Get("Content-Type") != "application/json" {
		t.Errorf("header %v", r.Header)
	}
	b := r.Body
	if b.Model != "qwen2.5:7b" || !b.Stream || b.StreamOptions == nil || !b.StreamOptions.IncludeUsage || b.MaxTokens != 100 ||
		len(b.Stop) != 1 || b.Temperature == nil || *b.Temperature < 0.69 || b.TopP == nil || b.Seed == nil || *b.Seed != 7 {
		t.Errorf("request %s", r.Raw)
	}
	// top_k is llama-server's, not OpenAI's: not sent unless the style is gbnf.
	if b.TopK != 0 || b.Grammar != "" || b.ResponseFormat != nil || b.ToolChoice != nil || len(b.Tools) != 0 {
		t.Errorf("request %s", r.Raw)
	}
	if len(b.Messages) != 2 || b.Messages[0].Role != "system" || *b.Messages[0].Content != "Be brief." || *b.Messages[1].Content != "hi" {
		t.Errorf("messages %s", r.Raw)
	}
}

func TestToolCallsSplitAcrossChunks(t *testing.T) {
	srv := openaitest.New(t)
	srv.Push(openaitest.Reply{Text: []string{"On it."}, Calls: []openaitest.Call{
		{ID: "call_a", Name: "gpio/write", Args: `{"pin":"led","level":"high"}`, Pieces: 5},
		{Name: "sys/time", Args: ""},
	}})
	p := provider(t, srv, openai.Options{})
	chunks, f, err := chat(t, p, llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "light"}}, Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(chunks, "") != "On it." || f.Reason != llm.ReasonStop || len(f.ToolCalls) != 2 {
		t.Fatalf("chunks %q, final %+v", chunks, f)
	}
	c := f.ToolCalls[0]
	if c.ID != "call_a" || c.Name != "gpio/write" || string(c.Arguments) != `{"pin":"led","level":"high"}` {
		t.Errorf("call 0 %+v %s", c, c.Arguments)
	}
	if c := f.ToolCalls[1]; c.ID != "call_1_1" || c.Name != "sys/time" || string(c.Arguments) != "{}" {
		t.Errorf("call 1 %+v %s", c, c.Arguments)
	}
	b := srv.Requests()[0].Body
	if names := srv.Requests()[0].ToolNames(); strings.Join(names, ",") != "gpio__write,sys__time" {
		t.Errorf("tool names %q", names)
	}
	if b.Tools[0].Type != "function" || b.Tools[0].Function.Description != "Set an output pin." ||
		!strings.Contains(string(b.Tools[0].Function.Parameters), `"enum":["low","high"]`) ||
		string(b.Tools[1].Function.Parameters) != `{"type":"object","properties":{}}` {
		t.Errorf("tools %s", srv.Requests()[0].Raw)
	}
}

func TestConversationWithToolResults(t *testing.T) {
	srv := openaitest.New(t)
	srv.Push(openaitest.Text("Done."))
	p := provider(t, srv, openai.Options{})
	_, _, err := chat(t, p, llm.Request{Tools: tools, Messages: []llm.Message{
		{Role: llm.RoleUser, Content: "light and time"},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{
			{ID: "call_x", Name: "gpio/write", Arguments: json.RawMessage(`{"pin":"led","level":"high"}`)},
			{Name: "sys/time"}, // no ID: from the local model
		}},
		{Role: llm.RoleTool, ToolCallID: "call_x", Content: "ok"},
		{Role: llm.RoleTool, Content: "12:00"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	m := srv.Requests()[0].Body.Messages
	if len(m) != 4 || m[1].Role != "assistant" || m[1].Content != nil || len(m[1].ToolCalls) != 2 {
		t.Fatalf("messages %s", srv.Requests()[0].Raw)
	}
	tc := m[1].ToolCalls
	if tc[0].ID != "call_x" || tc[0].Type != "function" || tc[0].Function.Name != "gpio__write" || tc[0].Function.Arguments != `{"pin":"led","level":"high"}` ||
		tc[1].ID == "" || tc[1].Function.Name != "sys__time" || tc[1].Function.Arguments != "{}" {
		t.Errorf("tool calls %+v", tc)
	}
	if m[2].Role != "tool" || m[2].ToolCallID != "call_x" || *m[2].Content != "ok" || m[3].ToolCallID != tc[1].ID || *m[3].Content != "12:00" {
		t.Errorf("tool results %s", srv.Requests()[0].Raw)
	}
}

func TestRateLimitThenSuccess(t *testing.T) {
	srv := openaitest.New(t)
	srv.Push(openaitest.RateLimited("0.3"), openaitest.Text("ok"))
	p := provider(t, srv, openai.Options{})
	start := time.Now()
	chunks, _, err := chat(t, p, llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
	if err != nil || strings.Join(chunks, "") != "ok" {
		t.Fatalf("%q, %v", chunks, err)
	}
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Errorf("retried after %s; Retry-After asked for 300ms", d)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("%d requests", n)
	}
}

func TestServerErrorRetriedThenGiveUp(t *testing.T) {
	srv := openaitest.New(t)
	for range 3 {
		srv.Push(openaitest.Error(500, "The server had an error while processing your request."))
	}
	p := provider(t, srv, openai.Options{Options: remote.Options{Name: "lan", MaxRetries: 2}})
	_, _, err := chat(t, p, llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
	if !errors.Is(err, llm.ErrUnavailable) || len(srv.Requests()) != 3 {
		t.Fatalf("%v after %d requests", err, len(srv.Requests()))
	}
	want := `openai "lan": 500 Internal Server Error: The server had an error while processing your request. (after 3 attempts)`
	if err.Error() != want {
		t.Errorf("error %q\nwant  %q", err, want)
	}
}

func TestContextLengthIsCapacity(t *testing.T) {
	srv := openaitest.New(t)
	srv.Push(openaitest.ContextLength())
	p := provider(t, srv, openai.Options{})
	_, _, err := chat(t, p, llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "long"}}})
	if !errors.Is(err, llm.ErrCapacity) || errors.Is(err, llm.ErrUnavailable) || len(srv.Requests()) != 1 || !strings.Contains(err.Error(), "maximum context length") {
		t.Fatalf("%v after %d requests", err, len(srv.Requests()))
	}
	// llama-server says it inside the stream.
	srv.Push(openaitest.Reply{StreamError: "the request exceeds the available context size, try increasing it"})
	_, _, err = chat(t, p, llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "long"}}})
	if !errors.Is(err, llm.ErrCapacity) {
		t.Fatalf("in-stream context error: %v", err)
	}
}

func TestStalledStream(t *testing.T) {
	srv := openaitest.New(t)
	srv.Push(openaitest.Stall("partial "))
	p := provider(t, srv, openai.Options{Options: remote.Options{Name: "lan", IdleTimeout: 200 * time.Millisecond}})
	start := time.Now()
	chunks, _, err := chat(t, p, llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
	if !errors.Is(err, llm.ErrUnavailable) || err.Error() != `openai "lan": stream stalled: nothing received for 200ms` || strings.Join(chunks, "") != "partial " {
		t.Fatalf("chunks %q, err %v", chunks, err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("stall noticed after %s", d)
	}
	if len(srv.Requests()) != 1 {
		t.Errorf("a stream that started was retried: %d requests", len(srv.Requests()))
	}
}

func TestCutStream(t *testing.T) {
	srv := openaitest.New(t)
	srv.Push(openaitest.Reply{Text: []string{"a"}, Finish: "length", NoDone: true})
	p := provider(t, srv, openai.Options{})
	_, f, err := chat(t, p, llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
	if err != nil || f.Reason != llm.ReasonLength {
		t.Fatalf("no [DONE] after a finish reason: %+v, %v", f, err)
	}
}

func TestBreaker(t *testing.T) {
	srv := openaitest.New(t)
	srv.Push(openaitest.Error(502, "bad gateway"), openaitest.Error(503, "unavailable"), openaitest.Text("back"))
	p := provider(t, srv, openai.Options{Options: remote.Options{MaxRetries: -1, BreakerThreshold: 2, BreakerCooldown: 200 * time.Millisecond}})
	req := llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}
	for range 2 {
		if _, _, err := chat(t, p, req); !errors.Is(err, llm.ErrUnavailable) {
			t.Fatal(err)
		}
	}
	start := time.Now()
	_, _, err := chat(t, p, req)
	if !errors.Is(err, llm.ErrUnavailable) || !strings.Contains(err.Error(), "circuit breaker open") || len(srv.Requests()) != 2 || time.Since(start) > 50*time.Millisecond {
		t.Fatalf("open breaker: %v after %d requests", err, len(srv.Requests()))
	}
	time.Sleep(250 * time.Millisecond)
	if chunks, _, err := chat(t, p, req); err != nil || strings.Join(chunks, "") != "back" {
		t.Fatalf("after the cool-down: %q, %v", chunks, err)
	}
}

func TestKeyNeverInErrors(t *testing.T) {
	srv := openaitest.New(t)
	srv.Push(openaitest.Error(401, "Incorrect API key provided: "+key+"."),
		openaitest.Reply{StreamError: "bad key " + key})
	p := provider(t, srv, openai.Options{})
	req := llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}
	_, _, err := chat(t, p, req)
	if err == nil || strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "401 Unauthorized: Incorrect API key provided: [redacted].") {
		t.Fatalf("401: %v", err)
	}
	if len(srv.Requests()) != 1 {
		t.Errorf("401 retried")
	}
	if _, _, err = chat(t, p, req); err == nil || strings.Contains(err.Error(), key) {
		t.Fatalf("in-stream: %v", err)
	}
	// Unreachable server: the error names the host, never the key.
	p2, _ := openai.New(openai.Options{Options: remote.Options{BaseURL: "http://127.0.0.1:1/v1", Model: "m", APIKey: key, MaxRetries: -1}})
	_, _, err = chat(t, p2, req)
	if !errors.Is(err, llm.ErrUnavailable) || strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Fatalf("unreachable: %v", err)
	}
}

func TestNoReplyScripted(t *testing.T) {
	srv := openaitest.New(t)
	p := provider(t, srv, openai.Options{})
	_, _, err := chat(t, p, llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
	if err == nil || !strings.Contains(err.Error(), "no reply scripted for request 1") {
		t.Fatal(err)
	}
}

func TestOptions(t *testing.T) {
	for _, o := range []openai.Options{{}, {Options: remote.Options{Model: "m", APIKey: "sk-abc\n"}}, {Options: remote.Options{Model: "m"}, Constraint: "xml"},
		{Options: remote.Options{Model: "m", BaseURL: "ftp://x"}}, {Options: remote.Options{Model: "m"}, MaxTokensField: "n"}} {
		if _, err := openai.New(o); err == nil {
			t.Errorf("New(%+v) accepted", o)
		}
	}
	p, _ := openai.New(openai.Options{Options: remote.Options{Model: "m", Context: 32768}})
	if c := p.Caps(); c != (llm.Caps{Context: 32768, Tools: true}) || p.Name() != "openai" {
		t.Errorf("caps %+v", c)
	}
	p, _ = openai.New(openai.Options{Options: remote.Options{Model: "m"}, Constraint: openai.StyleGBNF})
	if c := p.Caps(); c != (llm.Caps{Context: 8192, Tools: true, Grammar: true}) {
		t.Errorf("caps %+v", c)
	}
	// A tool name too long for the wire is refused before sending.
	_, err := p.Chat(context.Background(), llm.Request{Tools: []llm.ToolDef{{Name: strings.Repeat("x/", 30)}}})
	if err == nil || !strings.Contains(err.Error(), "1 to 64 characters") {
		t.Errorf("long name: %v", err)
	}
}

func TestMaxCompletionTokens(t *testing.T) {
	srv := openaitest.New(t)
	srv.Push(openaitest.Text("x"))
	p := provider(t, srv, openai.Options{MaxTokensField: "max_completion_tokens"})
	chat(t, p, llm.Request{MaxTokens: 9, Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
	if b := srv.Requests()[0].Body; b.MaxCompletionTokens != 9 || b.MaxTokens != 0 {
		t.Errorf("%s", srv.Requests()[0].Raw)
	}
}

var spec = &grammar.Spec{Form: grammar.FormJSON, Mode: grammar.ModeCalls, Tools: []grammar.ToolSpec{
	{Name: "gpio/write", Params: []grammar.ArgSpec{{Name: "pin", Type: "string", Required: true, Enum: []string{"led"}}, {Name: "level", Type: "string", Required: true, Enum: []string{"low", "high"}}}},
}}

func TestConstraintPassthrough(t *testing.T) {
	req := llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}, Tools: tools, Constraint: spec,
		NoThink: true, Sampling: &llm.Sampling{TopK: 20, MinP: 0.05, RepeatPenalty: 1.1}, MaxTokens: 100}
	// The grammar and the schema name the tools as the request's tools do.
	wired := *spec
	wired.Tools = []grammar.ToolSpec{spec.Tools[0]}
	wired.Tools[0].Name = "gpio__write"
	gbnf, err := grammar.GBNF(wired)
	if err != nil {
		t.Fatal(err)
	}
	schema, err := grammar.JSONSchema(wired)
	if err != nil {
		t.Fatal(err)
	}
	for _, style := range []openai.Style{openai.StyleNone, openai.StyleGBNF, openai.StyleJSONSchema, openai.StyleOllama} {
		t.Run(string(style), func(t *testing.T) {
			srv := openaitest.New(t)
			srv.Push(openaitest.Text(`{"pin":"led","level":"high"}`))
			p := provider(t, srv, openai.Options{Constraint: style, StrictSchema: true})
			if _, _, err := chat(t, p, req); err != nil {
				t.Fatal(err)
			}
			r := srv.Requests()[0]
			b := r.Body
			switch style {
			case openai.StyleNone:
				if b.Grammar != "" || b.ResponseFormat != nil || b.ToolChoice != nil || b.TopK != 0 || b.ChatTemplateKwargs != nil {
					t.Errorf("constraint sent: %s", r.Raw)
				}
			case openai.StyleGBNF:
				// llama-server refuses a grammar with callable tools.
				if b.Grammar != gbnf || string(b.ToolChoice) != `"none"` || len(b.Tools) != 2 || b.ResponseFormat != nil ||
					b.TopK != 20 || b.MinP < 0.04 || b.RepeatPenalty < 1.09 || b.ChatTemplateKwargs["enable_thinking"] != false || b.MaxTokens != 100 {
					t.Errorf("gbnf: %s", r.Raw)
				}
			case openai.StyleJSONSchema, openai.StyleOllama:
				rf := b.ResponseFormat
				if b.Grammar != "" || rf == nil || rf.Type != "json_schema" || rf.JSONSchema == nil || rf.JSONSchema.Name == "" ||
					!jsonEqual(rf.JSONSchema.Schema, schema) || rf.JSONSchema.Strict != (style == openai.StyleJSONSchema) ||
					(req.Constraint.Mode == grammar.ModeCalls) != (string(b.ToolChoice) == `"required"`) {
					t.Errorf("json_schema: %s", r.Raw)
				}
				// Room for the blanks the server's grammar allows: 22
				// after each of the arguments object's 10 JSON tokens.
				// (The context is the kind's 8,192: the room stops at 2,048.)
				if blanks, ok := grammar.SchemaBlanks(wired); !ok || blanks != 220 || b.MaxTokens != 100+blanks {
					t.Errorf("max_tokens %d with %d blanks (%v), want 100 and the blanks", b.MaxTokens, blanks, ok)
				}
			}
		})
	}
	// A small window: the room stops at a quarter of it (vLLM refuses a
	// prompt and max_tokens over the window).
	small := openaitest.New(t)
	small.Push(openaitest.Text(`{"pin":"led","level":"high"}`))
	if _, _, err := chat(t, provider(t, small, openai.Options{Constraint: openai.StyleJSONSchema, Options: remote.Options{Context: 480}}), req); err != nil {
		t.Fatal(err)
	}
	if b := small.Requests()[0].Body; b.MaxTokens != 120 {
		t.Errorf("max_tokens %d in a window of 480, want 120", b.MaxTokens)
	}
	// Under a grammar, a budget shorter than the longest call it admits (a
	// string of 300 characters, each at worst an escape or 4 bytes of UTF-8)
	// gets room for that call, up to a quarter of the window (8,192).
	long := grammar.Spec{Form: grammar.FormQwen, Mode: grammar.ModeCalls, Tools: []grammar.ToolSpec{
		{Name: "note/add", Params: []grammar.ArgSpec{{Name: "text", Type: "string", Required: true, MaxLen: 300}}}}}
	longest, ok := grammar.MaxReply(llm.WireSpec(long))
	if !ok || longest < 300 {
		t.Fatalf("MaxReply = %d, %v", longest, ok)
	}
	g := openaitest.New(t)
	g.Push(openaitest.Text(`<tool_call>{"name": "note__add", "arguments": {"text": "x"}}</tool_call>`))
	if _, _, err := chat(t, provider(t, g, openai.Options{Constraint: openai.StyleGBNF}), llm.Request{Messages: req.Messages, Constraint: &long, MaxTokens: 100}); err != nil {
		t.Fatal(err)
	}
	if b := g.Requests()[0].Body; b.MaxTokens != min(longest, 2048) {
		t.Errorf("gbnf: max_tokens %d, want the longest call's %d up to 2048", b.MaxTokens, longest)
	}
	// Text only: no schema can say it; the tools are switched off instead.
	srv := openaitest.New(t)
	srv.Push(openaitest.Text("hello"))
	p := provider(t, srv, openai.Options{Constraint: openai.StyleJSONSchema})
	text := *spec
	text.Mode = grammar.ModeText
	if _, _, err := chat(t, p, llm.Request{Messages: req.Messages, Tools: tools, Constraint: &text}); err != nil {
		t.Fatal(err)
	}
	if b := srv.Requests()[0].Body; b.ResponseFormat != nil || string(b.ToolChoice) != `"none"` {
		t.Errorf("text mode: %s", srv.Requests()[0].Raw)
	}
}

// A request's tool choice goes as the API's tool_choice when no constraint
// is sent; a constraint that is sent holds the reply to it by its mode, and
// a tool_choice beside it would ask for the API's calls instead, except that
// a JSON Schema of calls only says "required" too (issue 26: llama-server
// takes both), while a grammar cannot go with it (llama-server refuses it).
func TestToolChoice(t *testing.T) {
	calls, anyOut := *spec, *spec
	calls.Mode, anyOut.Mode = grammar.ModeCalls, grammar.ModeAny
	for _, c := range []struct {
		style      openai.Style
		choice     llm.ToolChoice
		constraint *grammar.Spec
		tools      []llm.ToolDef
		want       string
	}{
		{openai.StyleNone, llm.ToolChoiceRequired, &calls, tools, `"required"`},
		{openai.StyleNone, llm.ToolChoiceNone, nil, tools, `"none"`},
		{openai.StyleNone, llm.ToolChoiceAuto, nil, tools, ``},
		{openai.StyleNone, llm.ToolChoiceRequired, nil, nil, ``},                      // no tools: nothing to choose
		{openai.StyleJSONSchema, llm.ToolChoiceRequired, &calls, tools, `"required"`}, // the schema admits calls only, and says so
		{openai.StyleOllama, llm.ToolChoiceRequired, &calls, tools, `"required"`},
		{openai.StyleJSONSchema, llm.ToolChoiceAuto, &anyOut, tools, ``},
		{openai.StyleGBNF, llm.ToolChoiceRequired, &calls, tools, `"none"`}, // the grammar's calls come back as text
	} {
		srv := openaitest.New(t)
		srv.Push(openaitest.Text("hello"))
		p := provider(t, srv, openai.Options{Constraint: c.style})
		req := llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}, Tools: c.tools, Constraint: c.constraint, ToolChoice: c.choice}
		if _, _, err := chat(t, p, req); err != nil {
			t.Fatal(err)
		}
		if b := srv.Requests()[0].Body; string(b.ToolChoice) != c.want {
			t.Errorf("%s, %q: tool_choice %s, want %s", c.style, c.choice, b.ToolChoice, c.want)
		}
	}
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}

func TestCloseEarly(t *testing.T) {
	srv := openaitest.New(t)
	srv.Push(openaitest.Reply{Text: []string{"a", "b", "c"}, Delay: 50 * time.Millisecond}, openaitest.Text("next"))
	p := provider(t, srv, openai.Options{})
	s, err := p.Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	if c, err := s.Next(); err != nil || c.Text != "a" {
		t.Fatalf("%+v %v", c, err)
	}
	s.Close()
	s.Close()
	if _, err := s.Next(); err == nil {
		t.Error("Next after Close succeeded")
	}
	if chunks, _, err := chat(t, p, llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}); err != nil || chunks[0] != "next" {
		t.Fatalf("after an early close: %q %v", chunks, err)
	}
}

func TestCancel(t *testing.T) {
	srv := openaitest.New(t)
	srv.Push(openaitest.Stall("a"))
	p := provider(t, srv, openai.Options{Options: remote.Options{BreakerThreshold: 1}})
	ctx, cancel := context.WithCancel(context.Background())
	s, err := p.Chat(ctx, llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	s.Next()
	time.AfterFunc(50*time.Millisecond, cancel)
	if _, err := s.Next(); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
	srv.Push(openaitest.Text("ok"))
	if _, _, err := chat(t, p, llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}); err != nil {
		t.Fatalf("a cancelled call opened the breaker: %v", err)
	}
}

func TestCloseFromAnotherGoroutine(t *testing.T) {
	srv := openaitest.New(t)
	srv.Push(openaitest.Stall("a"), openaitest.Text("next"))
	p := provider(t, srv, openai.Options{Options: remote.Options{BreakerThreshold: 1}})
	s, err := p.Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	if c, err := s.Next(); err != nil || c.Text != "a" {
		t.Fatalf("%+v %v", c, err)
	}
	time.AfterFunc(50*time.Millisecond, func() { s.Close() })
	start := time.Now()
	if _, err := s.Next(); !errors.Is(err, remote.ErrClosed) || errors.Is(err, llm.ErrUnavailable) || time.Since(start) > 2*time.Second {
		t.Fatalf("Next blocked during Close: %v after %s", err, time.Since(start))
	}
	s.Close()
	// Closing is not a failure of the server: the breaker stays closed.
	if chunks, _, err := chat(t, p, llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}); err != nil || chunks[0] != "next" {
		t.Fatalf("%q %v", chunks, err)
	}
}

func TestFakeServerDefault(t *testing.T) {
	srv := openaitest.New(t)
	srv.Push(openaitest.ToolCall("gpio/write", `{"pin":"led","level":"high"}`))
	srv.Default(func(r openaitest.Request) openaitest.Reply {
		last := r.Body.Messages[len(r.Body.Messages)-1]
		return openaitest.Text("result was " + *last.Content)
	})
	p := provider(t, srv, openai.Options{})
	_, f, err := chat(t, p, llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "light"}}, Tools: tools})
	if err != nil || len(f.ToolCalls) != 1 {
		t.Fatalf("%+v %v", f, err)
	}
	msgs := []llm.Message{{Role: llm.RoleUser, Content: "light"}, {Role: llm.RoleAssistant, ToolCalls: f.ToolCalls},
		{Role: llm.RoleTool, ToolCallID: f.ToolCalls[0].ID, Content: "ok"}}
	chunks, _, err := chat(t, p, llm.Request{Messages: msgs, Tools: tools})
	if err != nil || strings.Join(chunks, "") != "result was ok" || srv.Pending() != 0 {
		t.Fatalf("%q %v", chunks, err)
	}
}

// A constrained reply writes its calls as text; the provider hands them back
// parsed, under the tools' names, in every constraint style, and the names
// the grammar and schema allow are the names the tools are offered under.
func TestConstrainedCallsComeBackParsed(t *testing.T) {
	two := &grammar.Spec{Form: grammar.FormQwen, Mode: grammar.ModeAny, Tools: []grammar.ToolSpec{
		{Name: "gpio/write", Params: []grammar.ArgSpec{{Name: "pin", Type: "string", Required: true}}}, {Name: "sys/time"}}}
	cases := map[openai.Style]string{
		openai.StyleGBNF:       "Sure.\n<tool_call>\n{\"name\": \"gpio__write\", \"arguments\": {\"pin\": \"led\"}}\n</tool_call>",
		openai.StyleJSONSchema: `{"name": "gpio__write", "arguments": {"pin": "led"}}`,
		openai.StyleOllama:     `{"name":"gpio__write","arguments":{"pin":"led"}}`,
	}
	for style, reply := range cases {
		t.Run(string(style), func(t *testing.T) {
			srv := openaitest.New(t)
			srv.Push(openaitest.Reply{Text: []string{reply[:7], reply[7:]}})
			p := provider(t, srv, openai.Options{Constraint: style})
			chunks, f, err := chat(t, p, llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "led on"}}, Tools: tools, Constraint: two})
			if err != nil {
				t.Fatal(err)
			}
			if len(f.ToolCalls) != 1 || f.ToolCalls[0].Name != "gpio/write" || !jsonEqual(f.ToolCalls[0].Arguments, []byte(`{"pin":"led"}`)) || f.CallsErr != nil || f.Raw != reply {
				t.Fatalf("final %+v", f)
			}
			if text := strings.Join(chunks, ""); strings.Contains(text, "gpio") || style == openai.StyleGBNF && text != "Sure." {
				t.Errorf("the call reached the text: %q", text)
			}
			body := srv.Requests()[0].Body
			offered := body.Tools[0].Function.Name
			constrained := body.Grammar
			if body.ResponseFormat != nil {
				constrained = string(body.ResponseFormat.JSONSchema.Schema)
			}
			if offered != "gpio__write" || !strings.Contains(constrained, "gpio__write") || strings.Contains(constrained, "gpio/write") {
				t.Errorf("offered %q, constrained to %s", offered, constrained)
			}
		})
	}
	// In mode any the schema lets the model answer instead; an unreadable reply
	// is an error for the agent to show the model, with how to write a call.
	srv := openaitest.New(t)
	srv.Push(openaitest.Text(`{"answer": "It is 3 pm."}`), openaitest.Text(`{"name": "gpio__write"`))
	p := provider(t, srv, openai.Options{Constraint: openai.StyleJSONSchema})
	req := llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "time?"}}, Tools: tools, Constraint: two}
	if chunks, f, err := chat(t, p, req); err != nil || strings.Join(chunks, "") != "It is 3 pm." || len(f.ToolCalls) != 0 {
		t.Errorf("answer: %q %+v %v", chunks, f, err)
	}
	if _, f, err := chat(t, p, req); err != nil || f.CallsErr == nil || !strings.Contains(f.CallsErr.Error(), `{"answer"`) {
		t.Errorf("unreadable: %+v %v", f, err)
	}
}

// The config's sampling goes with a request that has none of its own.
func TestOptionsSampling(t *testing.T) {
	srv := openaitest.New(t)
	srv.Push(openaitest.Text("a"), openaitest.Text("b"))
	p := provider(t, srv, openai.Options{Options: remote.Options{Sampling: &llm.Sampling{Temperature: 0.2, Seed: 42}}})
	msgs := []llm.Message{{Role: llm.RoleUser, Content: "hi"}}
	chat(t, p, llm.Request{Messages: msgs})
	chat(t, p, llm.Request{Messages: msgs, Sampling: &llm.Sampling{Temperature: 1}})
	r := srv.Requests()
	if b := r[0].Body; b.Temperature == nil || *b.Temperature != 0.2 || b.Seed == nil || *b.Seed != 42 {
		t.Errorf("defaults: %s", r[0].Raw)
	}
	if b := r[1].Body; b.Temperature == nil || *b.Temperature != 1 || b.Seed != nil {
		t.Errorf("the request's own: %s", r[1].Raw)
	}
}
