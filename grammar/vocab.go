package grammar

import (
	"bytes"
	"fmt"
	"math"
	"slices"
)

// TokenKind says how the constraint engine treats a vocabulary token.
type TokenKind uint8

const (
	// TokenNormal is text: allowed wherever its bytes are. Byte-level BPE
	// pieces and user-defined added tokens (Qwen's <tool_call>) are normal.
	TokenNormal TokenKind = iota
	// TokenControl is never allowed: <|im_start|>, padding, tokens with no bytes.
	TokenControl
	// TokenEOG ends generation: allowed only where the output may end.
	TokenEOG
)

func (k TokenKind) String() string {
	switch k {
	case TokenNormal:
		return "normal"
	case TokenControl:
		return "control"
	case TokenEOG:
		return "eog"
	}
	return fmt.Sprintf("TokenKind(%d)", uint8(k))
}

// Token is one vocabulary entry as the runner reads it from the model: the
// bytes it stands for (special tokens rendered) and its kind.
type Token struct {
	Bytes []byte
	Kind  TokenKind
}

// Vocab is a model's vocabulary prepared for masking: every token's bytes and
// kind, and a byte trie over the normal tokens.
//
// The trie is stored in preorder, in flat arrays: node i has the byte that
// leads to it (label[i]), the number of nodes in its subtree including itself
// (size[i]), so a walk skips a dead subtree in one step, and the tokens whose
// bytes end exactly there, sorted[ends[i]:ends[i+1]]. Preorder of a trie is
// the lexicographic order of the tokens, so sorting the tokens by their bytes
// builds it in one pass. Node 0 is the root (the empty string).
type Vocab struct {
	kinds []TokenKind
	data  []byte   // all token bytes, concatenated
	off   []uint32 // token t's bytes are data[off[t]:off[t+1]]
	eog   []int32  // the end-of-generation tokens, ascending

	label   []byte
	depth   []uint16 // node i is depth[i] bytes from the root
	size    []uint32
	ends    []uint32 // len(label)+1 entries
	sorted  []int32  // normal tokens in lexicographic order of their bytes
	longest int      // the longest token, in bytes
}

// maxTokenBytes bounds one token's bytes: real vocabularies stay under 300.
const maxTokenBytes = 1 << 12

// NewVocab prepares a vocabulary; tokens[i] is token i. A normal token with
// no bytes is treated as control: it would let the output grow without
// advancing the constraint.
func NewVocab(tokens []Token) (*Vocab, error) {
	if len(tokens) == 0 {
		return nil, fmt.Errorf("grammar: empty vocabulary")
	}
	if len(tokens) > 1<<30 {
		return nil, fmt.Errorf("grammar: vocabulary of %d tokens is too large", len(tokens))
	}
	v := &Vocab{kinds: make([]TokenKind, len(tokens)), off: make([]uint32, len(tokens)+1)}
	total := 0
	for i, t := range tokens {
		if len(t.Bytes) > maxTokenBytes {
			return nil, fmt.Errorf("grammar: token %d has %d bytes (at most %d)", i, len(t.Bytes), maxTokenBytes)
		}
		total += len(t.Bytes)
		if total > math.MaxInt32 { // offsets are uint32; and int is 32 bits on armv6/armv7
			return nil, fmt.Errorf("grammar: vocabulary holds more than 2 GiB of token text")
		}
	}
	v.data = make([]byte, 0, total)
	var normal int
	for i, t := range tokens {
		k := t.Kind
		switch k {
		case TokenNormal:
			if len(t.Bytes) == 0 {
				k = TokenControl
			} else {
				normal++
			}
		case TokenControl:
		case TokenEOG:
			v.eog = append(v.eog, int32(i))
		default:
			return nil, fmt.Errorf("grammar: token %d has unknown kind %d", i, t.Kind)
		}
		v.kinds[i] = k
		v.data = append(v.data, t.Bytes...)
		v.off[i+1] = uint32(len(v.data))
	}
	// Sort by the first 8 bytes as a big-endian number (zero-padded: if
	// two keys differ, so do the byte strings, in the same order), and by the
	// bytes themselves only when the keys tie.
	type keyed struct {
		key uint64
		tok int32
	}
	ks := make([]keyed, 0, normal)
	for i, k := range v.kinds {
		if k == TokenNormal {
			var key uint64
			b := v.Bytes(int32(i))
			for j := range 8 {
				key <<= 8
				if j < len(b) {
					key |= uint64(b[j])
				}
			}
			ks = append(ks, keyed{key, int32(i)})
		}
	}
	slices.SortFunc(ks, func(a, b keyed) int {
		switch {
		case a.key < b.key:
			return -1
		case a.key > b.key:
			return 1
		}
		if c := bytes.Compare(v.Bytes(a.tok), v.Bytes(b.tok)); c != 0 {
			return c
		}
		return int(a.tok - b.tok)
	})
	v.sorted = make([]int32, len(ks))
	for i, k := range ks {
		v.sorted[i] = k.tok
	}
	v.buildTrie()
	return v, nil
}

