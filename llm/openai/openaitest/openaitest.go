// Package openaitest is a fake OpenAI Chat Completions server for tests: an
// in-process HTTP server on 127.0.0.1 that speaks the real wire format
// (streamed server-sent events, tool calls split across chunks, usage in a
// last chunk, error bodies) and answers each request with the next reply a
// test has queued, recording what it received.
//
//	srv := openaitest.New(t)
//	srv.Push(
//		openaitest.ToolCall("gpio/write", `{"pin":"led","level":"high"}`),
//		openaitest.Text("The LED is on."),
//	)
//	p, _ := openai.New(openai.Options{Options: remote.Options{BaseURL: srv.URL, Model: "m"}})
//	... run the agent ...
//	req := srv.Requests()[1] // the second request: it carries the tool result
//
// Tool names are given as clawedge names them ("gpio/write"); the server
// sends them as a real model would, in their wire form (llm.WireName). A
// request that finds the queue empty is answered 400 with a message saying
// so, which the client reports, or by the function set with Default.
package openaitest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/clawedge/clawedge/llm"
	"github.com/clawedge/clawedge/llm/remote/remotetest"
)

// Reply is one scripted answer. With Status 0 (or 200) it is a streamed
// reply: Text chunks, then Calls, then a finish reason, then Usage, then
// "data: [DONE]". Otherwise it is an error reply.
type Reply struct {
	Text   []string // content deltas, one chunk each
	Calls  []Call   // tool calls, after the text
	Finish string   // finish_reason; "": "tool_calls" when there are Calls, else "stop"
	Usage  *Usage   // nil: {Prompt: 10, Completion: 5}
	Model  string   // "": the model the request named
	// Delay is a pause before each chunk.
	Delay time.Duration
	// StallAfter > 0 sends that many chunks (the first one is the empty
	// chunk that names the role, then one per Text piece, ...), then nothing
	// more, holding the connection open until the client goes away (an
	// idle-timeout test).
	StallAfter int
	// StreamError, if set, is sent as an error object inside the stream
	// after the text, and the stream ends there (as llama-server does).
	StreamError string
	// NoDone leaves out the final "data: [DONE]".
	NoDone bool

	// An error reply: the status, {"error": {"message", "type", "code"}},
	// and an optional Retry-After header.
	Status     int
	Message    string
	Code       string
	RetryAfter string
}

// Call is a tool call the model makes.
type Call struct {
	ID   string // "": call_<request>_<n>
	Name string // as clawedge names the tool; sent as llm.WireName(Name)
	Args string // the arguments, JSON
	// Pieces is how many chunks the arguments are split across; 0: 3.
	Pieces int
}

// Usage is the token count sent at the end.
type Usage struct{ Prompt, Completion, Cached int }

// Text is a reply streaming the given pieces of text.
func Text(pieces ...string) Reply { return Reply{Text: pieces} }

// ToolCall is a reply calling one tool, arguments in JSON.
func ToolCall(name, args string) Reply { return Reply{Calls: []Call{{Name: name, Args: args}}} }

// Cut is a reply cut at the request's token bound: the given pieces of text,
// then finish_reason "length" (a server stops the model there, mid-call if it
// was writing one).
func Cut(pieces ...string) Reply { return Reply{Text: pieces, Finish: "length"} }

// Error is an error reply with the given status and message.
func Error(status int, msg string) Reply { return Reply{Status: status, Message: msg} }

// RateLimited is a 429 asking to retry after the given Retry-After value
// ("1", "0.2" or an HTTP date).
func RateLimited(retryAfter string) Reply {
	return Reply{Status: 429, Message: "Rate limit reached", Code: "rate_limit_exceeded", RetryAfter: retryAfter}
}

// ContextLength is the 400 a server sends when the prompt does not fit.
func ContextLength() Reply {
	return Reply{Status: 400, Code: "context_length_exceeded",
		Message: "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens."}
}

// Stall streams the given text, then stalls.
func Stall(pieces ...string) Reply { return Reply{Text: pieces, StallAfter: len(pieces) + 1} }

// Request is a request the server received.
type Request struct {
	Header http.Header
	Body   ChatRequest // decoded; zero if Raw is not JSON
	Raw    []byte
}

