package anthropic_test

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
	"github.com/clawedge/clawedge/llm/anthropic"
	"github.com/clawedge/clawedge/llm/anthropic/anthropictest"
	"github.com/clawedge/clawedge/llm/remote"
)

const key = "sk-ant-test-0123456789abcdef"

func provider(t *testing.T, srv *anthropictest.Server, opts anthropic.Options) *anthropic.Provider {
	t.Helper()
	opts.BaseURL, opts.APIKey = srv.URL, key
	if opts.Model == "" {
		opts.Model = "claude-sonnet-4-5"
	}
	if opts.RetryBase == 0 {
		opts.RetryBase = 5 * time.Millisecond
	}
	p, err := anthropic.New(opts)
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
	{Name: "gpio/write", Doc: "Set an output pin.", Params: json.RawMessage(`{"type":"object","properties":{"pin":{"type":"string"}},"required":["pin"]}`)},
	{Name: "sys/time", Doc: "The time."},
}

var hi = []llm.Message{{Role: llm.RoleUser, Content: "hi"}}

func TestStreamingText(t *testing.T) {
	srv := anthropictest.New(t)
	srv.Push(anthropictest.Reply{Text: []string{"Hel", "lo"}, Ping: true, Usage: &anthropictest.Usage{Input: 5, CacheRead: 100, CacheWrite: 20, Output: 7}})
	p := provider(t, srv, anthropic.Options{Options: remote.Options{Name: "claude"}})
	chunks, f, err := chat(t, p, llm.Request{Messages: []llm.Message{
		{Role: llm.RoleSystem, Content: "You run a garage door."}, {Role: llm.RoleSystem, Content: "Be brief."}, {Role: llm.RoleUser, Content: "hi"}},
		Stop: []string{"END"}, Sampling: &llm.Sampling{Temperature: 1.5, TopK: 40, TopP: 0.9}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(chunks, "|") != "Hel|lo" {
		t.Errorf("chunks %q", chunks)
	}
	if f.Reason != llm.ReasonStop || f.Usage != (llm.Usage{PromptTokens: 125, CachedTokens: 100, CompletionTokens: 7}) ||
		f.Provider != "claude" || f.Model != "claude-sonnet-4-5" || f.Timing.FirstToken <= 0 {
		t.Errorf("final %+v", f)
	}
	r := srv.Requests()[0]
	if r.Header.Get("x-api-key") != key || r.Header.Get("anthropic-version") != "2023-06-01" || r.Header.Get("Authorization") != "" {
		t.Errorf("header %v", r.Header)
	}
	b := r.Body
	if b.Model != "claude-sonnet-4-5" || !b.Stream || b.MaxTokens != anthropic.DefaultMaxTokens || len(b.StopSequences) != 1 ||
		b.Temperature == nil || *b.Temperature != 1 || b.TopK != 40 || b.TopP != nil {
		t.Errorf("request %s", r.Raw)
	}
	// System prompts are top-level blocks; the last one marks the cached prefix.
	if len(b.System) != 2 || b.System[0].Text != "You run a garage door." || b.System[0].CacheControl != nil ||
		b.System[1].CacheControl == nil || b.System[1].CacheControl.Type != "ephemeral" {
		t.Errorf("system %s", r.Raw)
	}
	if len(b.Messages) != 1 || b.Messages[0].Role != "user" || b.Messages[0].Content[0].Type != "text" || b.Messages[0].Content[0].Text != "hi" {
		t.Errorf("messages %s", r.Raw)
	}
}

func TestToolUse(t *testing.T) {
	srv := anthropictest.New(t)
	srv.Push(anthropictest.Reply{Text: []string{"Turning it on."}, Calls: []anthropictest.Call{
		{ID: "toolu_a", Name: "gpio/write", Args: `{"pin":"led"}`, Pieces: 4},
		{Name: "sys/time", Args: ""},
	}})
	p := provider(t, srv, anthropic.Options{})
	chunks, f, err := chat(t, p, llm.Request{Messages: hi, Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(chunks, "") != "Turning it on." || f.Reason != llm.ReasonStop || len(f.ToolCalls) != 2 {
		t.Fatalf("chunks %q, final %+v", chunks, f)
	}
	if c := f.ToolCalls[0]; c.ID != "toolu_a" || c.Name != "gpio/write" || string(c.Arguments) != `{"pin":"led"}` {
		t.Errorf("call 0 %+v %s", c, c.Arguments)
	}
	if c := f.ToolCalls[1]; c.ID != "toolu_1_1" || c.Name != "sys/time" || string(c.Arguments) != "{}" {
		t.Errorf("call 1 %+v %s", c, c.Arguments)
	}
	r := srv.Requests()[0]
	if names := r.ToolNames(); strings.Join(names, ",") != "gpio__write,sys__time" {
		t.Errorf("tool names %q", names)
	}
	b := r.Body
	if b.Tools[0].CacheControl != nil || b.Tools[1].CacheControl == nil || b.Tools[1].CacheControl.Type != "ephemeral" ||
		b.Tools[0].Description != "Set an output pin." || !strings.Contains(string(b.Tools[0].InputSchema), `"required":["pin"]`) ||
		string(b.Tools[1].InputSchema) != `{"type":"object","properties":{}}` {
		t.Errorf("tools %s", r.Raw)
	}
}

func TestConversationMapping(t *testing.T) {
	srv := anthropictest.New(t)
	srv.Push(anthropictest.Text("Done."))
	p := provider(t, srv, anthropic.Options{NoCache: true})
	_, _, err := chat(t, p, llm.Request{Tools: tools, Messages: []llm.Message{
		{Role: llm.RoleSystem, Content: "sys"},
		{Role: llm.RoleUser, Content: "light and time"},
		{Role: llm.RoleAssistant, Content: "Sure.", ToolCalls: []llm.ToolCall{
			{ID: "toolu_x", Name: "gpio/write", Arguments: json.RawMessage(`{"pin":"led"}`)},
			{Name: "sys/time", Arguments: json.RawMessage(`"not an object"`)},
		}},
		{Role: llm.RoleTool, ToolCallID: "toolu_x", Content: "ok"},
		{Role: llm.RoleTool, Content: "12:00"},
		{Role: llm.RoleUser, Content: "thanks"},
		{Role: llm.RoleAssistant, Content: ""},
		{Role: llm.RoleUser, Content: "and?"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()[0]
	m := r.Body.Messages
	if len(m) != 3 || m[0].Role != "user" || m[1].Role != "assistant" || m[2].Role != "user" {
		t.Fatalf("messages %s", r.Raw)
	}
	a := m[1].Content
	if len(a) != 3 || a[0].Type != "text" || a[0].Text != "Sure." || a[1].Type != "tool_use" || a[1].ID != "toolu_x" ||
		a[1].Name != "gpio__write" || string(a[1].Input) != `{"pin":"led"}` || a[2].ID == "" || a[2].Name != "sys__time" || string(a[2].Input) != "{}" {
		t.Errorf("assistant %s", r.Raw)
	}
	// Both results in one user message, first, then the user's text; the
	// empty assistant message is left out, so the roles still alternate.
	u := m[2].Content
	if len(u) != 4 || u[0].Type != "tool_result" || u[0].ToolUseID != "toolu_x" || string(u[0].Content) != `"ok"` ||
		u[1].Type != "tool_result" || u[1].ToolUseID != a[2].ID || string(u[1].Content) != `"12:00"` ||
		u[2].Type != "text" || u[2].Text != "thanks" || u[3].Text != "and?" {
		t.Errorf("tool results %s", r.Raw)
	}
	if r.Body.System[0].CacheControl != nil || r.Body.Tools[1].CacheControl != nil {
		t.Errorf("NoCache: %s", r.Raw)
	}
}

func TestStopReasons(t *testing.T) {
	for stop, want := range map[string]llm.Reason{"end_turn": llm.ReasonStop, "max_tokens": llm.ReasonLength,
		"stop_sequence": llm.ReasonStop, "model_context_window_exceeded": llm.ReasonContext, "refusal": llm.ReasonStop} {
		srv := anthropictest.New(t)
		srv.Push(anthropictest.Reply{Text: []string{"x"}, StopReason: stop})
		p := provider(t, srv, anthropic.Options{})
		if _, f, err := chat(t, p, llm.Request{Messages: hi, MaxTokens: 3}); err != nil || f.Reason != want {
			t.Errorf("%s: %+v, %v", stop, f, err)
		}
		if srv.Requests()[0].Body.MaxTokens != 3 {
			t.Errorf("max_tokens %d", srv.Requests()[0].Body.MaxTokens)
		}
	}
}

func TestRetries(t *testing.T) {
	srv := anthropictest.New(t)
	srv.Push(anthropictest.RateLimited("0.2"), anthropictest.Overloaded(), anthropictest.Text("ok"))
	p := provider(t, srv, anthropic.Options{})
	start := time.Now()
	chunks, _, err := chat(t, p, llm.Request{Messages: hi})
	if err != nil || strings.Join(chunks, "") != "ok" || len(srv.Requests()) != 3 {
		t.Fatalf("%q, %v after %d requests", chunks, err, len(srv.Requests()))
	}
	if d := time.Since(start); d < 200*time.Millisecond {
		t.Errorf("retry-after 0.2 not honoured: %s", d)
	}

	for range 2 {
		srv.Push(anthropictest.Error(500, "Internal server error"))
	}
	p = provider(t, srv, anthropic.Options{Options: remote.Options{Name: "claude", MaxRetries: 1}})
	_, _, err = chat(t, p, llm.Request{Messages: hi})
	if !errors.Is(err, llm.ErrUnavailable) || err.Error() != `anthropic "claude": 500 Internal Server Error: Internal server error (after 2 attempts)` {
		t.Fatalf("%v", err)
	}
}

func TestContextLength(t *testing.T) {
	srv := anthropictest.New(t)
	srv.Push(anthropictest.ContextLength())
	p := provider(t, srv, anthropic.Options{})
	_, _, err := chat(t, p, llm.Request{Messages: hi})
	if !errors.Is(err, llm.ErrCapacity) || len(srv.Requests()) != 1 || !strings.Contains(err.Error(), "prompt is too long") {
		t.Fatalf("%v after %d requests", err, len(srv.Requests()))
	}
}

func TestStreamErrorAndStall(t *testing.T) {
	srv := anthropictest.New(t)
	srv.Push(anthropictest.Reply{Text: []string{"par"}, StreamError: "Overloaded"}, anthropictest.Stall("a", "b"))
	p := provider(t, srv, anthropic.Options{Options: remote.Options{Name: "claude", IdleTimeout: 200 * time.Millisecond}})
	chunks, _, err := chat(t, p, llm.Request{Messages: hi})
	if !errors.Is(err, llm.ErrUnavailable) || strings.Join(chunks, "") != "par" || err.Error() != `anthropic "claude": error in the reply stream: overloaded_error: Overloaded` {
		t.Fatalf("%q %v", chunks, err)
	}
	chunks, _, err = chat(t, p, llm.Request{Messages: hi})
	if !errors.Is(err, llm.ErrUnavailable) || strings.Join(chunks, "") != "ab" || err.Error() != `anthropic "claude": stream stalled: nothing received for 200ms` {
		t.Fatalf("%q %v", chunks, err)
	}
}

func TestBreaker(t *testing.T) {
	srv := anthropictest.New(t)
	srv.Push(anthropictest.Overloaded(), anthropictest.Overloaded(), anthropictest.Text("back"))
	p := provider(t, srv, anthropic.Options{Options: remote.Options{MaxRetries: -1, BreakerThreshold: 2, BreakerCooldown: 200 * time.Millisecond}})
	for range 2 {
		if _, _, err := chat(t, p, llm.Request{Messages: hi}); !errors.Is(err, llm.ErrUnavailable) {
			t.Fatal(err)
		}
	}
	if _, _, err := chat(t, p, llm.Request{Messages: hi}); !errors.Is(err, llm.ErrUnavailable) || !strings.Contains(err.Error(), "circuit breaker open") || len(srv.Requests()) != 2 {
		t.Fatalf("open: %v after %d requests", err, len(srv.Requests()))
	}
	time.Sleep(250 * time.Millisecond)
	if chunks, _, err := chat(t, p, llm.Request{Messages: hi}); err != nil || strings.Join(chunks, "") != "back" {
		t.Fatalf("after the cool-down: %q %v", chunks, err)
	}
}

func TestKeyNeverInErrors(t *testing.T) {
	srv := anthropictest.New(t)
	srv.Push(anthropictest.Error(401, "invalid x-api-key "+key), anthropictest.Reply{StreamError: "bad " + key})
	p := provider(t, srv, anthropic.Options{})
	for range 2 {
		_, _, err := chat(t, p, llm.Request{Messages: hi})
		if err == nil || strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "[redacted]") {
			t.Fatalf("%v", err)
		}
	}
	p2, _ := anthropic.New(anthropic.Options{Options: remote.Options{BaseURL: "http://127.0.0.1:1", Model: "m", APIKey: key, MaxRetries: -1}})
	_, _, err := chat(t, p2, llm.Request{Messages: hi})
	if !errors.Is(err, llm.ErrUnavailable) || strings.Contains(err.Error(), key) {
		t.Fatalf("unreachable: %v", err)
	}
}

func TestOptionsAndCaps(t *testing.T) {
	for _, o := range []remote.Options{{APIKey: "k"}, {Model: "m"}, {Model: "m", APIKey: "k\r\n"}, {Model: "m", APIKey: "k", BaseURL: "x"}} {
		if _, err := anthropic.New(anthropic.Options{Options: o}); err == nil {
			t.Errorf("New(%+v) accepted", o)
		}
	}
	p, _ := anthropic.New(anthropic.Options{Options: remote.Options{Model: "m", APIKey: "k"}})
	if c := p.Caps(); c != (llm.Caps{Context: 200000, Tools: true}) || p.Name() != "anthropic" {
		t.Errorf("caps %+v", c)
	}
	// A constraint is not sent (the API has no such field) and not refused.
	srv := anthropictest.New(t)
	srv.Push(anthropictest.Text("x"))
	p = provider(t, srv, anthropic.Options{})
	spec := &grammar.Spec{Form: grammar.FormJSON, Mode: grammar.ModeCalls, Tools: []grammar.ToolSpec{{Name: "sys/time"}}}
	if _, _, err := chat(t, p, llm.Request{Messages: hi, Constraint: spec}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(srv.Requests()[0].Raw), "grammar") {
		t.Errorf("constraint sent: %s", srv.Requests()[0].Raw)
	}
}

// A request's tool choice is the API's tool_choice: required is "any".
func TestToolChoice(t *testing.T) {
	for _, c := range []struct {
		choice llm.ToolChoice
		tools  []llm.ToolDef
		want   string
	}{
		{llm.ToolChoiceRequired, tools, "any"},
		{llm.ToolChoiceNone, tools, "none"},
		{llm.ToolChoiceAuto, tools, ""},
		{llm.ToolChoiceRequired, nil, ""}, // no tools: nothing to choose
	} {
		srv := anthropictest.New(t)
		srv.Push(anthropictest.Text("x"))
		p := provider(t, srv, anthropic.Options{})
		if _, _, err := chat(t, p, llm.Request{Messages: hi, Tools: c.tools, ToolChoice: c.choice}); err != nil {
			t.Fatal(err)
		}
		got := ""
		if tc := srv.Requests()[0].Body.ToolChoice; tc != nil {
			got = tc.Type
		}
		if got != c.want {
			t.Errorf("%q: tool_choice %q, want %q", c.choice, got, c.want)
		}
	}
}

func TestFakeServerDefault(t *testing.T) {
	srv := anthropictest.New(t)
	srv.Default(func(r anthropictest.Request) anthropictest.Reply {
		return anthropictest.Text("echo: " + r.Body.Messages[len(r.Body.Messages)-1].Content[0].Text)
	})
	p := provider(t, srv, anthropic.Options{})
	if chunks, _, err := chat(t, p, llm.Request{Messages: hi}); err != nil || strings.Join(chunks, "") != "echo: hi" {
		t.Fatalf("%q %v", chunks, err)
	}
}
