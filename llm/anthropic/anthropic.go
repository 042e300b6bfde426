// Package anthropic is a Provider for Anthropic's Messages API, streamed.
//
// The conversation maps onto the API's content blocks: system messages
// become the top-level system blocks, an assistant's tool calls tool_use
// blocks, and tool results tool_result blocks in the user message that
// follows (consecutive results go in one message, as the API requires). The
// stable prefix of every request, the system blocks and the tool
// definitions, is marked for prompt caching (cache_control ephemeral on the
// last system block and the last tool), so a conversation pays the full
// input price for it once every few minutes rather than every turn.
//
// The API has no grammar or schema constraint for free text: a request's
// Constraint is not sent, and the agent validates every call as always. Its
// ToolChoice is: required becomes tool_choice {"type": "any"}, none {"type":
// "none"}.
package anthropic

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/clawedge/clawedge/llm"
	"github.com/clawedge/clawedge/llm/remote"
)

// Defaults.
const (
	DefaultBaseURL   = "https://api.anthropic.com"
	DefaultVersion   = "2023-06-01"
	DefaultContext   = 200000
	DefaultMaxTokens = 4096
)

// Options configure a Provider: remote.Options, whose BaseURL is the API's
// root (requests go to BaseURL + "/v1/messages"; "": DefaultBaseURL), whose
// APIKey is sent as x-api-key, and whose Context is DefaultContext when 0
// (the API sends pings while it works, so IdleTimeout holds); and what only
// this API has. Model and APIKey are required.
type Options struct {
	remote.Options
	// Version is the anthropic-version header; "": DefaultVersion.
	Version string
	// MaxTokens bounds a reply when the request sets no bound (the API
	// requires one); 0: DefaultMaxTokens.
	MaxTokens int
	// NoCache leaves out the cache_control marks.
	NoCache bool
}

// Provider is an llm.Provider for the Messages API.
type Provider struct {
	opts   Options
	url    string
	caller *remote.Caller
}

// New checks opts and returns a provider. It does not contact the server.
func New(opts Options) (*Provider, error) {
	caller, err := opts.Caller(remote.Kind{Name: "anthropic", BaseURL: DefaultBaseURL, Context: DefaultContext,
		NeedKey: true, APIError: apiError})
	if err != nil {
		return nil, err
	}
	if opts.Version == "" {
		opts.Version = DefaultVersion
	}
	if opts.MaxTokens <= 0 {
		opts.MaxTokens = DefaultMaxTokens
	}
	return &Provider{opts: opts, url: opts.BaseURL + "/v1/messages", caller: caller}, nil
}

// Name is the provider's name.
func (p *Provider) Name() string { return p.opts.Name }

// Caps: remote, with tools, no grammar.
func (p *Provider) Caps() llm.Caps { return llm.Caps{Context: p.opts.Context, Tools: true} }

func apiError(status int, body []byte) (string, bool) {
	msg, _ := remote.APIMessage(body)
	return msg, status != 429 && status < 500 && isContextError(msg)
}

func isContextError(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "prompt is too long") || strings.Contains(m, "context window") || strings.Contains(m, "context length")
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
	header := http.Header{"X-Api-Key": {p.opts.APIKey}, "Anthropic-Version": {p.opts.Version}}
	r, err := p.caller.Post(ctx, p.url, header, body)
	if err != nil {
		return nil, err
	}
	return &stream{p: p, r: r, start: r.Start, blocks: map[int]*block{}, sent: llm.SentOf(body)}, nil
}

// The request's wire form.

type wireRequest struct {
	Model         string        `json:"model"`
	MaxTokens     int           `json:"max_tokens"`
	System        []wireBlock   `json:"system,omitempty"`
	Messages      []wireMessage `json:"messages"`
	Tools         []wireTool    `json:"tools,omitempty"`
	ToolChoice    *toolChoice   `json:"tool_choice,omitempty"`
	Stream        bool          `json:"stream"`
	Temperature   *float32      `json:"temperature,omitempty"`
	TopK          int           `json:"top_k,omitempty"`
	StopSequences []string      `json:"stop_sequences,omitempty"`
}

type wireMessage struct {
	Role    string      `json:"role"`
	Content []wireBlock `json:"content"`
}

type wireBlock struct {
	Type         string          `json:"type"`
	Text         string          `json:"text,omitempty"`
	ID           string          `json:"id,omitempty"`
	Name         string          `json:"name,omitempty"`
	Input        json.RawMessage `json:"input,omitempty"`
	ToolUseID    string          `json:"tool_use_id,omitempty"`
	Content      *string         `json:"content,omitempty"`
	CacheControl *cacheControl   `json:"cache_control,omitempty"`
}

type toolChoice struct {
	Type string `json:"type"` // auto, any, tool, none
}

type cacheControl struct {
	Type string `json:"type"`
}

