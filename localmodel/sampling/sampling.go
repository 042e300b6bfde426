// Package sampling picks the next token from a model's logits. It is pure Go and
// runs inside the runner process over the logits llama.cpp returns, so that the
// constraint engine can mask tokens before anything is chosen, and so that the
// same seed gives the same tokens on every board.
package sampling

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
)

// Params are the sampling settings of one request. The zero value is greedy.
type Params struct {
	Temperature   float32 // 0 (or below) means greedy: always the most likely token
	TopK          int     // keep the K most likely tokens; 0 = all
	TopP          float32 // keep the smallest set whose probability reaches P; 0 or 1 = all
	MinP          float32 // drop tokens below MinP × the top token's probability; 0 = off
	RepeatPenalty float32 // divide positive (multiply negative) logits of recent tokens; 0 or 1 = off
	RepeatLastN   int     // how many recent tokens the penalty looks at; 0 = 64
	Seed          uint64
}

// Validate reports settings that cannot be meant.
func (p Params) Validate() error {
	switch {
	case math.IsNaN(float64(p.Temperature)) || p.Temperature > 100:
		return fmt.Errorf("temperature %v: want 0..100", p.Temperature)
	case p.TopK < 0:
		return fmt.Errorf("top_k %d: want 0 or more", p.TopK)
	case !(p.TopP >= 0 && p.TopP <= 1):
		return fmt.Errorf("top_p %v: want 0..1", p.TopP)
	case !(p.MinP >= 0 && p.MinP <= 1):
		return fmt.Errorf("min_p %v: want 0..1", p.MinP)
	case !(p.RepeatPenalty >= 0 && p.RepeatPenalty <= 10):
		return fmt.Errorf("repeat_penalty %v: want 0..10", p.RepeatPenalty)
	case p.RepeatLastN < 0:
		return fmt.Errorf("repeat_last_n %d: want 0 or more", p.RepeatLastN)
	}
	return nil
}

// Mask says which tokens may come next; nil allows all. The constraint engine
// provides one per step.
type Mask interface {
	Allowed(token int32) bool
}

// TokenLister is a Mask that can list what it allows, so that a step looks
// at the allowed tokens only instead of asking about each of the 151,936 of
// the Qwen vocabulary. The grammar's token sets implement it.
type TokenLister interface {
	Mask
	// AllowedTokens lists the allowed tokens in ascending order, or returns
	// nil when this mask holds no list (then Allowed, or AllowedBits of
	// BitMask, answers). An empty non-nil slice allows nothing.
	AllowedTokens() []int32
}

// BitMask is a Mask that can hand over its allowed set as a bitset: bit t%64
// of word t/64 is set when token t is allowed. A step then skips 64
// forbidden tokens at a time.
type BitMask interface {
	Mask
	// AllowedBits returns the bitset, or nil when this mask holds none.
	AllowedBits() []uint64
}

// ErrNoToken means the mask allowed no token with a finite logit: generation
// must stop with an error, never pick a token the constraint forbids.
var ErrNoToken = errors.New("sampling: no allowed token can follow")

// Sampler picks tokens for one generation. It keeps its random source and
// scratch space between steps, so a step allocates nothing.
type Sampler struct {
	p       Params
	rng     *rand.Rand
	cand    []candidate
	history []int32
}

type candidate struct {
	id    int32
	logit float32
	p     float32
}

// New returns a sampler for one generation.
func New(p Params) (*Sampler, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if p.RepeatLastN == 0 {
		p.RepeatLastN = 64
	}
	return &Sampler{p: p, rng: rand.New(rand.NewPCG(p.Seed, p.Seed^0x9e3779b97f4a7c15))}, nil
}

// Accept records a token that became part of the text (the prompt's tokens
// too, so that the repetition penalty sees them).
func (s *Sampler) Accept(tokens ...int32) {
	s.history = append(s.history, tokens...)
	if over := len(s.history) - s.p.RepeatLastN; over > 4*s.p.RepeatLastN {
		s.history = append(s.history[:0], s.history[over:]...)
	}
}

