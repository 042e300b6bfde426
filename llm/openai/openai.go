// Package openai is a Provider for servers that speak OpenAI's Chat
// Completions API: hosted APIs, and on a LAN Ollama, llama-server, vLLM or
// LM Studio (their /v1 endpoints). Replies are streamed (server-sent
// events); tool calls are assembled from the pieces the stream carries.
//
// One thing differs between those servers that clawedge cares about: how a
// request is constrained to the allowed tool calls. Options.Constraint says
// which form the server takes; see Style.
package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/llm"
	"github.com/clawedge/clawedge/llm/remote"
)

// Style is how a request's grammar.Spec constraint is sent. Tool names in
// the grammar or schema are the wire names (llm.WireName) the tools are
// offered under, and are mapped back in the calls.
type Style string

const (
	// StyleNone (the default) sends no constraint: the agent validates the
	// calls the model makes, as it always does.
	StyleNone Style = "none"
	// StyleGBNF sends the constraint as a GBNF grammar in llama-server's
	// "grammar" field. llama-server refuses a grammar together with tools
	// that the model may call (HTTP 400 "Cannot use custom grammar
	// constraints with tools", also for "required"), so the tools go with
	// "tool_choice": "none" (the chat template still shows them to the
	// model), a required call is the grammar's root (mode calls: nothing but
	// calls, after a think section where the model thinks), and the calls come
	// back as text in the constraint's form, which the provider parses into
	// Final.ToolCalls (llm.TextCalls). Sampling's TopK, MinP and
	// RepeatPenalty and NoThink (chat_template_kwargs) are sent too.
	StyleGBNF Style = "gbnf"
	// StyleJSONSchema sends the constraint as a JSON Schema in
	// "response_format": {"type": "json_schema", "json_schema": {"name",
	// "schema", "strict"}}: OpenAI's structured outputs, also taken by vLLM,
	// LM Studio and llama-server. The reply is one JSON object, a call or
	// {"answer": text} (grammar.JSONSchema), which the provider parses into
	// Final.ToolCalls or the reply's text.
	StyleJSONSchema Style = "json_schema"
	// StyleOllama is for Ollama's /v1 endpoint. It reads the schema from the
	// same "response_format" json_schema field and hands it to its native
	// "format" (a top-level "format" field is ignored on /v1), and ignores
	// "strict"; so this is StyleJSONSchema, named for the config.
	StyleOllama Style = "ollama"
)

// Options configure a Provider: remote.Options, whose BaseURL is the API's
// root up to and including /v1 ("http://192.168.1.10:11434/v1" for Ollama,
// "http://host:8080/v1" for llama-server; requests go to BaseURL +
// "/chat/completions"; "": https://api.openai.com/v1), whose APIKey, if set,
// is sent as "Authorization: Bearer <key>", and whose Context is 8192 when 0;
// and what only this API has. Only Model is required.
type Options struct {
	remote.Options
	// Constraint is how the request's constraint is sent; "": StyleNone.
	Constraint Style
	// StrictSchema sets "strict": true with StyleJSONSchema. OpenAI's strict
	// mode accepts only schemas whose properties are all required.
	StrictSchema bool
	// MaxTokensField is the name the reply's length bound is sent under:
	// "max_tokens" (default; Ollama, llama-server, vLLM) or
	// "max_completion_tokens" (OpenAI's newer models refuse max_tokens).
	MaxTokensField string
}

// Provider is an llm.Provider for a Chat Completions server.
type Provider struct {
	opts   Options
	url    string
	caller *remote.Caller
}

// New checks opts and returns a provider. It does not contact the server.
func New(opts Options) (*Provider, error) {
	caller, err := opts.Caller(remote.Kind{Name: "openai", BaseURL: "https://api.openai.com/v1", Context: 8192,
		APIError: apiError, Setup: setupError})
	if err != nil {
		return nil, err
	}
	switch opts.Constraint {
	case "":
		opts.Constraint = StyleNone
	case StyleNone, StyleGBNF, StyleJSONSchema, StyleOllama:
	default:
		return nil, fmt.Errorf("openai %q: constraint style %q: want none, gbnf, json_schema or ollama", opts.Name, opts.Constraint)
	}
	switch opts.MaxTokensField {
	case "":
		opts.MaxTokensField = "max_tokens"
	case "max_tokens", "max_completion_tokens":
	default:
		return nil, fmt.Errorf("openai %q: max tokens field %q: want max_tokens or max_completion_tokens", opts.Name, opts.MaxTokensField)
	}
	return &Provider{opts: opts, url: opts.BaseURL + "/chat/completions", caller: caller}, nil
}