type wireTool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"input_schema"`
	CacheControl *cacheControl   `json:"cache_control,omitempty"`
}

const maxNameLen = 64

var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

func (p *Provider) encode(req llm.Request) ([]byte, error) {
	w := wireRequest{Model: p.opts.Model, MaxTokens: req.MaxTokens, Stream: true, StopSequences: req.Stop}
	if w.MaxTokens <= 0 {
		w.MaxTokens = p.opts.MaxTokens
	}
	for _, m := range remote.WithCallIDs(req.Messages) {
		var role string
		var blocks []wireBlock
		switch m.Role {
		case llm.RoleSystem:
			if m.Content != "" {
				w.System = append(w.System, wireBlock{Type: "text", Text: m.Content})
			}
			continue
		case llm.RoleUser:
			role = "user"
			if m.Content != "" {
				blocks = append(blocks, wireBlock{Type: "text", Text: m.Content})
			}
		case llm.RoleAssistant:
			role = "assistant"
			if m.Content != "" {
				blocks = append(blocks, wireBlock{Type: "text", Text: m.Content})
			}
			for _, c := range m.ToolCalls {
				blocks = append(blocks, wireBlock{Type: "tool_use", ID: c.ID, Name: llm.WireName(c.Name), Input: inputObject(c.Arguments)})
			}
		case llm.RoleTool:
			role = "user"
			b := wireBlock{Type: "tool_result", ToolUseID: m.ToolCallID}
			if m.Content != "" { // an empty result is sent without content
				content := m.Content
				b.Content = &content
			}
			blocks = append(blocks, b)
		default:
			return nil, p.caller.Errorf(nil, "message role %q: want system, user, assistant or tool", m.Role)
		}
		if len(blocks) == 0 {
			continue // the API refuses empty messages and empty text blocks
		}
		// Consecutive messages of one role go in one message: the API wants
		// the roles to alternate, and all tool results of a turn together.
		if n := len(w.Messages); n > 0 && w.Messages[n-1].Role == role {
			w.Messages[n-1].Content = append(w.Messages[n-1].Content, blocks...)
			continue
		}
		w.Messages = append(w.Messages, wireMessage{Role: role, Content: blocks})
	}
	for _, t := range req.Tools {
		name := llm.WireName(t.Name)
		if name == "" || len(name) > maxNameLen {
			return nil, p.caller.Errorf(nil, "tool %q: its wire name %q must be 1 to %d characters", t.Name, name, maxNameLen)
		}
		schema := t.Params
		if len(schema) == 0 {
			schema = emptySchema
		} else if !json.Valid(schema) {
			return nil, p.caller.Errorf(nil, "tool %q: parameters are not valid JSON", t.Name)
		}
		w.Tools = append(w.Tools, wireTool{Name: name, Description: t.Doc, InputSchema: schema})
	}
	if len(w.Tools) > 0 {
		switch req.ToolChoice {
		case llm.ToolChoiceRequired:
			w.ToolChoice = &toolChoice{Type: "any"}
		case llm.ToolChoiceNone:
			w.ToolChoice = &toolChoice{Type: "none"}
		}
	}
	if !p.opts.NoCache {
		if n := len(w.System); n > 0 {
			w.System[n-1].CacheControl = &cacheControl{Type: "ephemeral"}
		}
		if n := len(w.Tools); n > 0 {
			w.Tools[n-1].CacheControl = &cacheControl{Type: "ephemeral"}
		}
	}
	if s := req.Sampling; s != nil {
		// top_p is left out: recent models refuse it together with temperature.
		temp := min(max(s.Temperature, 0), 1)
		w.Temperature = &temp
		w.TopK = s.TopK
	}
	return json.Marshal(w)
}

// inputObject is a call's arguments as the object tool_use wants.
func inputObject(args json.RawMessage) json.RawMessage {
	var obj map[string]json.RawMessage
	if json.Unmarshal(args, &obj) != nil || obj == nil {
		return json.RawMessage("{}")
	}
	return args
}

// The reply's events.

type wireEvent struct {
	Type    string `json:"type"`
	Index   int    `json:"index"`
	Message *struct {
		Model string     `json:"model"`
		Usage *wireUsage `json:"usage"`
	} `json:"message"`
	ContentBlock *struct {
		Type  string          `json:"type"`
		Text  string          `json:"text"`
		ID    string          `json:"id"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	} `json:"content_block"`
	Delta *struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage *wireUsage `json:"usage"`
	Error *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

type wireUsage struct {
	InputTokens              *int `json:"input_tokens"`
	OutputTokens             *int `json:"output_tokens"`
	CacheCreationInputTokens *int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     *int `json:"cache_read_input_tokens"`
}

type block struct {
	kind     string // text, tool_use, or another the API may add
	id, name string
	input    json.RawMessage // from content_block_start
	args     []byte          // from input_json_delta
	order    int
}

type stream struct {
	p      *Provider
	sent   *llm.Sent
	r      *remote.Reply
	model  string
	stop   string
	in     int // input tokens, not from the cache
	cached int // read from the cache
	write  int // written to the cache
	out    int
	first  time.Time
	start  time.Time // the request's
	blocks map[int]*block
	starts int // content blocks started
	calls  []*block
	err    error
	done   bool
	closed atomic.Bool // set by Close, from any goroutine
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
			if s.stop != "" {
				return s.end(), nil // message_stop is missing, but the reply is whole
			}
			return s.fail(s.p.caller.Errorf(llm.ErrUnavailable, "the reply stream ended before the reply did"))
		}
		if err != nil {
			return s.fail(err)
		}
		text, done, err := s.decode(ev.Type, ev.Data)
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

