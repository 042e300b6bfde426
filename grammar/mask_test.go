package grammar

import (
	"bytes"
	"fmt"
	"slices"
	"sync"
	"testing"
)

// mtTable is a hand-made automaton for the tests: a full transition table.
type mtTable struct {
	next [][256]int32
	acc  []bool
}

func (d *mtTable) Start() int32               { return 0 }
func (d *mtTable) Next(s int32, b byte) int32 { return d.next[s][b] }
func (d *mtTable) Accepting(s int32) bool     { return d.acc[s] }
func (d *mtTable) NumStates() int             { return len(d.next) }

// mtPart is one element of a pattern: a byte class, repeated once or more if plus.
type mtPart struct {
	class func(byte) bool
	plus  bool
}

func mtLit(s string) []mtPart {
	var ps []mtPart
	for i := range len(s) {
		c := s[i]
		ps = append(ps, mtPart{class: func(b byte) bool { return b == c }})
	}
	return ps
}

func mtDigits() mtPart {
	return mtPart{class: func(b byte) bool { return b >= '0' && b <= '9' }, plus: true}
}

// mtSeq accepts the concatenation of parts. State i has read parts[:i]; the
// patterns of the tests never make a byte both repeat a part and start the
// next, so the table is deterministic.
func mtSeq(parts ...mtPart) *mtTable {
	d := &mtTable{next: make([][256]int32, len(parts)+1), acc: make([]bool, len(parts)+1)}
	for i := range d.next {
		for b := range 256 {
			d.next[i][b] = Dead
			switch {
			case i < len(parts) && parts[i].class(byte(b)):
				d.next[i][b] = int32(i + 1)
			case i > 0 && parts[i-1].plus && parts[i-1].class(byte(b)):
				d.next[i][b] = int32(i)
			}
		}
	}
	d.acc[len(parts)] = true
	return d
}

func mtCat(ps ...[]mtPart) []mtPart { return slices.Concat(ps...) }

func mtVocab(t testing.TB, toks []Token) *Vocab {
	t.Helper()
	v, err := NewVocab(toks)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func mtNormal(s string) Token { return Token{Bytes: []byte(s), Kind: TokenNormal} }

// mtSmallVocab: ids are the indexes.
var mtSmallVocab = []Token{
	mtNormal("a"), mtNormal("b"), mtNormal("ab"), mtNormal("abc"), // 0-3
	mtNormal("1"), mtNormal("12"), mtNormal("123"), mtNormal("x1"), // 4-7
	mtNormal("<tool_call>"),                             // 8: a user-defined added token is text
	{Bytes: []byte("<|im_start|>"), Kind: TokenControl}, // 9
	{Bytes: []byte("<|im_end|>"), Kind: TokenEOG},       // 10
	mtNormal(""),   // 11: no bytes: never allowed
	mtNormal("a1"), // 12
	mtNormal("ab"), // 13: same bytes as 2
	mtNormal("1a"), // 14
}

func TestMaskHandComputed(t *testing.T) {
	v := mtVocab(t, mtSmallVocab)
	a := mtSeq(mtCat(mtLit("ab"), []mtPart{mtDigits()})...) // "ab" [0-9]+
	c := NewMaskCache(a, v)
	for _, tc := range []struct {
		state int32
		want  []int32
	}{
		{0, []int32{0, 2, 13}},      // "a", "ab" twice; not "abc", "a1"
		{1, []int32{1}},             // after "a": "b"
		{2, []int32{4, 5, 6}},       // after "ab": digits only, not "1a"; not accepting
		{3, []int32{4, 5, 6, 10}},   // after a digit: more digits or the end
		{Dead, nil},                 // nothing follows death
		{int32(a.NumStates()), nil}, // out of range
	} {
		got := c.Allowed(tc.state).AppendTokens(nil)
		if !slices.Equal(got, tc.want) {
			t.Errorf("state %d: allowed %v, want %v", tc.state, got, tc.want)
		}
		if n := c.Allowed(tc.state).Len(); n != len(tc.want) {
			t.Errorf("state %d: Len %d, want %d", tc.state, n, len(tc.want))
		}
		for tok := range int32(len(mtSmallVocab)) {
			if got, want := c.Allowed(tc.state).Allowed(tok), slices.Contains(tc.want, tok); got != want {
				t.Errorf("state %d: Allowed(%d) = %v, want %v", tc.state, tok, got, want)
			}
		}
	}
	for _, tc := range []struct {
		state, tok, want int32
	}{
		{0, 2, 2}, {0, 13, 2}, {0, 0, 1}, {1, 1, 2}, {2, 6, 3}, {3, 5, 3},
		{3, 10, 3},    // EOG in an accepting state stays
		{2, 10, Dead}, // EOG where the output may not end
		{0, 9, Dead},  // control
		{0, 11, Dead}, // no bytes
		{0, 3, Dead},  // "abc": dies on c
		{Dead, 0, Dead}, {0, 99, Dead}, {0, -1, Dead},
	} {
		if got := c.Advance(tc.state, tc.tok); got != tc.want {
			t.Errorf("Advance(%d, %d) = %d, want %d", tc.state, tc.tok, got, tc.want)
		}
	}
	if sets, mem := c.Stats(); sets != 4 || mem <= 0 {
		t.Errorf("Stats = %d sets, %d bytes; want the 4 live states", sets, mem)
	}
}

func TestMaskUserDefinedToken(t *testing.T) {
	v := mtVocab(t, mtSmallVocab)
	a := mtSeq(mtCat(mtLit("<tool_call>"), []mtPart{mtDigits()})...)
	c := NewMaskCache(a, v)
	if got := c.Allowed(0).AppendTokens(nil); !slices.Equal(got, []int32{8}) {
		t.Errorf("start: allowed %v, want [8] (<tool_call> as text)", got)
	}
	if s := c.Advance(0, 8); s != int32(len("<tool_call>")) {
		t.Errorf("Advance over <tool_call> = %d", s)
	}
}

// mtBrute is the definition: each token checked on its own.
func mtBrute(a Automaton, v *Vocab, s int32) []int32 {
	var out []int32
	for t := range int32(v.Len()) {
		switch v.Kind(t) {
		case TokenEOG:
			if a.Accepting(s) {
				out = append(out, t)
			}
		case TokenNormal:
			st := s
			for _, b := range v.Bytes(t) {
				if st = a.Next(st, b); st == Dead {
					break
				}
			}
			if st != Dead {
				out = append(out, t)
			}
		}
	}
	return out
}

// mtCheck compares every state's set with the definition, and Advance with
// stepping the bytes.
func mtCheck(t testing.TB, a Automaton, v *Vocab) {
	t.Helper()
	// The trie is minimal: one node per distinct prefix of a normal token
	// (a mis-sorted vocabulary would duplicate paths), plus the root.
	prefixes := map[string]bool{}
	for tok := range int32(v.Len()) {
		if v.Kind(tok) == TokenNormal {
			for n := 1; n <= len(v.Bytes(tok)); n++ {
				prefixes[string(v.Bytes(tok)[:n])] = true
			}
		}
	}
	if v.Nodes() != len(prefixes)+1 {
		t.Fatalf("%d trie nodes for %d distinct prefixes", v.Nodes(), len(prefixes))
	}
	c := NewMaskCache(a, v)
	for s := range int32(a.NumStates()) {
		set := c.Allowed(s)
		got := set.AppendTokens(nil)
		want := mtBrute(a, v, s)
		if !slices.Equal(got, want) {
			t.Fatalf("state %d: allowed %v, want %v", s, got, want)
		}
		if set.Len() != len(want) {
			t.Fatalf("state %d: Len %d, want %d", s, set.Len(), len(want))
		}
		if (set.AllowedTokens() == nil) == (set.AllowedBits() == nil) {
			t.Fatalf("state %d: want exactly one of list and bits", s)
		}
		for tok := range int32(v.Len()) {
			in := set.Allowed(tok)
			next := c.Advance(s, tok)
			if in != (next != Dead) {
				t.Fatalf("state %d token %d (%s %q): allowed %v but Advance gives %d", s, tok, v.Kind(tok), v.Bytes(tok), in, next)
			}
			if !in && v.Kind(tok) == TokenNormal {
				// outside the set: stepping its bytes dies
				st := s
				for _, b := range v.Bytes(tok) {
					if st = a.Next(st, b); st == Dead {
						break
					}
				}
				if st != Dead {
					t.Fatalf("state %d token %d %q: excluded but its bytes lead to %d", s, tok, v.Bytes(tok), st)
				}
			}
		}
	}
}

func TestMaskDenseAndSparse(t *testing.T) {
	// Every byte, and every two-digit string: a state allowing all bytes has
	// a large set (a bitset), the digit states small ones (lists).
	var toks []Token
	for b := range 256 {
		toks = append(toks, Token{Bytes: []byte{byte(b)}})
	}
	for i := range 100 {
		toks = append(toks, mtNormal(fmt.Sprintf("%02d", i)))
	}
	for i := range 4000 { // filler, so that 110 tokens are fewer bytes as a list
		toks = append(toks, mtNormal(fmt.Sprintf("w%04d", i)))
	}
	toks = append(toks, Token{Bytes: []byte("</s>"), Kind: TokenEOG})
	v := mtVocab(t, toks)
	anyByte := mtPart{class: func(byte) bool { return true }, plus: true}
	a := mtSeq(anyByte)
	c := NewMaskCache(a, v)
	if c.Allowed(0).AllowedBits() == nil {
		t.Errorf("a state allowing %d of %d tokens is not a bitset", c.Allowed(0).Len(), v.Len())
	}
	mtCheck(t, a, v)
	d := mtSeq(mtCat(mtLit("x"), []mtPart{mtDigits()}, mtLit("y"))...)
	if NewMaskCache(d, v).Allowed(1).AllowedTokens() == nil {
		t.Errorf("a state allowing 110 tokens is not a list")
	}
	mtCheck(t, d, v)
}

func TestMaskConcurrent(t *testing.T) {
	v := mtVocab(t, mtSmallVocab)
	a := mtSeq(mtCat(mtLit("ab"), []mtPart{mtDigits()})...)
	c := NewMaskCache(a, v)
	var wg sync.WaitGroup
	results := make([][]int32, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for s := range int32(a.NumStates()) {
				results[g] = append(results[g], c.Allowed(s).AppendTokens(nil)...)
				results[g] = append(results[g], -1)
			}
		}()
	}
	wg.Wait()
	for g := range results {
		if !slices.Equal(results[g], results[0]) {
			t.Fatalf("goroutine %d saw %v, goroutine 0 %v", g, results[g], results[0])
		}
	}
	if sets, _ := c.Stats(); sets != a.NumStates() {
		t.Errorf("%d sets kept for %d states", sets, a.NumStates())
	}
}

func TestVocabTrie(t *testing.T) {
	v := mtVocab(t, mtSmallVocab)
	// Nodes: root, a, ab, abc, a1, b, 1, 12, 123, 1a, x, x1, and <tool_call>'s 11.
	if got, want := v.Nodes(), 1+4+1+4+2+11; got != want {
		t.Errorf("%d trie nodes, want %d", got, want)
	}
	if v.Kind(11) != TokenControl {
		t.Errorf("a normal token with no bytes is %s, want control", v.Kind(11))
	}
	if !slices.Equal(v.EOG(), []int32{10}) {
		t.Errorf("EOG %v", v.EOG())
	}
	if !bytes.Equal(v.Bytes(8), []byte("<tool_call>")) {
		t.Errorf("bytes of 8: %q", v.Bytes(8))
	}
	// Every node's subtree holds exactly the tokens that have its path as a prefix.
	for _, tc := range []struct {
		prefix string
		want   int
	}{{"a", 5}, {"1", 4}, {"x", 1}, {"<", 1}} {
		if got := mtCountPrefix(v, tc.prefix); got != tc.want {
			t.Errorf("prefix %q: %d tokens in the subtree, want %d", tc.prefix, got, tc.want)
		}
	}
}

// mtCountPrefix finds the node of prefix by walking the trie and counts the
// tokens of its subtree.
func mtCountPrefix(v *Vocab, prefix string) int {
	i, end := uint32(1), uint32(len(v.label))
	for d := 0; d < len(prefix); d++ {
		for i < end && v.label[i] != prefix[d] {
			i += v.size[i]
		}
		if i >= end {
			return 0
		}
		if d == len(prefix)-1 {
			return int(v.ends[i+v.size[i]] - v.ends[i])
		}
		end = i + v.size[i]
		i++
	}
	return 0
}

func TestVocabErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		toks []Token
	}{
		{"empty", nil},
		{"bad kind", []Token{{Bytes: []byte("a"), Kind: 7}}},
		{"huge token", []Token{{Bytes: make([]byte, maxTokenBytes+1)}}},
	} {
		if _, err := NewVocab(tc.toks); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

// mtFuzzDFA decodes an automaton from fuzz input: up to 8 states over the
// alphabet a-d (every other byte is dead), each transition a byte.
func mtFuzzDFA(data []byte) (*mtTable, []byte) {
	if len(data) == 0 {
		return mtSeq(mtLit("a")...), data
	}
	n := int(data[0]%8) + 1
	data = data[1:]
	d := &mtTable{next: make([][256]int32, n), acc: make([]bool, n)}
	take := func() byte {
		if len(data) == 0 {
			return 0
		}
		b := data[0]
		data = data[1:]
		return b
	}
	for s := range n {
		for b := range 256 {
			d.next[s][b] = Dead
		}
		for c := byte('a'); c <= 'd'; c++ {
			d.next[s][c] = int32(int(take())%(n+1)) - 1
		}
		d.acc[s] = take()&1 == 1
	}
	return d, data
}

// mtFuzzVocab splits the rest of the input into tokens at '|'; a token starting
// with '!' is control, with '$' end of generation.
func mtFuzzVocab(data []byte) []Token {
	var toks []Token
	for _, p := range bytes.Split(data, []byte("|")) {
		k := TokenNormal
		switch {
		case bytes.HasPrefix(p, []byte("!")):
			k = TokenControl
		case bytes.HasPrefix(p, []byte("$")):
			k = TokenEOG
		}
		toks = append(toks, Token{Bytes: p, Kind: k})
	}
	return toks
}

func FuzzMask(f *testing.F) {
	f.Add([]byte("\x03\x01\x02\x00\x01\x01\x02\x03\x00\x01\x02\x01\x01\x00\x00\x01a|ab|abc|b|ba|$e|!c|dd|"))
	f.Add([]byte("\x00\x01\x01\x01\x01\x01a|aa|aaa|b|$x"))
	f.Add([]byte("\x07abcdabcdabcdabcdabcdabcdabcdabcdabcdabcd|a|b|c|d|ab|cd|abcd|dcba|aaaa|$|!!|||"))
	f.Add([]byte("\x02abcdabcd\x01\x00|abcdabcdab|abcdabcd|abcdabcda|abcdabcd\x00|abcdabcdac|abcdabc|$"))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, rest := mtFuzzDFA(data)
		v, err := NewVocab(mtFuzzVocab(rest))
		if err != nil {
			return
		}
		mtCheck(t, a, v)
	})
}

func TestMaskSharesEqualSets(t *testing.T) {
	v := mtVocab(t, []Token{mtNormal("a"), mtNormal("b"), {Bytes: []byte("</s>"), Kind: TokenEOG}})
	a := mtSeq(mtLit("aaa")...)
	c := NewMaskCache(a, v)
	s0, s1, s2 := c.Allowed(0), c.Allowed(1), c.Allowed(2)
	if s0 != s1 || s1 != s2 {
		t.Errorf("states 0-2 all allow {a} but hold different sets")
	}
	if got := c.Allowed(3).AppendTokens(nil); !slices.Equal(got, []int32{2}) {
		t.Errorf("accepting state allows %v", got)
	}
	if sets, mem := c.Stats(); sets != 4 || mem != int64(s0.MemoryBytes()+c.Allowed(3).MemoryBytes()) {
		t.Errorf("stats %d sets, %d bytes: want 4 states, two distinct sets' bytes", sets, mem)
	}
}