// Name is the provider's name.
func (p *Provider) Name() string { return p.opts.Name }

// Caps: remote, with tools; Grammar when a constraint style is set.
func (p *Provider) Caps() llm.Caps {
	return llm.Caps{Context: p.opts.Context, Tools: true, Grammar: p.opts.Constraint != StyleNone}
}

// apiError reads an error reply. Context-length errors are recognised by the
// code OpenAI and vLLM send, llama-server's type, or the words they use.
func apiError(status int, body []byte) (string, bool) {
	msg, code := remote.APIMessage(body)
	return msg, status != 429 && status < 500 && isContextError(code, msg)
}

// setupErrors are error messages a server sends because of how it was
// started, with the fix: retrying cannot help, the person reading it can.
var setupErrors = []struct{ says, fix string }{
	// llama-server without --jinja (or with --no-jinja) refuses any request
	// with tools.
	{"requires --jinja", "start llama-server with --jinja, so that it applies the model's chat template, which takes tools"},
}

func setupError(_ int, msg string) string {
	for _, s := range setupErrors {
		if strings.Contains(msg, s.says) {
			return s.fix
		}
	}
	return ""
}

func isContextError(code, msg string) bool {
	if code == "context_length_exceeded" || code == "exceed_context_size_error" {
		return true
	}
	m := strings.ToLower(msg)
	for _, s := range []string{"maximum context length", "context length exceeded", "context_length_exceeded",
		"exceeds the available context size", "exceeds the context", "too many tokens", "prompt is too long", "context window"} {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

// Chat sends the request and returns the streaming reply.
func (p *Provider) Chat(ctx context.Context, req llm.Request) (llm.Stream, error) {
	if req.Sampling == nil {
		req.Sampling = p.opts.Sampling
	}
	body, err := p.encode(req)
	if err != nil {
		return nil, err
	}
	header := http.Header{}
	if p.opts.APIKey != "" {
		header.Set("Authorization", "Bearer "+p.opts.APIKey)
	}
	r, err := p.caller.Post(ctx, p.url, header, body)
	if err != nil {
		return nil, err
	}
	var s llm.Stream = &stream{p: p, r: r, start: r.Start, calls: map[int]int{}, sent: llm.SentOf(body)}
	if c := req.Constraint; c != nil && p.opts.Constraint != StyleNone {
		// The constrained reply writes its calls as text (see Style), in
		// wire names: they come back parsed, as the API's own calls do.
		s = llm.TextCalls(s, llm.WireSpec(*c), p.opts.Constraint != StyleGBNF, llm.SpecName)
	}
	return s, nil
}

// The request's wire form.

type wireRequest struct {
	Model          string          `json:"model"`
	Messages       []wireMessage   `json:"messages"`
	Tools          []wireTool      `json:"tools,omitempty"`
	ToolChoice     string          `json:"tool_choice,omitempty"`
	Stream         bool            `json:"stream"`
	StreamOptions  *streamOptions  `json:"stream_options,omitempty"`
	MaxTokens      int             `json:"max_tokens,omitempty"`
	MaxCompletion  int             `json:"max_completion_tokens,omitempty"`
	Temperature    *float32        `json:"temperature,omitempty"`
	TopP           *float32        `json:"top_p,omitempty"`
	Seed           *uint64         `json:"seed,omitempty"`
	Stop           []string        `json:"stop,omitempty"`
	ResponseFormat *responseFormat `json:"response_format,omitempty"`
	// llama-server's own fields (StyleGBNF only).
	Grammar       string          `json:"grammar,omitempty"`
	TopK          int             `json:"top_k,omitempty"`
	MinP          float32         `json:"min_p,omitempty"`
	RepeatPenalty float32         `json:"repeat_penalty,omitempty"`
	TemplateArgs  map[string]bool `json:"chat_template_kwargs,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type wireMessage struct {
	Role       string         `json:"role"`
	Content    *string        `json:"content"`
	ToolCalls  []wireToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
}

type wireToolCall struct {
	Index    *int         `json:"index,omitempty"`
	ID       string       `json:"id,omitempty"`
	Type     string       `json:"type,omitempty"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

type wireTool struct {
	Type     string  `json:"type"`
	Function wireDef `json:"function"`
}

type wireDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

type responseFormat struct {
	Type       string      `json:"type"`
	JSONSchema *jsonSchema `json:"json_schema,omitempty"`
}

type jsonSchema struct {
	Name   string          `json:"name"`
	Schema json.RawMessage `json:"schema"`
	Strict bool            `json:"strict,omitempty"`
}

// maxNameLen is the longest function name the API takes.
const maxNameLen = 64

var emptyParams = json.RawMessage(`{"type":"object","properties":{}}`)

func (p *Provider) encode(req llm.Request) ([]byte, error) {
	w := wireRequest{Model: p.opts.Model, Stream: true, StreamOptions: &streamOptions{IncludeUsage: true}, Stop: req.Stop}
	if req.MaxTokens > 0 {
		if p.opts.MaxTokensField == "max_completion_tokens" {
			w.MaxCompletion = req.MaxTokens
		} else {
			w.MaxTokens = req.MaxTokens
		}
	}
	for _, m := range remote.WithCallIDs(req.Messages) {
		wm := wireMessage{Role: string(m.Role)}
		switch m.Role {
		case llm.RoleSystem, llm.RoleUser:
		case llm.RoleAssistant:
			for _, c := range m.ToolCalls {
				args := remote.Arguments(c.Arguments)
				wm.ToolCalls = append(wm.ToolCalls, wireToolCall{ID: c.ID, Type: "function",
					Function: wireFunction{Name: llm.WireName(c.Name), Arguments: string(args)}})
			}
		case llm.RoleTool:
			wm.ToolCallID = m.ToolCallID
		default:
			return nil, p.caller.Errorf(nil, "message role %q: want system, user, assistant or tool", m.Role)
		}
		if m.Content != "" || len(m.ToolCalls) == 0 {
			c := m.Content
			wm.Content = &c
		}
		w.Messages = append(w.Messages, wm)
	}
	for _, t := range req.Tools {
		name := llm.WireName(t.Name)
		if name == "" || len(name) > maxNameLen {
			return nil, p.caller.Errorf(nil, "tool %q: its wire name %q must be 1 to %d characters", t.Name, name, maxNameLen)
		}
		params := t.Params
		if len(params) == 0 {
			params = emptyParams
		} else if !json.Valid(params) {
			return nil, p.caller.Errorf(nil, "tool %q: parameters are not valid JSON", t.Name)
		}
		w.Tools = append(w.Tools, wireTool{Type: "function", Function: wireDef{Name: name, Description: t.Doc, Parameters: params}})
	}
	if s := req.Sampling; s != nil {
		temp := s.Temperature
		w.Temperature = &temp
		if s.TopP > 0 && s.TopP < 1 {
			topP := s.TopP
			w.TopP = &topP
		}
		if s.Seed != 0 {
			seed := s.Seed
			w.Seed = &seed
		}
		if p.opts.Constraint == StyleGBNF {
			w.TopK, w.MinP, w.RepeatPenalty = s.TopK, s.MinP, s.RepeatPenalty
		}
	}
	if req.NoThink && p.opts.Constraint == StyleGBNF {
		w.TemplateArgs = map[string]bool{"enable_thinking": false}
	}
	if req.Constraint != nil {
		if err := p.constrain(&w, *req.Constraint); err != nil {
			return nil, err
		}
	}
	if w.Grammar == "" && w.ResponseFormat == nil && w.ToolChoice == "" && len(w.Tools) > 0 {
		// No constraint was sent (one that was holds the reply to the
		// choice by its mode): the API's own field asks for it.
		w.ToolChoice = string(req.ToolChoice)
	}
	return json.Marshal(w)
}

// constrain adds the constraint in the provider's style. A text-only
// constraint becomes "tool_choice": "none" with the JSON Schema styles (a
// schema cannot say "any text").
func (p *Provider) constrain(w *wireRequest, spec grammar.Spec) error {
	spec = llm.WireSpec(spec)
	switch p.opts.Constraint {
	case StyleGBNF:
		g, err := grammar.GBNF(spec)
		if err != nil {
			return p.caller.Errorf(nil, "the constraint as GBNF: %v", err)
		}
		w.Grammar = g
		if len(w.Tools) > 0 {
			w.ToolChoice = "none"
		}
		// A weak model fills a string to its bound: the budget gets room for
		// the longest call the grammar admits, so that a call closes.
		if n, ok := grammar.MaxReply(spec); ok && spec.Mode == grammar.ModeCalls {
			p.roomFor(w, func(budget int) int { return n })
		}
	case StyleJSONSchema, StyleOllama:
		if spec.Mode == grammar.ModeText {
			if len(w.Tools) > 0 {
				w.ToolChoice = "none"
			}
			return nil
		}
		s, err := grammar.JSONSchema(spec)
		if err != nil {
			return p.caller.Errorf(nil, "the constraint as JSON Schema: %v", err)
		}
		w.ResponseFormat = &responseFormat{Type: "json_schema", JSONSchema: &jsonSchema{Name: "clawedge_reply", Schema: s,
			Strict: p.opts.StrictSchema && p.opts.Constraint == StyleJSONSchema}}
		// The server's grammar for a schema lets the model pad every JSON
		// token with blanks, which a weak model does until the budget is
		// spent: the budget gets room for all of them, so that a call that
		// fits it without blanks closes (a cut one is still an error). The
		// room stops at a quarter of the context window: vLLM refuses a
		// request whose prompt and max_tokens exceed it.
		if n, ok := grammar.SchemaBlanks(spec); ok {
			p.roomFor(w, func(budget int) int { return budget + n })
		}
		if spec.Mode == grammar.ModeCalls && len(w.Tools) > 0 {
			// The schema already admits only calls; the API's own field says
			// so too, for a server that reads it beside the schema
			// (llama-server accepts both; with a grammar it refuses it).
			w.ToolChoice = string(llm.ToolChoiceRequired)
		}
	}
	return nil
}

// roomFor raises the reply budget to what a constrained call needs (need of
// the configured budget), never lowering it. The room stops at a quarter of
// the context window: vLLM refuses a request whose prompt and max_tokens
// exceed it. A budget of 0 (none set) is left to the server.
func (p *Provider) roomFor(w *wireRequest, need func(budget int) int) {
	room := func(budget int) int {
		if budget <= 0 {
			return budget
		}
		return max(budget, min(need(budget), p.opts.Context/4))
	}
	w.MaxTokens, w.MaxCompletion = room(w.MaxTokens), room(w.MaxCompletion)
}

// The reply's wire form.

type wireChunk struct {
	Model   string `json:"model"`
	Choices []struct {
		Delta struct {
			Content   *string        `json:"content"`
			ToolCalls []wireToolCall `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens        int `json:"prompt_tokens"`
		CompletionTokens    int `json:"completion_tokens"`
		PromptTokensDetails *struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// stream reads the reply.
type stream struct {
	p      *Provider
	r      *remote.Reply
	model  string
	finish string
	usage  llm.Usage
	first  time.Time
	start  time.Time // the request's
	sent   *llm.Sent

	calls  map[int]int // wire index -> position in order
	order  []*callParts
	err    error
	done   bool
	closed atomic.Bool // set by Close, from any goroutine
}

type callParts struct {
	id, name string
	args     []byte
}

func (s *stream) Next() (llm.Chunk, error) {
	if s.err != nil {
		return llm.Chunk{}, s.err
	}
	if s.closed.Load() {
		s.err = s.p.caller.Wrap(nil, "", remote.ErrClosed)
		return llm.Chunk{}, s.err
	}
	if s.done {
		return llm.Chunk{}, io.EOF
	}
	for {
		ev, err := s.r.Next()
		if err == io.EOF {
			if s.finish == "" {
				return s.fail(s.p.caller.Errorf(llm.ErrUnavailable, "the reply stream ended before the reply did"))
			}
			return s.end(), nil
		}
		if err != nil {
			return s.fail(err)
		}
		text, done, err := s.decode(ev.Data)
		switch {
		case err != nil:
			return s.fail(err)
		case done:
			return s.end(), nil
		case text != "":
			return llm.Chunk{Text: text}, nil
		}
	}
}

// decode takes one event's data: a chunk, an error, or [DONE].
func (s *stream) decode(data []byte) (text string, done bool, err error) {
	if string(bytes.TrimSpace(data)) == "[DONE]" {
		return "", true, nil
	}
	var c wireChunk
	if err := json.Unmarshal(data, &c); err != nil {
		return "", false, s.p.caller.Errorf(llm.ErrUnavailable, "a reply chunk is not JSON: %v", err)
	}
	if len(c.Error) > 0 && string(c.Error) != "null" {
		// llama-server, vLLM and proxies report errors inside the stream.
		msg, code := remote.APIMessage(s.p.caller.Redact(data))
		class := llm.ErrUnavailable
		if isContextError(code, msg) {
			class = llm.ErrCapacity
		}
		return "", false, s.p.caller.Errorf(class, "error in the reply stream: %s", msg)
	}
	if c.Model != "" {
		s.model = c.Model
	}
	if u := c.Usage; u != nil {
		s.usage = llm.Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens}
		if u.PromptTokensDetails != nil {
			s.usage.CachedTokens = u.PromptTokensDetails.CachedTokens
		}
	}
	var b strings.Builder
	for _, ch := range c.Choices {
		if ch.Delta.Content != nil {
			b.WriteString(*ch.Delta.Content)
		}
		for _, d := range ch.Delta.ToolCalls {
			if err := s.addCall(d); err != nil {
				return "", false, err
			}
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			s.finish = *ch.FinishReason
		}
	}
	if (b.Len() > 0 || len(s.order) > 0) && s.first.IsZero() {
		s.first = time.Now()
	}
	return b.String(), false, nil
}

// addCall adds a piece of a tool call: the first piece of a call has its id
// and name, later ones pieces of its arguments, all with the call's index.
// Ollama numbers every call of a reply 0 and tells them apart by id only: a
// new id at an index already used starts a new call.
func (s *stream) addCall(d wireToolCall) error {
	idx := 0
	if d.Index != nil {
		idx = *d.Index
	}
	if len(s.order) >= maxCalls {
		return s.p.caller.Errorf(llm.ErrUnavailable, "the reply makes over %d tool calls", maxCalls)
	}
	pos, ok := s.calls[idx]
	if ok && d.ID != "" && s.order[pos].id != "" && s.order[pos].id != d.ID {
		ok = false
	}
	if !ok {
		pos = len(s.order)
		s.calls[idx] = pos
		s.order = append(s.order, &callParts{})
	}
	c := s.order[pos]
	if d.ID != "" {
		c.id = d.ID
	}
	c.name += d.Function.Name
	c.args = append(c.args, d.Function.Arguments...)
	if len(c.name) > maxNameLen*4 || len(c.args) > maxArgs {
		return s.p.caller.Errorf(llm.ErrUnavailable, "tool call %d is too long", pos)
	}
	return nil
}

// Bounds of what a reply may call: the stream is bounded per event, these
// bound what the events add up to.
const (
	maxCalls = 64
	maxArgs  = 1 << 20
)

func (s *stream) end() llm.Chunk {
	s.done = true
	s.r.Finish()
	return llm.Chunk{Final: s.final()}
}

// final is the reply's end, from what the stream carried.
func (s *stream) final() *llm.Final {
	now := time.Now()
	f := &llm.Final{Reason: reason(s.finish), Usage: s.usage, Provider: s.p.opts.Name, Model: s.model, Sent: s.sent}
	if f.Model == "" {
		f.Model = s.p.opts.Model
	}
	if !s.first.IsZero() {
		f.Timing = llm.Timing{FirstToken: s.first.Sub(s.start), Decode: now.Sub(s.first)}
	}
	for _, c := range s.order {
		f.ToolCalls = append(f.ToolCalls, llm.ToolCall{ID: c.id, Name: llm.SpecName(c.name), Arguments: remote.Arguments(c.args)})
	}
	return f
}

func reason(finish string) llm.Reason {
	switch finish {
	case "length":
		return llm.ReasonLength
	default: // stop, tool_calls, function_call, content_filter, or a server's own
		return llm.ReasonStop
	}
}

func (s *stream) fail(err error) (llm.Chunk, error) {
	s.err = s.r.Fail(err)
	return llm.Chunk{}, s.err
}

// Close stops the reply. It may be called at any time, from any goroutine,
// more than once; a Next blocked in another goroutine returns at once.
func (s *stream) Close() error {
	s.closed.Store(true)
	s.r.Close()
	return nil
}
