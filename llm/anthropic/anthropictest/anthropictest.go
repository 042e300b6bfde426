// Package anthropictest is a fake Anthropic Messages API server for tests:
// an in-process HTTP server on 127.0.0.1 that speaks the real wire format
// (the streamed events message_start, content_block_start/delta/stop,
// message_delta, message_stop, ping and error; error bodies) and answers
// each request with the next reply a test has queued, recording what it
// received.
//
//	srv := anthropictest.New(t)
//	srv.Push(
//		anthropictest.ToolCall("gpio/write", `{"pin":"led","level":"high"}`),
//		anthropictest.Text("The LED is on."),
//	)
//	p, _ := anthropic.New(anthropic.Options{Options: remote.Options{BaseURL: srv.URL, Model: "m", APIKey: "k"}})
//	... run the agent ...
//	req := srv.Requests()[1] // the second request: it carries the tool result
//
// Tool names are given as clawedge names them ("gpio/write"); the server
// sends them in their wire form (llm.WireName), as a real model would. A
// request that finds the queue empty is answered 400 with a message saying
// so, which the client reports, or by the function set with Default.
package anthropictest

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
// message: a text block with the Text deltas (if any), a tool_use block per
// call, then message_delta with StopReason and usage, then message_stop.
// Otherwise it is an error reply.
type Reply struct {
	Text       []string // text deltas, one event each
	Calls      []Call
	StopReason string // "": "tool_use" when there are Calls, else "end_turn"
	Usage      *Usage // nil: {Input: 10, Output: 5}
	Model      string // "": the model the request named
	// Delay is a pause before each event.
	Delay time.Duration
	// Ping sends a ping event between message_start and the first block.
	Ping bool
	// StallAfter > 0 sends that many events (message_start is the first;
	// with Text, content_block_start is the second and each delta one more),
	// then nothing, holding the connection open until the client goes away.
	StallAfter int
	// StreamError, if set, is sent as an error event (type ErrorType,
	// "overloaded_error" when empty) after the text, ending the stream.
	StreamError string
	ErrorType   string

	// An error reply: the status, {"type": "error", "error": {"type",
	// "message"}}, and an optional retry-after header.
	Status     int
	Message    string
	RetryAfter string
}

// Call is a tool_use block.
type Call struct {
	ID   string // "": toolu_<request>_<n>
	Name string // as clawedge names the tool; sent as llm.WireName(Name)
	Args string // the input, JSON
	// Pieces is how many input_json_delta events carry the input; 0: 3.
	Pieces int
}

// Usage is the token count: Input (not from the cache), CacheRead and
// CacheWrite in message_start, Output in message_delta.
type Usage struct{ Input, Output, CacheRead, CacheWrite int }

// Text is a reply streaming the given pieces of text.
func Text(pieces ...string) Reply { return Reply{Text: pieces} }

// ToolCall is a reply calling one tool, input in JSON.
func ToolCall(name, args string) Reply { return Reply{Calls: []Call{{Name: name, Args: args}}} }

// Error is an error reply with the given status and message.
func Error(status int, msg string) Reply { return Reply{Status: status, Message: msg} }

// RateLimited is a 429 asking to retry after the given retry-after value.
func RateLimited(retryAfter string) Reply {
	return Reply{Status: 429, Message: "Number of request tokens has exceeded your per-minute rate limit", RetryAfter: retryAfter}
}

// Overloaded is the 529 the API sends when it is overloaded.
func Overloaded() Reply { return Reply{Status: 529, Message: "Overloaded"} }

// ContextLength is the 400 the API sends when the prompt does not fit.
func ContextLength() Reply {
	return Reply{Status: 400, Message: "prompt is too long: 208310 tokens > 200000 maximum"}
}

// Stall streams the given text, then stalls.
func Stall(pieces ...string) Reply {
	if len(pieces) == 0 {
		return Reply{StallAfter: 1}
	}
	return Reply{Text: pieces, StallAfter: 2 + len(pieces)}
}

// Request is a request the server received.
type Request struct {
	Header http.Header
	Body   MessagesRequest // decoded; zero if Raw is not JSON
	Raw    []byte
}

// MessagesRequest is a Messages API request body.
type MessagesRequest struct {
	Model      string    `json:"model"`
	MaxTokens  int       `json:"max_tokens"`
	System     []Block   `json:"system"`
	Messages   []Message `json:"messages"`
	Tools      []Tool    `json:"tools"`
	ToolChoice *struct {
		Type string `json:"type"`
	} `json:"tool_choice"`
	Stream        bool     `json:"stream"`
	Temperature   *float64 `json:"temperature"`
	TopP          *float64 `json:"top_p"`
	TopK          int      `json:"top_k"`
	StopSequences []string `json:"stop_sequences"`
}

// Message is a message of a request.
type Message struct {
	Role    string  `json:"role"`
	Content []Block `json:"content"`
}

// Block is a content block of a request.
type Block struct {
	Type         string          `json:"type"`
	Text         string          `json:"text"`
	ID           string          `json:"id"`
	Name         string          `json:"name"`
	Input        json.RawMessage `json:"input"`
	ToolUseID    string          `json:"tool_use_id"`
	Content      json.RawMessage `json:"content"`
	CacheControl *CacheControl   `json:"cache_control"`
}

