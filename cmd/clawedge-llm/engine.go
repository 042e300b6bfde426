//go:build llamacpp

package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/localmodel/llama"
	"github.com/clawedge/clawedge/localmodel/sampling"
	"github.com/clawedge/clawedge/localmodel/wire"
)

// engine is one loaded model with its context. cached mirrors the KV cache:
// the tokens at positions 0..len(cached)-1, so the next prompt only evaluates
// what follows the longest common prefix. One generation at a time uses it;
// stats is also read by the server while a generation runs.
type engine struct {
	path   string
	model  *llama.Model
	ctx    *llama.Context
	cached []llama.Token
	cons   constraints
	prefix *prefixStore // nil: no prefix cache
	// prefixNote says why a saved prefix state found at load is not used.
	prefixNote string
	prefixText string // the text of the last fixed prefix fixedPrefix tokenized

	statMu sync.Mutex
	stats  wire.Stats
}

func load(l wire.Load) (*engine, error) {
	if l.Threads < 0 || l.Context < 0 || l.Batch < 0 {
		return nil, fmt.Errorf("load: threads %d, context %d, batch %d: want 0 (default) or more", l.Threads, l.Context, l.Batch)
	}
	m, err := llama.LoadModel(l.Path, llama.LoadOptions{})
	if err != nil {
		return nil, err
	}
	ctx, err := m.NewContext(llama.ContextOptions{Threads: l.Threads, Context: l.Context, Batch: l.Batch})
	if err != nil {
		m.Close()
		return nil, err
	}
	e := &engine{path: l.Path, model: m, ctx: ctx}
	if pc := l.PrefixCache; pc != nil && pc.Path != "" {
		e.prefix, e.prefixNote = openPrefixStore(*pc, prefixKey{Model: fileID(l.Path), Runner: runnerID()})
	}
	return e, nil
}

func (e *engine) close() {
	if e.prefix != nil {
		e.prefix.close()
	}
	e.ctx.Close()
	e.model.Close()
}

func (e *engine) info() *wire.Model {
	arch, _ := e.model.Meta("general.architecture")
	tmpl, _ := e.model.Meta("tokenizer.chat_template")
	return &wire.Model{Path: e.path, Arch: arch, Params: e.model.Params(), Bytes: e.model.Size(),
		Vocab: e.model.VocabSize(), Context: e.ctx.Size(), Template: tmpl, PrefixNote: e.prefixNote}
}

func (e *engine) snapshot() wire.Stats {
	e.statMu.Lock()
	defer e.statMu.Unlock()
	return e.stats
}