// Bounds of what a reply may hold: the stream is bounded per event, these
// bound what the events add up to.
const (
	maxBlocks = 256
	maxArgs   = 1 << 20
)

// decode takes one event.
func (s *stream) decode(typ string, data []byte) (text string, done bool, err error) {
	var e wireEvent
	if err := json.Unmarshal(data, &e); err != nil {
		return "", false, s.p.caller.Errorf(llm.ErrUnavailable, "a reply event is not JSON: %v", err)
	}
	if e.Type == "" {
		e.Type = typ
	}
	switch e.Type {
	case "message_start":
		if e.Message != nil {
			s.model = e.Message.Model
			s.usage(e.Message.Usage)
		}
	case "content_block_start":
		b := e.ContentBlock
		if b == nil {
			break
		}
		if s.starts++; s.starts > maxBlocks {
			return "", false, s.p.caller.Errorf(llm.ErrUnavailable, "the reply has over %d content blocks", maxBlocks)
		}
		bl := &block{kind: b.Type, id: b.ID, name: b.Name, input: b.Input}
		s.blocks[e.Index] = bl
		switch b.Type {
		case "tool_use":
			s.calls = append(s.calls, bl)
			s.started()
		case "text":
			if b.Text != "" {
				s.started()
				return b.Text, false, nil
			}
		}
	case "content_block_delta":
		bl, d := s.blocks[e.Index], e.Delta
		if bl == nil || d == nil {
			return "", false, s.p.caller.Errorf(llm.ErrUnavailable, "a delta for content block %d, which did not start", e.Index)
		}
		switch d.Type {
		case "text_delta":
			if bl.kind == "text" && d.Text != "" {
				s.started()
				return d.Text, false, nil
			}
		case "input_json_delta":
			bl.args = append(bl.args, d.PartialJSON...)
			if len(bl.args) > maxArgs {
				return "", false, s.p.caller.Errorf(llm.ErrUnavailable, "the input of tool call %q is over %d bytes", bl.name, maxArgs)
			}
		}
		// thinking_delta, signature_delta and deltas added later: not text.
	case "message_delta":
		if e.Delta != nil && e.Delta.StopReason != "" {
			s.stop = e.Delta.StopReason
		}
		s.usage(e.Usage)
	case "message_stop":
		return "", true, nil
	case "error":
		msg, typ := "unknown error", ""
		if e.Error != nil {
			msg, typ = e.Error.Message, e.Error.Type
		}
		class := llm.ErrUnavailable
		if isContextError(msg) {
			class = llm.ErrCapacity
		}
		if typ != "" {
			msg = typ + ": " + msg
		}
		return "", false, s.p.caller.Errorf(class, "error in the reply stream: %s", msg)
	}
	// content_block_stop, ping, and events added later: nothing to do.
	return "", false, nil
}

func (s *stream) started() {
	if s.first.IsZero() {
		s.first = time.Now()
	}
}

// usage takes the counts an event carries; message_delta's are cumulative.
func (s *stream) usage(u *wireUsage) {
	if u == nil {
		return
	}
	set := func(dst *int, v *int) {
		if v != nil {
			*dst = *v
		}
	}
	set(&s.in, u.InputTokens)
	set(&s.out, u.OutputTokens)
	set(&s.cached, u.CacheReadInputTokens)
	set(&s.write, u.CacheCreationInputTokens)
}

func (s *stream) end() llm.Chunk {
	s.done = true
	s.r.Finish()
	return llm.Chunk{Final: s.final()}
}

// final is the reply's end, from what the stream carried.
func (s *stream) final() *llm.Final {
	f := &llm.Final{Reason: reason(s.stop), Provider: s.p.opts.Name, Model: s.model, Sent: s.sent,
		Usage: llm.Usage{PromptTokens: s.in + s.cached + s.write, CachedTokens: s.cached, CompletionTokens: s.out}}
	if f.Model == "" {
		f.Model = s.p.opts.Model
	}
	if !s.first.IsZero() {
		f.Timing = llm.Timing{FirstToken: s.first.Sub(s.start), Decode: time.Since(s.first)}
	}
	for _, c := range s.calls {
		args := c.args
		if len(args) == 0 && len(c.input) > 0 {
			args = c.input
		}
		f.ToolCalls = append(f.ToolCalls, llm.ToolCall{ID: c.id, Name: llm.SpecName(c.name), Arguments: remote.Arguments(args)})
	}
	return f
}

func reason(stop string) llm.Reason {
	switch stop {
	case "max_tokens":
		return llm.ReasonLength
	case "model_context_window_exceeded":
		return llm.ReasonContext
	default: // end_turn, tool_use, stop_sequence, pause_turn, refusal
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
