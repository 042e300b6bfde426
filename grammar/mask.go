package grammar

import (
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"
)

// TokenSet is the set of tokens allowed in one automaton state. It is
// immutable and satisfies localmodel/sampling's Mask, and its optional
// listing interfaces, so the sampler can look at the allowed tokens only.
type TokenSet struct {
	list []int32  // ascending; nil when dense
	bits []uint64 // bit t set when token t is allowed; nil when sparse
	n    int
}

// Allowed reports whether token t is in the set.
func (s *TokenSet) Allowed(t int32) bool {
	if s.bits != nil {
		return t >= 0 && int(t>>6) < len(s.bits) && s.bits[t>>6]&(1<<(uint(t)&63)) != 0
	}
	_, ok := slices.BinarySearch(s.list, t)
	return ok
}

// Len is the number of tokens in the set.
func (s *TokenSet) Len() int { return s.n }

// AllowedTokens lists the set, ascending, when it is held as a list (a small
// set); nil otherwise. Shared: do not modify.
func (s *TokenSet) AllowedTokens() []int32 {
	if s.bits != nil {
		return nil
	}
	if s.list == nil {
		return []int32{} // empty, but listed
	}
	return s.list
}

// AllowedBits is the set as a bitset (bit t of word t/64) when it is held as
// one (a large set); nil otherwise. Shared: do not modify.
func (s *TokenSet) AllowedBits() []uint64 { return s.bits }

// AppendTokens appends the tokens of the set, ascending, to dst.
func (s *TokenSet) AppendTokens(dst []int32) []int32 {
	if s.bits == nil {
		return append(dst, s.list...)
	}
	for w, word := range s.bits {
		for word != 0 {
			dst = append(dst, int32(w<<6+bits.TrailingZeros64(word)))
			word &= word - 1
		}
	}
	return dst
}

// hash mixes the set's contents into 64 bits.
func (s *TokenSet) hash() uint64 {
	const prime = 0x100000001b3
	h := uint64(0xcbf29ce484222325) ^ uint64(s.n)
	for _, t := range s.list {
		h = (h ^ uint64(uint32(t))) * prime
	}
	for _, w := range s.bits {
		h = (h ^ w) * prime
		h ^= h >> 29
	}
	return h
}

// MemoryBytes is the memory the set holds.
func (s *TokenSet) MemoryBytes() int { return 4*len(s.list) + 8*len(s.bits) + 48 }

// newTokenSet makes a set from tokens (any order, no duplicates) of a
// vocabulary of size vocab, as a list or a bitset, whichever is smaller.
func newTokenSet(tokens []int32, vocab int) *TokenSet {
	words := (vocab + 63) / 64
	if 4*len(tokens) <= 8*words {
		list := slices.Clone(tokens)
		slices.Sort(list)
		return &TokenSet{list: list, n: len(list)}
	}
	b := make([]uint64, words)
	for _, t := range tokens {
		b[t>>6] |= 1 << (uint(t) & 63)
	}
	return &TokenSet{bits: b, n: len(tokens)}
}

var emptySet = &TokenSet{n: 0}

// MaskCache holds, for one automaton over one vocabulary, the set of tokens
// allowed in each state. A state's set is computed the first time it is asked
// for, by a depth-first walk of the vocabulary trie that steps the automaton
// along and skips every subtree whose prefix is already dead, and then reused:
// a decoding step costs a lookup. It is safe for concurrent use; two callers
// that miss on the same state at once may both compute it, and one result is
// kept.
type MaskCache struct {
	a    Automaton
	v    *Vocab
	sets []atomic.Pointer[TokenSet]

	computed atomic.Int64 // sets computed
	memory   atomic.Int64 // bytes held by the distinct sets kept
	limit    atomic.Int64 // bytes the kept sets may take; 0: no limit

	// Many states allow the same tokens (each character position of a
	// free string, say): a set equal to one already kept is shared.
	mu     sync.Mutex
	byHash map[uint64][]*TokenSet

	scratch sync.Pool // *walkScratch
}

type walkScratch struct {
	tokens []int32
	states []int32 // states[d]: the automaton state after the first d bytes of the current path
}

// NewMaskCache prepares an empty cache for automaton a over vocabulary v.
func NewMaskCache(a Automaton, v *Vocab) *MaskCache {
	return &MaskCache{a: a, v: v, sets: make([]atomic.Pointer[TokenSet], max(a.NumStates(), 0))}
}

// Automaton is the cache's automaton.
func (c *MaskCache) Automaton() Automaton { return c.a }

// Vocab is the cache's vocabulary.
func (c *MaskCache) Vocab() *Vocab { return c.v }

// Allowed is the set of tokens that may follow in state s: the normal tokens
// whose bytes the automaton can read from s without dying, and the
// end-of-generation tokens if s is accepting. Dead and out-of-range states
// allow nothing.
func (c *MaskCache) Allowed(s int32) *TokenSet {
	if s < 0 || int(s) >= len(c.sets) {
		return emptySet
	}
	if set := c.sets[s].Load(); set != nil {
		return set
	}
	set, kept := c.intern(c.compute(s))
	if !kept {
		return set // over the memory limit: computed again next time
	}
	if c.sets[s].CompareAndSwap(nil, set) {
		c.computed.Add(1)
		return set
	}
	return c.sets[s].Load()
}

