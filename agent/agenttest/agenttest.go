// Package agenttest is a scripted llm.Provider for agent tests: each model call takes
// the next step of a script (text, tool calls, usage, cost, an error, a delay) and
// records the request it was given, so a test can check what the model was shown.
package agenttest

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/clawedge/clawedge/llm"
)

// Step is one scripted reply.
type Step struct {
	// Text is the reply's text, sent in chunks of Chunk bytes (0: one chunk).
	Text  string
	Chunk int
	// Calls are returned in Final.ToolCalls, as a remote API parses them.
	Calls []llm.ToolCall
	Usage llm.Usage
	Cost  float64
	// Err fails the call; Delay waits before the reply (or until ctx ends).
	Err   error
	Delay time.Duration
	// Func, when set, makes the step from the request instead.
	Func func(req llm.Request) Step
}

// Call is a convenience for a tool call with JSON arguments.
func Call(name, args string) llm.ToolCall {
	return llm.ToolCall{Name: name, Arguments: json.RawMessage(args)}
}

// Provider replays a script. When it runs out it repeats Last when set, else fails.
type Provider struct {
	ProviderName string
	Model        string
	Capabilities llm.Caps
	Last         *Step
	// Forget stops recording requests (benchmarks).
	Forget bool

	mu       sync.Mutex
	script   []Step
	requests []llm.Request
}

// New returns a provider that will reply with steps, in order.
func New(steps ...Step) *Provider {
	return &Provider{ProviderName: "scripted", Model: "script-1", Capabilities: llm.Caps{Context: 8192, Tools: true}, script: steps}
}

// Add appends steps to the script.
func (p *Provider) Add(steps ...Step) {
	p.mu.Lock()
	p.script = append(p.script, steps...)
	p.mu.Unlock()
}

// Requests returns the requests received so far.
func (p *Provider) Requests() []llm.Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]llm.Request(nil), p.requests...)
}

// Left is how many scripted steps are unused.
func (p *Provider) Left() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.script)
}

func (p *Provider) Name() string   { return p.ProviderName }
func (p *Provider) Caps() llm.Caps { return p.Capabilities }

// ErrExhausted is returned when the script has no step left.
var ErrExhausted = errors.New("agenttest: the script has no step left")

func (p *Provider) Chat(ctx context.Context, req llm.Request) (llm.Stream, error) {
	p.mu.Lock()
	if !p.Forget {
		p.requests = append(p.requests, req)
	}
	var st Step
	switch {
	case len(p.script) > 0:
		st = p.script[0]
		p.script = p.script[1:]
	case p.Last != nil:
		st = *p.Last
	default:
		p.mu.Unlock()
		return nil, ErrExhausted
	}
	p.mu.Unlock()
	if st.Func != nil {
		st = st.Func(req)
	}
	if st.Delay > 0 {
		select {
		case <-time.After(st.Delay):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if st.Err != nil {
		return nil, st.Err
	}
	var chunks []string
	n := st.Chunk
	if n <= 0 {
		n = len(st.Text) + 1
	}
	for t := st.Text; t != ""; {
		k := min(n, len(t))
		chunks = append(chunks, t[:k])
		t = t[k:]
	}
	fin := &llm.Final{Reason: llm.ReasonStop, Usage: st.Usage, ToolCalls: st.Calls, Provider: p.ProviderName, Model: p.Model, Cost: st.Cost}
	// Calls in the text come back parsed, as from the local model.
	return llm.ReplyCalls(&stream{ctx: ctx, chunks: chunks, fin: fin}, req), nil
}

type stream struct {
	ctx    context.Context
	chunks []string
	fin    *llm.Final
	done   bool
}

func (s *stream) Next() (llm.Chunk, error) {
	if s.done {
		return llm.Chunk{}, io.EOF
	}
	if err := s.ctx.Err(); err != nil {
		return llm.Chunk{}, err
	}
	if len(s.chunks) > 0 {
		c := s.chunks[0]
		s.chunks = s.chunks[1:]
		if len(s.chunks) > 0 {
			return llm.Chunk{Text: c}, nil
		}
		s.done = true
		return llm.Chunk{Text: c, Final: s.fin}, nil
	}
	s.done = true
	return llm.Chunk{Final: s.fin}, nil
}

func (s *stream) Close() error { s.done = true; return nil }