func (e *engine) count(f func(*wire.Stats)) {
	e.statMu.Lock()
	f(&e.stats)
	e.stats.KVTokens = len(e.cached)
	e.statMu.Unlock()
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
	vocab := llama.Token(e.model.VocabSize())
	for i, t := range prompt {
		if t < 0 || t >= vocab {
			return nil, fmt.Errorf("generate: token %d at %d is outside the vocabulary of %d", t, i, vocab)
		}
	}
	if g.MaxTokens < 0 {
		return nil, fmt.Errorf("generate: max_tokens %d: want 0 (no limit) or more", g.MaxTokens)
	}
	sampler, err := sampling.New(sampling.Params(g.Sampling))
	if err != nil {
		return nil, err
	}
	var con *constrainedRun
	if g.Constraint != nil {
		k, err := e.cons.get(e.model, *g.Constraint)
		if err != nil {
			return nil, err
		}
		con = newRun(k)
	}

	// A cancel that arrives from here on reaches Decode through the flag, and
	// one that came before is seen on the channel.
	e.ctx.ResetCancel()
	done := &wire.Done{PromptTokens: len(prompt)}
	if isClosed(cancel) {
		done.Reason = "cancelled"
		return done, nil
	}

	// Prefix reuse: keep the KV entries of the common prefix, evaluate the rest.
	// At least one token is always evaluated, to have logits to sample from.
	// The saved prefix state comes in when it holds more of the prompt than
	// the cache does (after a restart: all of the fixed prefix).
	reuse := commonPrefix(e.cached, prompt)
	var notes []string
	if e.prefix != nil && e.prefix.match(prompt) > reuse {
		if toks, err := e.prefix.load(e.ctx); err != nil {
			notes = append(notes, err.Error())
			e.cached = e.cached[:0] // the failed load emptied the KV cache
			reuse = 0
		} else {
			e.cached = append(e.cached[:0], toks...)
			reuse = commonPrefix(e.cached, prompt)
			done.SavedTokens = reuse
		}
	}
	fixed := e.fixedPrefix(g, prompt)
	if reuse == len(prompt) {
		reuse--
	}
	if err := e.ctx.TrimKV(reuse); err != nil {
		e.ctx.ClearKV()
		reuse = 0
	}
	e.cached = e.cached[:reuse]
	if done.SavedTokens > reuse {
		done.SavedTokens = reuse
	}
	done.ReusedTokens = reuse
	defer func() {
		done.PrefixNote = strings.Join(slices.DeleteFunc(append(notes, e.prefix.takeNote()), isEmpty), "; ")
	}()
	// The fixed prefix's state is saved on the way, when the cache holds
	// exactly it: the prompt is evaluated up to its end, saved, then the rest.
	parts := [][2]int{{reuse, len(prompt)}}
	save := e.prefix != nil && reuse <= len(fixed) && e.prefix.wants(fixed)
	if save {
		parts = [][2]int{{reuse, len(fixed)}, {len(fixed), len(prompt)}}
	}
	for i, part := range parts {
		if part[0] < part[1] {
			if err := e.ctx.Decode(prompt[part[0]:part[1]], part[0]); err != nil {
				e.rollback()
				if errors.Is(err, llama.ErrCancelled) {
					done.Reason = "cancelled"
					return done, nil
				}
				return nil, err
			}
			e.cached = append(e.cached, prompt[part[0]:part[1]]...)
		}
		if save && i == 0 {
			if err := e.saveFixed(fixed); err != nil {
				notes = append(notes, err.Error())
			} else {
				done.PrefixSaved = len(fixed)
			}
		}
	}
	done.EvaluatedTokens = len(prompt) - reuse
	done.PrefillMS = ms(time.Since(start))
	sampler.Accept(prompt...)
	e.count(func(s *wire.Stats) {
		s.Generations++
		s.TokensIn += uint64(len(prompt) - reuse)
		s.TokensReused += uint64(reuse)
	})

	out := output{stops: g.Stop, emit: emit}
	// forced holds the tokens that close a think section past its budget;
	// closed says they were queued (once a generation).
	var forced []llama.Token
	closed := false
	decodeStart := time.Now()
	last := decodeStart
	finish := func(reason string) (*wire.Done, error) {
		if reason != "stop" {
			out.flush()
		}
		done.Reason = reason
		done.DecodeMS = ms(time.Since(decodeStart))
		if con != nil {
			con.finish(done)
		}
		return done, nil
	}
	for {
		if isClosed(cancel) {
			return finish("cancelled")
		}
		if g.MaxTokens > 0 && done.Generated >= g.MaxTokens {
			return finish("max_tokens")
		}
		if len(e.cached) >= e.ctx.Size() {
			return finish("context_full")
		}
		if con != nil && g.ThinkBudget > 0 && !closed && done.Generated >= g.ThinkBudget && con.thinking() {
			closed = true
			if forced, err = e.model.Tokenize(thinkEnd, false, false); err != nil {
				out.flush()
				return nil, err
			}
		}
		var tok llama.Token
		if len(forced) > 0 {
			tok, forced = forced[0], forced[1:]
		} else {
			var mask sampling.Mask
			var set *grammar.TokenSet
			if con != nil {
				set = con.mask()
				mask = set
			}
			if tok, err = sampler.Sample(e.ctx.Logits(), mask); err != nil {
				out.flush()
				if con != nil && errors.Is(err, sampling.ErrNoToken) {
					return nil, con.stuck(set.Len())
				}
				return nil, err
			}
		}
		if con != nil {
			if err := con.advance(tok); err != nil {
				out.flush()
				return nil, err
			}
		}
		if e.model.IsEndOfGeneration(tok) {
			return finish("eog")
		}
		sampler.Accept(tok)
		done.Generated++
		e.count(func(s *wire.Stats) { s.TokensOut++ })
		now := time.Now()
		if done.Generated == 1 {
			done.FirstTokenMS = ms(now.Sub(start))
		}
		stopped := out.add(tok, e.model.Piece(tok, false), ms(now.Sub(last)))
		last = now
		if stopped {
			return finish("stop")
		}
		// The last token is evaluated only when another is wanted: the KV
		// cache then ends with the prompt and all but the last token.
		if g.MaxTokens > 0 && done.Generated >= g.MaxTokens {
			return finish("max_tokens")
		}
		if err := e.ctx.Decode([]llama.Token{tok}, len(e.cached)); err != nil {
			e.rollback()
			if errors.Is(err, llama.ErrCancelled) {
				return finish("cancelled")
			}
			out.flush()
			return nil, err
		}
		e.cached = append(e.cached, tok)
	}
}