// ChatRequest is a Chat Completions request body.
type ChatRequest struct {
	Model         string          `json:"model"`
	Messages      []Message       `json:"messages"`
	Tools         []Tool          `json:"tools"`
	ToolChoice    json.RawMessage `json:"tool_choice"`
	Stream        bool            `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	MaxTokens           int      `json:"max_tokens"`
	MaxCompletionTokens int      `json:"max_completion_tokens"`
	Temperature         *float64 `json:"temperature"`
	TopP                *float64 `json:"top_p"`
	Seed                *uint64  `json:"seed"`
	Stop                []string `json:"stop"`
	ResponseFormat      *struct {
		Type       string `json:"type"`
		JSONSchema *struct {
			Name   string          `json:"name"`
			Schema json.RawMessage `json:"schema"`
			Strict bool            `json:"strict"`
		} `json:"json_schema"`
	} `json:"response_format"`
	// llama-server's fields.
	Grammar            string         `json:"grammar"`
	TopK               int            `json:"top_k"`
	MinP               float64        `json:"min_p"`
	RepeatPenalty      float64        `json:"repeat_penalty"`
	ChatTemplateKwargs map[string]any `json:"chat_template_kwargs"`
}

// Message is a message of a request.
type Message struct {
	Role      string  `json:"role"`
	Content   *string `json:"content"`
	ToolCalls []struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
	ToolCallID string `json:"tool_call_id"`
}

// Tool is a function definition of a request.
type Tool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// ToolNames are the function names of the request's tools, as sent.
func (r Request) ToolNames() []string {
	var out []string
	for _, t := range r.Body.Tools {
		out = append(out, t.Function.Name)
	}
	return out
}

// Server is the fake server.
type Server struct {
	// URL is the API's root, ending in /v1: Options.BaseURL.
	URL string

	srv    *httptest.Server
	closed chan struct{}

	remotetest.Script[Request, Reply]
}

// New starts a server that t's cleanup stops.
func New(t testing.TB) *Server {
	s := &Server{closed: make(chan struct{})}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL + "/v1"
	t.Cleanup(s.Close)
	return s
}

// Close stops the server, releasing stalled replies.
func (s *Server) Close() {
	select {
	case <-s.closed:
	default:
		close(s.closed)
		s.srv.Close()
	}
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	req := Request{Header: r.Header.Clone(), Raw: raw}
	json.Unmarshal(raw, &req.Body)
	reply, n, ok := s.Next(req)

	if r.Method != "POST" || r.URL.Path != "/v1/chat/completions" {
		writeError(w, Reply{Status: 404, Message: fmt.Sprintf("openaitest: no endpoint %s %s", r.Method, r.URL.Path)})
		return
	}
	if !ok {
		writeError(w, Reply{Status: 400, Message: fmt.Sprintf("openaitest: no reply scripted for request %d", n)})
		return
	}
	if reply.Status != 0 && reply.Status != 200 {
		writeError(w, reply)
		return
	}
	s.stream(w, r, n, req.Body.Model, reply)
}

func writeError(w http.ResponseWriter, reply Reply) {
	if reply.RetryAfter != "" {
		w.Header().Set("Retry-After", reply.RetryAfter)
	}
	typ := "invalid_request_error"
	if reply.Status == 429 {
		typ = "rate_limit_error"
	} else if reply.Status >= 500 {
		typ = "server_error"
	}
	body := map[string]any{"error": map[string]any{"message": reply.Message, "type": typ, "param": nil, "code": nilIfEmpty(reply.Code)}}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(reply.Status)
	json.NewEncoder(w).Encode(body)
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// stream writes a streamed reply.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, n int, model string, reply Reply) {
	if reply.Model != "" {
		model = reply.Model
	}
	id := fmt.Sprintf("chatcmpl-%d", n)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(200)
	flush := func() {
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
	flush()
	sent := 0
	send := func(v any) bool {
		if reply.StallAfter > 0 && sent >= reply.StallAfter {
			select {
			case <-r.Context().Done():
			case <-s.closed:
			}
			return false
		}
		if reply.Delay > 0 {
			select {
			case <-time.After(reply.Delay):
			case <-r.Context().Done():
				return false
			}
		}
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\n\n", b)
		flush()
		sent++
		return true
	}
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": id, "object": "chat.completion.chunk", "created": time.Now().Unix(), "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	if !send(chunk(map[string]any{"role": "assistant", "content": ""}, nil)) {
		return
	}
	for _, t := range reply.Text {
		if !send(chunk(map[string]any{"content": t}, nil)) {
			return
		}
	}
	if reply.StreamError != "" {
		send(map[string]any{"error": map[string]any{"message": reply.StreamError, "type": "server_error", "code": 500}})
		return
	}
	for i, c := range reply.Calls {
		callID := c.ID
		if callID == "" {
			callID = fmt.Sprintf("call_%d_%d", n, i)
		}
		pieces := split(c.Args, c.Pieces)
		first := map[string]any{"index": i, "id": callID, "type": "function",
			"function": map[string]any{"name": llm.WireName(c.Name), "arguments": ""}}
		if !send(chunk(map[string]any{"tool_calls": []any{first}}, nil)) {
			return
		}
		for _, p := range pieces {
			d := map[string]any{"index": i, "function": map[string]any{"arguments": p}}
			if !send(chunk(map[string]any{"tool_calls": []any{d}}, nil)) {
				return
			}
		}
	}
	finish := reply.Finish
	if finish == "" {
		finish = "stop"
		if len(reply.Calls) > 0 {
			finish = "tool_calls"
		}
	}
	if !send(chunk(map[string]any{}, finish)) {
		return
	}
	u := reply.Usage
	if u == nil {
		u = &Usage{Prompt: 10, Completion: 5}
	}
	usage := map[string]any{"prompt_tokens": u.Prompt, "completion_tokens": u.Completion, "total_tokens": u.Prompt + u.Completion,
		"prompt_tokens_details": map[string]any{"cached_tokens": u.Cached}}
	if !send(map[string]any{"id": id, "object": "chat.completion.chunk", "created": time.Now().Unix(), "model": model,
		"choices": []any{}, "usage": usage}) {
		return
	}
	if !reply.NoDone {
		io.WriteString(w, "data: [DONE]\n\n")
		flush()
	}
}

// split cuts s into n pieces of about equal length (fewer if s is short),
// cutting between UTF-8 sequences.
func split(s string, n int) []string {
	if n <= 0 {
		n = 3
	}
	if s == "" {
		return nil
	}
	var out []string
	size := (len(s) + n - 1) / n
	for len(s) > 0 {
		k := min(size, len(s))
		for k < len(s) && !utf8Start(s[k]) {
			k++
		}
		out = append(out, s[:k])
		s = s[k:]
	}
	return out
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }
