// Package routertest provides a scripted llm.Provider for tests of the
// router and of code above it: each call plays the next Step of a script,
// and the provider records what it was asked.
package routertest

import (
	"context"
	"io"
	"sync"

	"github.com/clawedge/clawedge/llm"
)

// Step is what one call does.
type Step struct {
	// Err is returned by Chat.
	Err error
	// Gate, when set, makes Chat wait until it is closed (or the
	// context ends): a provider slow to answer.
	Gate <-chan struct{}
	// Text is streamed, one chunk per element.
	Text []string
	// StreamErr is returned by Next after Text, instead of the final
	// chunk.
	StreamErr error
	// Hold, when set, makes Next wait before the final chunk until it is
	// closed or the stream is: a reply still being generated.
	Hold <-chan struct{}
	// Final is the final chunk; Reason "" is llm.ReasonStop.
	Final llm.Final
}

// Provider is a scripted provider. Calls beyond the script repeat its last
// step; an empty script answers "ok".
type Provider struct {
	ProviderName string
	Capabilities llm.Caps

	mu       sync.Mutex
	script   []Step
	requests []llm.Request
	closed   int
}

// New returns a provider that plays steps in order.
func New(name string, caps llm.Caps, steps ...Step) *Provider {
	return &Provider{ProviderName: name, Capabilities: caps, script: steps}
}

// Local returns a local provider with the given window.
func Local(name string, window int, steps ...Step) *Provider {
	return New(name, llm.Caps{Context: window, Local: true, Tools: true}, steps...)
}

// Remote returns a remote provider with the given window that takes tools.
func Remote(name string, window int, steps ...Step) *Provider {
	return New(name, llm.Caps{Context: window, Tools: true}, steps...)
}

// Reply is a step that streams text and ends with usage.
func Reply(text string, in, out int) Step {
	return Step{Text: []string{text}, Final: llm.Final{Usage: llm.Usage{PromptTokens: in, CompletionTokens: out}}}
}

// Fail is a step whose Chat fails with err.
func Fail(err error) Step { return Step{Err: err} }

func (p *Provider) Name() string   { return p.ProviderName }
func (p *Provider) Caps() llm.Caps { return p.Capabilities }

// Chat plays the next step.
func (p *Provider) Chat(ctx context.Context, req llm.Request) (llm.Stream, error) {
	p.mu.Lock()
	n := len(p.requests)
	p.requests = append(p.requests, req)
	step := Step{Text: []string{"ok"}}
	switch {
	case n < len(p.script):
		step = p.script[n]
	case len(p.script) > 0:
		step = p.script[len(p.script)-1]
	}
	p.mu.Unlock()
	if step.Gate != nil {
		select {
		case <-step.Gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if step.Err != nil {
		return nil, step.Err
	}
	return &stream{p: p, step: step, stop: make(chan struct{})}, nil
}

// Calls is how many times Chat was called.
func (p *Provider) Calls() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.requests)
}

// Requests are the requests Chat was called with, in order.
func (p *Provider) Requests() []llm.Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]llm.Request(nil), p.requests...)
}

// Closed is how many of its streams were closed.
func (p *Provider) Closed() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

type stream struct {
	p    *Provider
	step Step
	i    int
	done bool
	once sync.Once
	stop chan struct{}
}

func (s *stream) Next() (llm.Chunk, error) {
	if s.done {
		return llm.Chunk{}, io.EOF
	}
	if s.i < len(s.step.Text) {
		s.i++
		return llm.Chunk{Text: s.step.Text[s.i-1]}, nil
	}
	if s.step.Hold != nil {
		select {
		case <-s.step.Hold:
		case <-s.stop:
			return llm.Chunk{}, io.ErrClosedPipe
		}
	}
	s.done = true
	if s.step.StreamErr != nil {
		return llm.Chunk{}, s.step.StreamErr
	}
	f := s.step.Final
	if f.Reason == "" {
		f.Reason = llm.ReasonStop
	}
	return llm.Chunk{Final: &f}, nil
}

func (s *stream) Close() error {
	s.once.Do(func() {
		close(s.stop)
		s.p.mu.Lock()
		s.p.closed++
		s.p.mu.Unlock()
	})
	return nil
}

// Counting is a Provider that counts tokens itself.
type Counting struct {
	*Provider
	Count func(llm.Request) int
}

// CountTokens implements router.TokenCounter.
func (c Counting) CountTokens(ctx context.Context, req llm.Request) (int, error) {
	return c.Count(req), nil
}
