package grammar

import (
	"fmt"
	"slices"
	"unsafe"
)

// MaxStates bounds a compiled automaton. A tool set that needs more (many
// long max_len strings, say) is refused at compile time with a clear error
// rather than taking the runner's memory.
const MaxStates = 1 << 18

// nfa is a Thompson automaton over bytes, built from a node tree. Every build
// step returns a fresh end state with no edges out, and loops go through fresh
// states, so sequencing never lets one part leak into another.
type nfa struct {
	eps   [][]int32
	edges [][]nfaEdge
}

type nfaEdge struct {
	lo, hi byte
	to     int32
}

// maxNFAStates bounds the intermediate automaton; determinizing more than
// this would take seconds and hundreds of megabytes.
const maxNFAStates = 4 * MaxStates

// errTooLarge is raised (as a panic, caught by Compile) when a spec's
// automaton would pass maxNFAStates.
var errTooLarge = fmt.Errorf("grammar: the constraint needs more than %d automaton states; allow fewer tools or set smaller max_len", MaxStates)

type tooLarge struct{}

func (a *nfa) state() int32 {
	if len(a.eps) >= maxNFAStates {
		panic(tooLarge{})
	}
	a.eps = append(a.eps, nil)
	a.edges = append(a.edges, nil)
	return int32(len(a.eps) - 1)
}

func (a *nfa) epsilon(from, to int32) { a.eps[from] = append(a.eps[from], to) }

func (a *nfa) edge(from int32, lo, hi byte, to int32) {
	a.edges[from] = append(a.edges[from], nfaEdge{lo, hi, to})
}

func (a *nfa) build(n node, from int32) int32 {
	switch n := n.(type) {
	case lit:
		cur := from
		for i := 0; i < len(n); i++ {
			next := a.state()
			a.edge(cur, n[i], n[i], next)
			cur = next
		}
		if len(n) == 0 {
			end := a.state()
			a.epsilon(from, end)
			return end
		}
		return cur
	case class:
		to := a.state()
		for _, r := range n {
			a.edge(from, r.lo, r.hi, to)
		}
		return to
	case utf8Char:
		to := a.state()
		a.utf8(from, to)
		return to
	case seq:
		cur := from
		for _, x := range n {
			cur = a.build(x, cur)
		}
		if len(n) == 0 {
			return a.build(empty, from)
		}
		return cur
	case alt:
		to := a.state()
		for _, x := range n {
			s := a.state()
			a.epsilon(from, s)
			a.epsilon(a.build(x, s), to)
		}
		return to
	case rep:
		cur := from
		for i := 0; i < n.min; i++ {
			cur = a.build(n.n, cur)
		}
		end := a.state()
		if n.max < 0 {
			loop := a.state()
			a.epsilon(cur, loop)
			a.epsilon(a.build(n.n, loop), loop)
			a.epsilon(loop, end)
			return end
		}
		for i := n.min; i < n.max; i++ {
			a.epsilon(cur, end)
			cur = a.build(n.n, cur)
		}
		a.epsilon(cur, end)
		return end
	case object:
		// Two lanes per position: nothing written yet (no separator before the
		// next key), or something written. A value is shared by both lanes.
		k := len(n.fields)
		none := make([]int32, k+1)
		some := make([]int32, k+1)
		for i := range none {
			none[i], some[i] = a.state(), a.state()
		}
		a.epsilon(from, none[0])
		for i, f := range n.fields {
			if !f.required {
				a.epsilon(none[i], none[i+1])
				a.epsilon(some[i], some[i+1])
			}
			v := a.state()
			a.epsilon(a.build(lit(f.key), none[i]), v)
			a.epsilon(a.build(lit(n.sep+f.key), some[i]), v)
			a.epsilon(a.build(f.value, v), some[i+1])
		}
		end := a.state()
		a.epsilon(none[k], end)
		a.epsilon(some[k], end)
		return end
	case until:
		// A KMP matcher of the trigger: state j means the text ends with the
		// trigger's first j bytes. Completing the trigger has no edge.
		m := len(n.trigger)
		states := make([]int32, max(m, 1))
		for j := range states {
			states[j] = a.state()
		}
		end := a.state()
		a.epsilon(from, states[0])
		for j, s := range states {
			a.epsilon(s, end)
			var run *nfaEdge
			for c := 0; c < 0x80; c++ {
				next := kmpNext(n.trigger, j, byte(c))
				if next == m && m > 0 {
					run = nil
					continue
				}
				if run != nil && run.to == states[next] && int(run.hi) == c-1 {
					run.hi = byte(c)
					continue
				}
				a.edge(s, byte(c), byte(c), states[next])
				run = &a.edges[s][len(a.edges[s])-1]
			}
			a.utf8(s, states[0])
		}
		return end
	case rule:
		return a.build(n.n, from)
	}
	panic(fmt.Sprintf("grammar: unknown node %T", n))
}

// utf8 adds the byte paths of one well-formed non-ASCII character.
func (a *nfa) utf8(from, to int32) {
	t1 := a.state() // one continuation byte left
	a.edge(t1, 0x80, 0xBF, to)
	t2 := a.state()
	a.edge(t2, 0x80, 0xBF, t1)
	t3 := a.state()
	a.edge(t3, 0x80, 0xBF, t2)
	a.edge(from, 0xC2, 0xDF, t1)
	e0 := a.state()
	a.edge(from, 0xE0, 0xE0, e0)
	a.edge(e0, 0xA0, 0xBF, t1)
	a.edge(from, 0xE1, 0xEC, t2)
	ed := a.state() // no surrogates
	a.edge(from, 0xED, 0xED, ed)
	a.edge(ed, 0x80, 0x9F, t1)
	a.edge(from, 0xEE, 0xEF, t2)
	f0 := a.state()
	a.edge(from, 0xF0, 0xF0, f0)
	a.edge(f0, 0x90, 0xBF, t2)
	a.edge(from, 0xF1, 0xF3, t3)
	f4 := a.state() // nothing above U+10FFFF
	a.edge(from, 0xF4, 0xF4, f4)
	a.edge(f4, 0x80, 0x8F, t2)
}

// kmpNext is the matched length after byte c when the text ends with the
// trigger's first j bytes.
func kmpNext(trigger string, j int, c byte) int {
	if len(trigger) == 0 {
		return 0
	}
	for {
		if j < len(trigger) && trigger[j] == c {
			return j + 1
		}
		if j == 0 {
			return 0
		}
		// longest proper border of trigger[:j]
		j = border(trigger[:j])
	}
}

func border(s string) int {
	for k := len(s) - 1; k > 0; k-- {
		if s[:k] == s[len(s)-k:] {
			return k
		}
	}
	return 0
}

// dfa is the determinised automaton: a transition table over byte classes
// (bytes that no state tells apart share a column).
type dfa struct {
	start   int32
	accept  []bool
	classes [256]uint8
	nclass  int
	table   []int32 // state*nclass + class → next state or Dead
}

func (d *dfa) Start() int32 { return d.start }

func (d *dfa) Next(s int32, b byte) int32 {
	if s < 0 {
		return Dead
	}
	return d.table[int(s)*d.nclass+int(d.classes[b])]
}

func (d *dfa) Accepting(s int32) bool { return s >= 0 && d.accept[s] }

func (d *dfa) NumStates() int { return len(d.accept) }

// determinize runs the subset construction from the NFA's start to its final
// state, then turns every state from which no accepting state can be reached
// into Dead, so that a generation never walks into a dead end.
func determinize(a *nfa, start, final int32) (*dfa, error) {
	type dstate struct {
		set   []int32
		spans []span
	}
	var (
		states []dstate
		index  = map[string]int32{}
		stack  []int32
		seen   = make([]uint32, len(a.eps))
		mark   uint32
	)
	closure := func(seeds []int32) []int32 {
		mark++
		var out []int32
		stack = append(stack[:0], seeds...)
		for len(stack) > 0 {
			s := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if seen[s] == mark {
				continue
			}
			seen[s] = mark
			out = append(out, s)
			stack = append(stack, a.eps[s]...)
		}
		slices.Sort(out)
		return out
	}
	intern := func(set []int32) (int32, error) {
		key := unsafe.String((*byte)(unsafe.Pointer(unsafe.SliceData(set))), len(set)*4)
		if id, ok := index[key]; ok {
			return id, nil
		}
		if len(states) >= MaxStates {
			return 0, errTooLarge
		}
		id := int32(len(states))
		index[key] = id
		states = append(states, dstate{set: set})
		return id, nil
	}
	if _, err := intern(closure([]int32{start})); err != nil {
		return nil, err
	}
	var bounds []int
	var targets []int32
	for i := 0; i < len(states); i++ {
		bounds = bounds[:0]
		for _, s := range states[i].set {
			for _, e := range a.edges[s] {
				bounds = append(bounds, int(e.lo), int(e.hi)+1)
			}
		}
		slices.Sort(bounds)
		bounds = slices.Compact(bounds)
		var spans []span
		for k := 0; k+1 < len(bounds); k++ {
			lo, hi := bounds[k], bounds[k+1]-1
			targets = targets[:0]
			for _, s := range states[i].set {
				for _, e := range a.edges[s] {
					if int(e.lo) <= lo && hi <= int(e.hi) {
						targets = append(targets, e.to)
					}
				}
			}
			if len(targets) == 0 {
				continue
			}
			id, err := intern(closure(targets))
			if err != nil {
				return nil, err
			}
			if n := len(spans); n > 0 && spans[n-1].to == id && int(spans[n-1].hi)+1 == lo {
				spans[n-1].hi = byte(hi)
				continue
			}
			spans = append(spans, span{byte(lo), byte(hi), id})
		}
		states[i].spans = spans
	}

	d := &dfa{accept: make([]bool, len(states))}
	for i, st := range states {
		_, d.accept[i] = slices.BinarySearch(st.set, final)
	}
	// Co-reachability: states that can reach an accepting state.
	live := slices.Clone(d.accept)
	for changed := true; changed; {
		changed = false
		for i := range states {
			if live[i] {
				continue
			}
			for _, sp := range states[i].spans {
				if live[sp.to] {
					live[i], changed = true, true
					break
				}
			}
		}
	}
	if !live[0] {
		return nil, fmt.Errorf("grammar: no output satisfies the spec")
	}
	// Byte classes: the coarsest partition that every state's spans respect.
	var cut [257]bool
	cut[0], cut[256] = true, true
	for _, st := range states {
		for _, sp := range st.spans {
			cut[sp.lo], cut[int(sp.hi)+1] = true, true
		}
	}
	class := -1
	for b := 0; b < 256; b++ {
		if cut[b] {
			class++
		}
		d.classes[b] = uint8(class)
	}
	d.nclass = class + 1
	d.table = make([]int32, len(states)*d.nclass)
	for i := range d.table {
		d.table[i] = Dead
	}
	for i, st := range states {
		if !live[i] {
			continue
		}
		for _, sp := range st.spans {
			if !live[sp.to] {
				continue
			}
			for b := int(sp.lo); b <= int(sp.hi); b++ {
				d.table[i*d.nclass+int(d.classes[b])] = sp.to
			}
		}
	}
	return d, nil
}

type span struct {
	lo, hi byte
	to     int32
}