// SetMemoryLimit bounds the bytes the cache keeps (0: no bound). Past it,
// the sets of states not yet cached are computed at every visit instead of
// kept: slower, never more memory.
func (c *MaskCache) SetMemoryLimit(bytes int64) { c.limit.Store(max(bytes, 0)) }

// intern returns the kept set equal to set, keeping set if there is none
// and the memory limit allows; kept says whether the result is kept.
func (c *MaskCache) intern(set *TokenSet) (_ *TokenSet, kept bool) {
	h := set.hash()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range c.byHash[h] {
		if k.n == set.n && slices.Equal(k.list, set.list) && slices.Equal(k.bits, set.bits) {
			return k, true
		}
	}
	size := int64(set.MemoryBytes())
	if limit := c.limit.Load(); limit > 0 && c.memory.Load()+size > limit {
		return set, false
	}
	if c.byHash == nil {
		c.byHash = make(map[uint64][]*TokenSet)
	}
	c.byHash[h] = append(c.byHash[h], set)
	c.memory.Add(size)
	return set, true
}

// Cached reports whether state s's set has been computed.
func (c *MaskCache) Cached(s int32) bool {
	return s >= 0 && int(s) < len(c.sets) && c.sets[s].Load() != nil
}

// Stats are the number of states whose set was computed and the bytes the
// distinct sets hold.
func (c *MaskCache) Stats() (sets int, bytes int64) {
	return int(c.computed.Load()), c.memory.Load()
}

func (c *MaskCache) compute(s int32) *TokenSet {
	v, a := c.v, c.a
	w, _ := c.scratch.Get().(*walkScratch)
	if w == nil {
		w = &walkScratch{states: make([]int32, v.longest+1)}
	}
	defer c.scratch.Put(w)
	var tokens []int32
	if d, ok := a.(*Constraint); ok && d.dfa != nil {
		tokens = walkTable(d.dfa, v, s, w.tokens[:0], w.states)
	} else {
		tokens = walkTrie(a, v, s, w.tokens[:0], w.states)
	}
	if a.Accepting(s) {
		tokens = append(tokens, v.eog...)
	}
	w.tokens = tokens
	return newTokenSet(tokens, v.Len())
}

// walkTrie appends to tokens the normal tokens whose bytes automaton a can
// read from state s. states has room for the longest token plus one.
func walkTrie(a Automaton, v *Vocab, s int32, tokens, states []int32) []int32 {
	states[0] = s
	// Preorder: a node's parent is the last node seen one level up, so its
	// state is states[depth-1]. A dead node's whole subtree is skipped.
	label, depth, size, ends, sorted := v.label, v.depth, v.size, v.ends, v.sorted
	for i := 1; i < len(label); {
		d := depth[i]
		next := a.Next(states[d-1], label[i])
		if next == Dead {
			i += int(size[i])
			continue
		}
		states[d] = next
		for j := ends[i]; j < ends[i+1]; j++ {
			tokens = append(tokens, sorted[j])
		}
		i++
	}
	return tokens
}

// walkTable is walkTrie for a compiled constraint, stepping through its
// transition table inline: the walk makes one step per trie node, 333,009
// for the Qwen vocabulary in a state that allows all text, and an interface
// call each is a good part of the time.
func walkTable(d *dfa, v *Vocab, s int32, tokens, states []int32) []int32 {
	states[0] = s
	classes, nclass, table := &d.classes, d.nclass, d.table
	label, depth, size, ends, sorted := v.label, v.depth, v.size, v.ends, v.sorted
	for i := 1; i < len(label); {
		dp := depth[i]
		next := table[int(states[dp-1])*nclass+int(classes[label[i]])]
		if next == Dead {
			i += int(size[i])
			continue
		}
		states[dp] = next
		for j := ends[i]; j < ends[i+1]; j++ {
			tokens = append(tokens, sorted[j])
		}
		i++
	}
	return tokens
}

// Advance is the state after token t in state s: its bytes stepped through
// the automaton. An end-of-generation token leaves an accepting state as it
// is; everything the set of s does not allow gives Dead.
func (c *MaskCache) Advance(s int32, t int32) int32 {
	return Advance(c.a, c.v, s, t)
}

// Advance steps automaton a from state s by token t of vocabulary v, as
// MaskCache.Advance does, without a cache.
func Advance(a Automaton, v *Vocab, s int32, t int32) int32 {
	if s < 0 || int(s) >= a.NumStates() || t < 0 || int(t) >= v.Len() {
		return Dead
	}
	switch v.kinds[t] {
	case TokenEOG:
		if a.Accepting(s) {
			return s
		}
		return Dead
	case TokenControl:
		return Dead
	}
	for _, b := range v.Bytes(t) {
		if s = a.Next(s, b); s == Dead {
			return Dead
		}
	}
	return s
}