// TestMaskCompiledConstraint: a compiled constraint is walked through its
// table, not the interface; its sets agree with stepping every token.
func TestMaskCompiledConstraint(t *testing.T) {
	spec := Spec{Form: FormJSON, Mode: ModeCalls, Tools: []ToolSpec{{Name: "gpio.write", Params: []ArgSpec{
		{Name: "pin", Type: "string", Required: true, Enum: []string{"led", "relay"}},
		{Name: "ms", Type: "integer", Min: new(0.0), Max: new(1500.0)},
		{Name: "note", Type: "string", MaxLen: 3},
	}}}}
	c, err := Compile(spec)
	if err != nil {
		t.Fatal(err)
	}
	var toks []Token
	for b := range 256 {
		toks = append(toks, Token{Bytes: []byte{byte(b)}})
	}
	for _, p := range []string{`{"`, `pin`, `": "`, `led`, `relay"`, `", "`, `ms`, `": `, `15`, `150`, `1500`, `00`, `}`, `, "`, `note`, `é`, `ab"`, `"}`, "\xe2\x82", "\xac"} {
		toks = append(toks, mtNormal(p))
	}
	toks = append(toks, Token{Bytes: []byte("<|im_end|>"), Kind: TokenEOG}, Token{Bytes: []byte("<|im_start|>"), Kind: TokenControl})
	v := mtVocab(t, toks)
	mtCheck(t, c, v)
	// And a walk through one output lands in an accepting state.
	mc := NewMaskCache(c, v)
	s := c.Start()
	for _, p := range []string{`{"`, `pin`, `": "`, `relay"`, `, "`, `ms`, `": `, `1500`, `}`} {
		i := slices.IndexFunc(toks, func(t Token) bool {
			return string(t.Bytes) == p && len(t.Bytes) > 1 || len(p) == 1 && string(t.Bytes) == p
		})
		if !mc.Allowed(s).Allowed(int32(i)) {
			t.Fatalf("%q not allowed in state %d", p, s)
		}
		s = mc.Advance(s, int32(i))
	}
	if !c.Accepting(s) || !mc.Allowed(s).Allowed(int32(len(toks)-2)) {
		t.Errorf("the output does not end in an accepting state allowing EOG")
	}
}

func TestMaskMemoryLimit(t *testing.T) {
	v := mtVocab(t, mtSmallVocab)
	a := mtSeq(mtCat(mtLit("ab"), []mtPart{mtDigits()})...)
	c := NewMaskCache(a, v)
	c.SetMemoryLimit(int64(c.Allowed(0).MemoryBytes())) // room for state 0's set only
	for range 2 {
		for s := range int32(a.NumStates()) {
			if got, want := c.Allowed(s).AppendTokens(nil), mtBrute(a, v, s); !slices.Equal(got, want) {
				t.Fatalf("state %d over the limit: %v, want %v", s, got, want)
			}
		}
	}
	if sets, mem := c.Stats(); sets != 1 || mem != int64(c.Allowed(0).MemoryBytes()) || !c.Cached(0) || c.Cached(2) {
		t.Errorf("over the limit: %d sets kept, %d bytes; want only state 0's", sets, mem)
	}
}

// TestVocabLongTokens: tokens that share their first 8 bytes (the sort key)
// are ordered by the rest; zero bytes sort before everything.
func TestVocabLongTokens(t *testing.T) {
	var toks []Token
	for _, s := range []string{"abcdefghij", "abcdefgh", "abcdefghi", "abcdefgh\x00", "abcdefghik", "abcdefg", "abcdefgh\x00\x00z", "abcdefgha", "b"} {
		toks = append(toks, mtNormal(s))
	}
	v := mtVocab(t, toks)
	mtCheck(t, mtSeq(mtLit("abcdefghik")...), v)
	mtCheck(t, mtSeq(mtLit("abcdefgh\x00\x00z")...), v)
	for i := 1; i < len(v.sorted); i++ {
		if bytes.Compare(v.Bytes(v.sorted[i-1]), v.Bytes(v.sorted[i])) > 0 {
			t.Errorf("sorted: %q before %q", v.Bytes(v.sorted[i-1]), v.Bytes(v.sorted[i]))
		}
	}
}
