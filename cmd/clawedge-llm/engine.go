//go:build llamacpp

package main

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/clawedge/clawedge/localmodel/llama"
	"github.com/clawedge/clawedge/localmodel/sampling"
	"github.com/clawedge/clawedge/localmodel/wire"
)

// engine is one loaded model with its context. cached mirrors the KV cache:
// the tokens at positions 0..len(cached)-1, so the next prompt only evaluates
// what follows the longest common prefix.
type engine struct {
	path   string
	model  *llama.Model
	ctx    *llama.Context
	cached []llama.Token
	stats  wire.Stats
}

func load(l wire.Load) (*engine, error) {
	m, err := llama.LoadModel(l.Path, llama.LoadOptions{})
	if err != nil {
		return nil, err
	}
	ctx, err := m.NewContext(llama.ContextOptions{Threads: l.Threads, Context: l.Context, Batch: l.Batch})
	if err != nil {
		m.Close()
		return nil, err
	}
	return &engine{path: l.Path, model: m, ctx: ctx}, nil
}

func (e *engine) close() {
	e.ctx.Close()
	e.model.Close()
}

func (e *engine) info() *wire.Model {
	arch, _ := e.model.Meta("general.architecture")
	tmpl, _ := e.model.Meta("tokenizer.chat_template")
	return &wire.Model{Path: e.path, Arch: arch, Params: e.model.Params(), Bytes: e.model.Size(),
		Vocab: e.model.VocabSize(), Context: e.ctx.Size(), Template: tmpl}
}

// generate evaluates the prompt (reusing the cached prefix) and samples tokens
// until end of generation, max tokens, a stop string, a full context or cancel.
func (e *engine) generate(g wire.Generate, cancel <-chan struct{}, emit func(wire.Token)) (*wire.Done, error) {
	start := time.Now()
	prompt := g.Tokens
	if len(prompt) == 0 {
		var err error
		if prompt, err = e.model.Tokenize(g.Prompt, false, true); err != nil {
			return nil, err
		}
	}
	if len(prompt) == 0 {
		return nil, errors.New("generate: empty prompt")
	}
	if len(prompt) >= e.ctx.Size() {
		return nil, fmt.Errorf("generate: prompt of %d tokens does not fit the context of %d", len(prompt), e.ctx.Size())
	}
	sampler, err := sampling.New(sampling.Params(g.Sampling))
	if err != nil {
		return nil, err
	}

	// Prefix reuse: keep the KV entries of the common prefix, evaluate the rest.
	// At least one token is always evaluated, to have logits to sample from.
	reuse := commonPrefix(e.cached, prompt)
	if reuse == len(prompt) {
		reuse--
	}
	if err := e.ctx.TrimKV(reuse); err != nil {
		e.ctx.ClearKV()
		reuse = 0
	}
	e.cached = append(e.cached[:reuse], prompt[reuse:]...)
	if err := e.ctx.Decode(prompt[reuse:], reuse); err != nil {
		e.forget()
		if errors.Is(err, llama.ErrCancelled) {
			return &wire.Done{Reason: "cancelled", PromptTokens: len(prompt), ReusedTokens: reuse}, nil
		}
		return nil, err
	}
	prefill := time.Since(start)
	sampler.Accept(prompt...)
	done := &wire.Done{PromptTokens: len(prompt), ReusedTokens: reuse, EvaluatedTokens: len(prompt) - reuse,
		PrefillMS: ms(prefill)}
	e.stats.Generations++
	e.stats.TokensIn += uint64(len(prompt) - reuse)
	e.stats.TokensReused += uint64(reuse)

	var text strings.Builder // everything generated, for stop strings
	var pending []byte       // bytes of a character not yet complete
	decodeStart := time.Now()
	last := time.Now()
	for {
		select {
		case <-cancel:
			done.Reason = "cancelled"
			return e.finish(done, decodeStart), nil
		default:
		}
		if g.MaxTokens > 0 && done.Generated >= g.MaxTokens {
			done.Reason = "max_tokens"
			return e.finish(done, decodeStart), nil
		}
		if len(e.cached) >= e.ctx.Size() {
			done.Reason = "context_full"
			return e.finish(done, decodeStart), nil
		}
		tok, err := sampler.Sample(e.ctx.Logits(), nil)
		if err != nil {
			return nil, err
		}
		if e.model.IsEndOfGeneration(tok) {
			done.Reason = "eog"
			return e.finish(done, decodeStart), nil
		}
		sampler.Accept(tok)
		done.Generated++
		e.stats.TokensOut++
		pending = append(pending, e.model.Piece(tok, false)...)
		complete := completeUTF8(pending)
		piece := string(pending[:complete])
		pending = append(pending[:0], pending[complete:]...)
		text.WriteString(piece)
		now := time.Now()
		if done.Generated == 1 {
			done.FirstTokenMS = ms(now.Sub(start))
		}
		emit(wire.Token{ID: tok, Text: piece, MS: ms(now.Sub(last))})
		last = now
		if stopAt(text.String(), g.Stop) {
			done.Reason = "stop"
			return e.finish(done, decodeStart), nil
		}
		e.cached = append(e.cached, tok)
		if err := e.ctx.Decode([]llama.Token{tok}, len(e.cached)-1); err != nil {
			e.forget()
			if errors.Is(err, llama.ErrCancelled) {
				done.Reason = "cancelled"
				return e.finish(done, decodeStart), nil
			}
			return nil, err
		}
	}
}

func (e *engine) finish(d *wire.Done, decodeStart time.Time) *wire.Done {
	d.DecodeMS = ms(time.Since(decodeStart))
	return d
}

// forget drops the cache mirror after a failed or interrupted decode: what the
// KV cache holds is no longer known exactly, so the next prompt starts afresh.
func (e *engine) forget() {
	e.ctx.ClearKV()
	e.cached = e.cached[:0]
}

func commonPrefix(a, b []llama.Token) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// completeUTF8 is the length of the longest prefix of b that does not end
// inside a UTF-8 sequence. Invalid bytes count as complete: they are passed on
// (and shown as U+FFFD) rather than held forever.
func completeUTF8(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax+1; i-- {
		if utf8.RuneStart(b[i]) {
			if utf8.FullRune(b[i:]) {
				return len(b)
			}
			return i
		}
	}
	return len(b)
}

func stopAt(text string, stops []string) bool {
	for _, s := range stops {
		if s != "" && strings.HasSuffix(text, s) {
			return true
		}
	}
	return false
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