// CacheControl is a prompt-caching mark.
type CacheControl struct {
	Type string `json:"type"`
}

// Tool is a tool definition of a request.
type Tool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"input_schema"`
	CacheControl *CacheControl   `json:"cache_control"`
}

// ToolNames are the names of the request's tools, as sent.
func (r Request) ToolNames() []string {
	var out []string
	for _, t := range r.Body.Tools {
		out = append(out, t.Name)
	}
	return out
}

// Server is the fake server.
type Server struct {
	// URL is the API's root: Options.BaseURL.
	URL string

	srv    *httptest.Server
	closed chan struct{}

	remotetest.Script[Request, Reply]
}

// New starts a server that t's cleanup stops.
func New(t testing.TB) *Server {
	s := &Server{closed: make(chan struct{})}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
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

	switch {
	case r.Method != "POST" || r.URL.Path != "/v1/messages":
		writeError(w, Reply{Status: 404, Message: fmt.Sprintf("anthropictest: no endpoint %s %s", r.Method, r.URL.Path)})
	case r.Header.Get("x-api-key") == "":
		writeError(w, Reply{Status: 401, Message: "x-api-key header is required"})
	case r.Header.Get("anthropic-version") == "":
		writeError(w, Reply{Status: 400, Message: "anthropic-version header is required"})
	case !ok:
		writeError(w, Reply{Status: 400, Message: fmt.Sprintf("anthropictest: no reply scripted for request %d", n)})
	case reply.Status != 0 && reply.Status != 200:
		writeError(w, reply)
	default:
		s.stream(w, r, n, req.Body.Model, reply)
	}
}

func errorType(status int) string {
	switch status {
	case 400:
		return "invalid_request_error"
	case 401:
		return "authentication_error"
	case 403:
		return "permission_error"
	case 404:
		return "not_found_error"
	case 413:
		return "request_too_large"
	case 429:
		return "rate_limit_error"
	case 529:
		return "overloaded_error"
	}
	return "api_error"
}

func writeError(w http.ResponseWriter, reply Reply) {
	if reply.RetryAfter != "" {
		w.Header().Set("retry-after", reply.RetryAfter)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(reply.Status)
	json.NewEncoder(w).Encode(map[string]any{"type": "error",
		"error": map[string]any{"type": errorType(reply.Status), "message": reply.Message}})
}

func (s *Server) stream(w http.ResponseWriter, r *http.Request, n int, model string, reply Reply) {
	if reply.Model != "" {
		model = reply.Model
	}
	u := reply.Usage
	if u == nil {
		u = &Usage{Input: 10, Output: 5}
	}
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
	send := func(typ string, v map[string]any) bool {
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
		v["type"] = typ
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, b)
		flush()
		sent++
		return true
	}
	if !send("message_start", map[string]any{"message": map[string]any{
		"id": fmt.Sprintf("msg_%d", n), "type": "message", "role": "assistant", "content": []any{}, "model": model,
		"stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": u.Input, "cache_creation_input_tokens": u.CacheWrite,
			"cache_read_input_tokens": u.CacheRead, "output_tokens": 1},
	}}) {
		return
	}
	if reply.Ping && !send("ping", map[string]any{}) {
		return
	}
	index := 0
	if len(reply.Text) > 0 {
		if !send("content_block_start", map[string]any{"index": index, "content_block": map[string]any{"type": "text", "text": ""}}) {
			return
		}
		for _, t := range reply.Text {
			if !send("content_block_delta", map[string]any{"index": index, "delta": map[string]any{"type": "text_delta", "text": t}}) {
				return
			}
		}
		if reply.StreamError == "" && !send("content_block_stop", map[string]any{"index": index}) {
			return
		}
		index++
	}
	if reply.StreamError != "" {
		typ := reply.ErrorType
		if typ == "" {
			typ = "overloaded_error"
		}
		send("error", map[string]any{"error": map[string]any{"type": typ, "message": reply.StreamError}})
		return
	}
	for i, c := range reply.Calls {
		id := c.ID
		if id == "" {
			id = fmt.Sprintf("toolu_%d_%d", n, i)
		}
		if !send("content_block_start", map[string]any{"index": index, "content_block": map[string]any{
			"type": "tool_use", "id": id, "name": llm.WireName(c.Name), "input": map[string]any{}}}) {
			return
		}
		for _, p := range split(c.Args, c.Pieces) {
			if !send("content_block_delta", map[string]any{"index": index, "delta": map[string]any{"type": "input_json_delta", "partial_json": p}}) {
				return
			}
		}
		if !send("content_block_stop", map[string]any{"index": index}) {
			return
		}
		index++
	}
	stop := reply.StopReason
	if stop == "" {
		stop = "end_turn"
		if len(reply.Calls) > 0 {
			stop = "tool_use"
		}
	}
	if !send("message_delta", map[string]any{"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": u.Output}}) {
		return
	}
	send("message_stop", map[string]any{})
}

// split cuts s into n pieces of about equal length, between UTF-8 sequences.
func split(s string, n int) []string {
	if n <= 0 {
		n = 3
	}
	var out []string
	size := (len(s) + n - 1) / n
	for len(s) > 0 {
		k := min(size, len(s))
		for k < len(s) && s[k]&0xC0 == 0x80 {
			k++
		}
		out = append(out, s[:k])
		s = s[k:]
	}
	return out
}