// fixedPrefix is the tokens of the prompt's fixed part (Generate.Prefix
// bytes of its text), when that is a proper prefix of the prompt's tokens:
// a tokenization that merges across the boundary gives none.
func (e *engine) fixedPrefix(g wire.Generate, prompt []llama.Token) []llama.Token {
	if e.prefix == nil || g.Prefix <= 0 || g.Prefix >= len(g.Prompt) || len(g.Tokens) > 0 {
		return nil
	}
	text := g.Prompt[:g.Prefix]
	if e.prefix.holds(text) {
		return nil // saved already: no need to tokenize it again (tens of ms on a Pi)
	}
	toks, err := e.model.Tokenize(text, false, true)
	if err != nil || len(toks) == 0 || len(toks) >= len(prompt) || commonPrefix(toks, prompt) != len(toks) {
		return nil
	}
	e.prefixText = text
	return toks
}

// saveFixed copies the KV cache, which holds exactly the fixed prefix, and
// has it written.
func (e *engine) saveFixed(fixed []llama.Token) error {
	if err := e.prefix.fits(fixed, e.ctx.StateSize()); err != nil {
		return err // known before copying what could be large
	}
	state, err := e.ctx.SeqState()
	if err != nil {
		return err
	}
	return e.prefix.save(fixed, e.prefixText, state)
}

// rollback brings the KV cache back to the cache mirror after a failed or
// cancelled Decode, which may have stored some of its tokens. If even that
// fails, the next prompt starts afresh.
func (e *engine) rollback() {
	if err := e.ctx.TrimKV(len(e.cached)); err != nil {
		e.ctx.ClearKV()
		e.cached = e.cached[:0]
	}
	e.count(func(*wire.Stats) {})
}

func isEmpty(s string) bool { return s == "" }

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// output streams generated tokens. A token's text is held back while it may
// be the start of a stop string, so that no part of a stop string is ever
// sent; bytes of a character split across tokens go with the token that
// completes it.
type output struct {
	stops   []string
	emit    func(wire.Token)
	pending []byte // bytes of a character not yet complete
	text    []byte // complete text of the held tokens
	held    []heldToken
}

type heldToken struct {
	id llama.Token
	n  int // bytes of text it brought
	ms float64
}

// add takes the next token and reports whether the output now contains a stop
// string: then what precedes the stop has been sent and generation ends.
func (o *output) add(tok llama.Token, piece []byte, ms float64) bool {
	o.pending = append(o.pending, piece...)
	c := completeUTF8(o.pending)
	o.text = append(o.text, o.pending[:c]...)
	o.pending = append(o.pending[:0], o.pending[c:]...)
	o.held = append(o.held, heldToken{id: tok, n: c, ms: ms})
	if len(o.stops) == 0 {
		o.send(len(o.text), false)
		return false
	}
	// A stop string can only begin in held text: text is sent only up to the
	// first point from which the rest could still begin one.
	at := -1
	for _, s := range o.stops {
		if i := strings.Index(string(o.text), s); s != "" && i >= 0 && (at < 0 || i < at) {
			at = i
		}
	}
	if at >= 0 {
		o.send(at, true)
		return true
	}
	o.send(safeLen(o.text, o.stops), false)
	return false
}

// send emits held tokens, in order, while their text lies within text[:upto].
// At a stop, upto may fall inside a token: that token is sent cut, and the
// caller ends the generation (the rest is never sent).
func (o *output) send(upto int, cut bool) {
	sent, off := 0, 0
	for _, h := range o.held {
		if off+h.n > upto {
			break
		}
		o.emit(wire.Token{ID: h.id, Text: string(o.text[off : off+h.n]), MS: h.ms})
		off += h.n
		sent++
	}
	if cut && off < upto {
		h := o.held[sent]
		o.emit(wire.Token{ID: h.id, Text: string(o.text[off:upto]), MS: h.ms})
		off = upto
		sent++
	}
	o.held = append(o.held[:0], o.held[sent:]...)
	o.text = append(o.text[:0], o.text[off:]...)
}

// flush sends whatever is held, at the end of a generation that did not stop
// at a stop string. Bytes of an unfinished character are dropped.
func (o *output) flush() { o.send(len(o.text), false) }

// safeLen is the length of the longest prefix of text after which no stop
// string can still begin: the rest is a prefix of some stop string.
func safeLen(text []byte, stops []string) int {
	for i := range len(text) {
		rest := string(text[i:])
		for _, s := range stops {
			if s != "" && strings.HasPrefix(s, rest) {
				return i
			}
		}
	}
	return len(text)
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

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
