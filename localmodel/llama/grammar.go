//go:build llamacpp

package llama

/*
#include <math.h>
#include <stdlib.h>
#include "llama.h"

// grammar_step fills the candidate array with every token's logit, lets the
// grammar sampler set the logits of the tokens it rejects to -inf, and
// returns the most likely token it left (or -1) and how many it left.
static llama_token grammar_step(struct llama_sampler * s, llama_token_data * data, const float * logits, int n, int * allowed) {
	for (int i = 0; i < n; i++) {
		data[i].id = i;
		data[i].logit = logits[i];
		data[i].p = 0;
	}
	llama_token_data_array arr = { data, (size_t)n, -1, false };
	llama_sampler_apply(s, &arr);
	llama_token best = -1;
	float best_logit = -INFINITY;
	int left = 0;
	for (size_t i = 0; i < arr.size; i++) {
		if (isinf(arr.data[i].logit) && arr.data[i].logit < 0) continue;
		left++;
		if (best < 0 || arr.data[i].logit > best_logit) {
			best = arr.data[i].id;
			best_logit = arr.data[i].logit;
		}
	}
	*allowed = left;
	return best;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"math"
	"unsafe"
)

// GrammarSampler is llama.cpp's own GBNF grammar sampler over the full
// vocabulary. clawedge does not decode with it (its constraint engine is
// package grammar); it is here so that benchmarks can compare the two on the
// same grammar.
type GrammarSampler struct {
	s    *C.struct_llama_sampler
	data *C.llama_token_data // C memory: one entry per token
	n    int
}

// NewGrammarSampler parses a GBNF grammar starting at rule root.
func (m *Model) NewGrammarSampler(gbnf, root string) (*GrammarSampler, error) {
	cg, cr := C.CString(gbnf), C.CString(root)
	defer C.free(unsafe.Pointer(cg))
	defer C.free(unsafe.Pointer(cr))
	firstError()
	s := C.llama_sampler_init_grammar(m.vocab, cg, cr)
	if s == nil {
		msg := firstError()
		if msg == "" {
			msg = "parse error"
		}
		return nil, fmt.Errorf("llama: GBNF grammar: %s", msg)
	}
	n := m.VocabSize()
	data := (*C.llama_token_data)(C.calloc(C.size_t(n), C.size_t(unsafe.Sizeof(C.llama_token_data{}))))
	if data == nil {
		C.llama_sampler_free(s)
		return nil, errors.New("llama: out of memory for the candidate array")
	}
	return &GrammarSampler{s: s, data: data, n: n}, nil
}

// Apply runs the sampler over logits (one per vocabulary token) and returns
// the most likely token the grammar allows (-1 if none) and how many it
// allows. logits is not modified.
func (g *GrammarSampler) Apply(logits []float32) (best Token, allowed int) {
	if len(logits) < g.n {
		return -1, 0
	}
	var left C.int
	t := C.grammar_step(g.s, g.data, (*C.float)(unsafe.Pointer(&logits[0])), C.int(g.n), &left)
	return Token(t), int(left)
}

// Allowed reports whether the last Apply left token t allowed.
func (g *GrammarSampler) Allowed(t Token) bool {
	if t < 0 || int(t) >= g.n {
		return false
	}
	l := unsafe.Slice(g.data, g.n)[t].logit
	return !math.IsInf(float64(l), -1)
}

// Accept advances the grammar over token t, which Apply must have allowed.
func (g *GrammarSampler) Accept(t Token) { C.llama_sampler_accept(g.s, C.llama_token(t)) }

// Reset brings the grammar back to its start.
func (g *GrammarSampler) Reset() { C.llama_sampler_reset(g.s) }

// Close frees the sampler.
func (g *GrammarSampler) Close() {
	if g.s != nil {
		C.llama_sampler_free(g.s)
		C.free(unsafe.Pointer(g.data))
		g.s, g.data = nil, nil
	}
}