// buildTrie lays the trie out in preorder from the sorted tokens: each token
// shares with the previous one the path of their common prefix and adds nodes
// for the rest of its bytes.
func (v *Vocab) buildTrie() {
	// At most one node per byte of text plus the root; real vocabularies
	// share most prefixes, so start smaller and let it grow.
	guess := len(v.data)/2 + 1
	v.label = make([]byte, 1, guess)
	v.ends = make([]uint32, 1, guess+1) // ends[0] = 0: the root has no tokens
	v.depth = make([]uint16, 1, guess)
	var prev []byte
	for i, t := range v.sorted {
		b := v.Bytes(t)
		common := 0
		for common < len(prev) && common < len(b) && prev[common] == b[common] {
			common++
		}
		// The nodes of b[common:] are new. The token that creates a node is
		// the first one ending at or below it, so ends[node] = i is where the
		// node's own tokens start in sorted.
		for d := common; d < len(b); d++ {
			v.label = append(v.label, b[d])
			v.ends = append(v.ends, uint32(i))
			v.depth = append(v.depth, uint16(d+1))
		}
		v.longest = max(v.longest, len(b))
		prev = b
	}
	v.ends = append(v.ends, uint32(len(v.sorted)))
	// In preorder a node's subtree ends where the next node of the same or a
	// smaller depth begins.
	n := len(v.label)
	v.size = make([]uint32, n)
	var stack []uint32
	for i := 1; i <= n; i++ {
		d := uint16(0)
		if i < n {
			d = v.depth[i]
		}
		for len(stack) > 0 && v.depth[stack[len(stack)-1]] >= d {
			top := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			v.size[top] = uint32(i) - top
		}
		if i < n {
			stack = append(stack, uint32(i))
		}
	}
	v.size[0] = uint32(n)
}

// Len is the number of tokens.
func (v *Vocab) Len() int { return len(v.kinds) }

// Kind is token t's kind; it panics if t is out of range.
func (v *Vocab) Kind(t int32) TokenKind { return v.kinds[t] }

// Bytes is token t's bytes (shared: do not modify).
func (v *Vocab) Bytes(t int32) []byte { return v.data[v.off[t]:v.off[t+1]:v.off[t+1]] }

// EOG lists the end-of-generation tokens, ascending (shared: do not modify).
func (v *Vocab) EOG() []int32 { return v.eog }

// Nodes is the number of trie nodes, root included.
func (v *Vocab) Nodes() int { return len(v.label) }

// MemoryBytes estimates the memory the vocabulary holds.
func (v *Vocab) MemoryBytes() int {
	return len(v.kinds) + len(v.data) + 4*len(v.off) + 4*len(v.eog) +
		len(v.label) + 2*len(v.depth) + 4*len(v.size) + 4*len(v.ends) + 4*len(v.sorted)
}