// Sample picks the next token from logits (one per vocabulary entry). It does
// not modify logits. The work is linear in the vocabulary plus O(k log n) for
// the kept tokens, never a full sort: the Qwen vocabulary has 151,936 entries.
func (s *Sampler) Sample(logits []float32, mask Mask) (int32, error) {
	if s.p.Temperature <= 0 && !s.penalizing() {
		return greedy(logits, mask)
	}
	s.cand = s.cand[:0]
	switch list, set := listing(mask); {
	case list != nil:
		for _, id := range list {
			if l, ok := finite(logits, id); ok {
				s.cand = append(s.cand, candidate{id: id, logit: l})
			}
		}
	case set != nil:
		for w, word := range set {
			base := w << 6
			if word == ^uint64(0) && base+64 <= len(logits) {
				for j, l := range logits[base : base+64] {
					if l > float32(math.Inf(-1)) { // neither NaN nor -Inf
						s.cand = append(s.cand, candidate{id: int32(base + j), logit: l})
					}
				}
				continue
			}
			for ; word != 0; word &= word - 1 {
				id := int32(base + bits.TrailingZeros64(word))
				if l, ok := finite(logits, id); ok {
					s.cand = append(s.cand, candidate{id: id, logit: l})
				}
			}
		}
	default:
		for id, l := range logits {
			if math.IsNaN(float64(l)) || math.IsInf(float64(l), -1) || mask != nil && !mask.Allowed(int32(id)) {
				continue
			}
			s.cand = append(s.cand, candidate{id: int32(id), logit: l})
		}
	}
	if len(s.cand) == 0 {
		return 0, ErrNoToken
	}
	s.penalize()
	if s.p.Temperature <= 0 {
		best := s.cand[0]
		for _, c := range s.cand[1:] {
			if c.logit > best.logit {
				best = c
			}
		}
		return best.id, nil
	}
	if k := s.p.TopK; k > 0 && k < len(s.cand) {
		s.cand = topK(s.cand, k)
	}
	s.softmax()
	if mp := s.p.MinP; mp > 0 {
		var top float32
		for _, c := range s.cand {
			top = max(top, c.p)
		}
		kept := s.cand[:0]
		for _, c := range s.cand {
			if c.p >= mp*top {
				kept = append(kept, c)
			}
		}
		s.cand = kept
	}
	if tp := s.p.TopP; tp > 0 && tp < 1 {
		s.cand = nucleus(s.cand, tp)
	}
	var total float32
	for _, c := range s.cand {
		total += c.p
	}
	r := s.rng.Float32() * total
	for _, c := range s.cand {
		if r < c.p {
			return c.id, nil
		}
		r -= c.p
	}
	return s.cand[len(s.cand)-1].id, nil
}

// greedy is the common case: the most likely allowed token, in one pass.
// A logit only counts if it beats the best so far, which NaN and -Inf never
// do; ties keep the lowest id. With a list or a bitset, only allowed tokens
// are looked at; a plain mask is asked only about a token that would win.
func greedy(logits []float32, mask Mask) (int32, error) {
	best := int32(-1)
	bestLogit := float32(math.Inf(-1))
	switch list, set := listing(mask); {
	case list != nil:
		for _, id := range list {
			if id >= 0 && int(id) < len(logits) && logits[id] > bestLogit {
				best, bestLogit = id, logits[id]
			}
		}
	case set != nil:
		for w, word := range set {
			base := w << 6
			if base >= len(logits) {
				break
			}
			if word == ^uint64(0) && base+64 <= len(logits) {
				for j, l := range logits[base : base+64] {
					if l > bestLogit {
						best, bestLogit = int32(base+j), l
					}
				}
				continue
			}
			for ; word != 0; word &= word - 1 {
				id := base + bits.TrailingZeros64(word)
				if id < len(logits) && logits[id] > bestLogit {
					best, bestLogit = int32(id), logits[id]
				}
			}
		}
	case mask != nil:
		for id, l := range logits {
			if l > bestLogit && mask.Allowed(int32(id)) {
				best, bestLogit = int32(id), l
			}
		}
	default:
		for id, l := range logits {
			if l > bestLogit {
				best, bestLogit = int32(id), l
			}
		}
	}
	if best < 0 {
		return 0, ErrNoToken
	}
	return best, nil
}

// listing returns the mask's list or bitset of allowed tokens, whichever it
// holds (both nil for a plain Mask or no mask).
func listing(mask Mask) (list []int32, set []uint64) {
	if l, ok := mask.(TokenLister); ok {
		if list = l.AllowedTokens(); list != nil {
			return list, nil
		}
	}
	if b, ok := mask.(BitMask); ok {
		set = b.AllowedBits()
	}
	return nil, set
}

// finite returns token id's logit if the token is in range and its logit can
// be sampled.
func finite(logits []float32, id int32) (float32, bool) {
	if id < 0 || int(id) >= len(logits) {
		return 0, false
	}
	l := logits[id]
	return l, !math.IsNaN(float64(l)) && !math.IsInf(float64(l), -1)
}

// better orders candidates: higher logit first, ties by lower id, so that
// results do not depend on the order work was done in.
func better(a, b candidate) bool {
	return a.logit > b.logit || a.logit == b.logit && a.id < b.id
}

// topK keeps the k best candidates, best first, with a size-k min-heap.
func topK(c []candidate, k int) []candidate {
	h := c[:0:0]
	h = append(h, c[:k]...)
	worstFirst := func(a, b candidate) bool { return better(b, a) }
	heapify(h, worstFirst)
	for _, x := range c[k:] {
		if better(x, h[0]) {
			h[0] = x
			siftDown(h, 0, worstFirst)
		}
	}
	copy(c, h)
	c = c[:k]
	slices.SortFunc(c, func(a, b candidate) int {
		if better(a, b) {
			return -1
		}
		return 1
	})
	return c
}

// nucleus keeps the most probable candidates until their probability reaches
// p, popping from a max-heap so that only the kept ones are ordered.
func nucleus(c []candidate, p float32) []candidate {
	byP := func(a, b candidate) bool { return a.p > b.p || a.p == b.p && a.id < b.id }
	heapify(c, byP)
	var sum float32
	n := len(c)
	kept := 0
	for n > 0 && sum < p {
		top := c[0]
		n--
		c[0] = c[n]
		siftDown(c[:n], 0, byP)
		c[n] = top // popped items collect at the end, best last
		sum += top.p
		kept++
	}
	out := c[len(c)-kept:]
	slices.Reverse(out)
	return out
}

func heapify(h []candidate, first func(a, b candidate) bool) {
	for i := len(h)/2 - 1; i >= 0; i-- {
		siftDown(h, i, first)
	}
}

func siftDown(h []candidate, i int, first func(a, b candidate) bool) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && first(h[r], h[l]) {
			m = r
		}
		if !first(h[m], h[i]) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

func (s *Sampler) penalizing() bool {
	return s.p.RepeatPenalty != 0 && s.p.RepeatPenalty != 1 && len(s.history) > 0
}

// penalize applies the repetition penalty to candidates seen recently.
func (s *Sampler) penalize() {
	if !s.penalizing() {
		return
	}
	pen := s.p.RepeatPenalty
	recent := s.history[max(0, len(s.history)-s.p.RepeatLastN):]
	seen := make(map[int32]bool, len(recent))
	for _, t := range recent {
		seen[t] = true
	}
	for i := range s.cand {
		if seen[s.cand[i].id] {
			if s.cand[i].logit > 0 {
				s.cand[i].logit /= pen
			} else {
				s.cand[i].logit *= pen
			}
		}
	}
}

// softmax turns the logits into probabilities at the temperature.
func (s *Sampler) softmax() {
	top := s.cand[0].logit
	for _, c := range s.cand[1:] {
		top = max(top, c.logit)
	}
	var sum float64
	for i := range s.cand {
		e := math.Exp(float64((s.cand[i].logit - top) / s.p.Temperature))
		s.cand[i].p = float32(e)
		sum += e
	}
	for i := range s.cand {
		s.cand[i].p = float32(float64(s.cand[i].p) / sum)
	}
}
