package grammar

import (
	"fmt"
	"strings"
)

// GBNF returns the constraint in llama.cpp's grammar format (root rule
// "root"), for llama-server's `grammar` field: the language is the same as
// the automaton's, written from the same node tree.
func (c *Constraint) GBNF() string { return writeGBNF(c.root) }

// GBNF returns the grammar of a spec without building its automaton.
func GBNF(spec Spec) (string, error) {
	root, err := buildRoot(spec)
	if err != nil {
		return "", err
	}
	return writeGBNF(root), nil
}

type gbnfWriter struct {
	rules []string
	named map[string]bool
	next  int
	// atoms names the bodies of repetitions (and their chunks) by their
	// text, so that every string of one kind shares one set of rules.
	atoms map[string]string
}

func writeGBNF(root node) string {
	w := &gbnfWriter{named: map[string]bool{}, atoms: map[string]string{}}
	body := w.expr(prune(root))
	var b strings.Builder
	b.WriteString("root ::= " + body + "\n")
	for _, r := range w.rules {
		b.WriteString(r + "\n")
	}
	return b.String()
}

func (w *gbnfWriter) define(name, body string) {
	w.rules = append(w.rules, name+" ::= "+body)
}

func (w *gbnfWriter) fresh(prefix string) string {
	w.next++
	return fmt.Sprintf("%s-%d", prefix, w.next)
}

// expr writes a pruned node as a GBNF expression.
func (w *gbnfWriter) expr(n node) string {
	switch n := n.(type) {
	case lit:
		return gbnfLiteral(string(n))
	case class:
		var b strings.Builder
		b.WriteByte('[')
		for _, r := range n {
			b.WriteString(gbnfClassChar(r.lo))
			if r.hi != r.lo {
				b.WriteByte('-')
				b.WriteString(gbnfClassChar(r.hi))
			}
		}
		b.WriteByte(']')
		return b.String()
	case utf8Char:
		return `[^\x00-\x7F]`
	case seq:
		parts := make([]string, len(n))
		for i, x := range n {
			parts[i] = w.group(x)
		}
		return strings.Join(parts, " ")
	case alt:
		parts := make([]string, len(n))
		for i, x := range n {
			parts[i] = w.expr(x)
		}
		return strings.Join(parts, " | ")
	case rep:
		return w.repeat(n)
	case object:
		// Rules per position and lane, as the automaton builds it.
		base := w.fresh("obj")
		k := len(n.fields)
		none := func(i int) string { return fmt.Sprintf("%s-n%d", base, i) }
		some := func(i int) string { return fmt.Sprintf("%s-s%d", base, i) }
		for i, f := range n.fields {
			v := fmt.Sprintf("%s-v%d", base, i)
			w.define(v, w.expr(f.value))
			n0 := gbnfLiteral(f.key) + " " + v + " " + some(i+1)
			s0 := gbnfLiteral(n.sep+f.key) + " " + v + " " + some(i+1)
			if !f.required {
				n0 += " | " + none(i+1)
				s0 += " | " + some(i+1)
			}
			w.define(none(i), n0)
			w.define(some(i), s0)
		}
		w.define(none(k), `""`)
		w.define(some(k), `""`)
		return none(0)
	case until:
		base := w.fresh("text")
		m := max(len(n.trigger), 1)
		name := func(j int) string { return fmt.Sprintf("%s-%d", base, j) }
		for j := 0; j < m; j++ {
			// Group the ASCII bytes by the state they lead to.
			var alts []string
			byTarget := map[int][]byteRange{}
			var order []int
			for c := 0; c < 0x80; c++ {
				next := kmpNext(n.trigger, j, byte(c))
				if next == len(n.trigger) && len(n.trigger) > 0 {
					continue
				}
				rs := byTarget[next]
				if len(rs) > 0 && int(rs[len(rs)-1].hi) == c-1 {
					rs[len(rs)-1].hi = byte(c)
				} else {
					if rs == nil {
						order = append(order, next)
					}
					rs = append(rs, byteRange{byte(c), byte(c)})
				}
				byTarget[next] = rs
			}
			for _, t := range order {
				alts = append(alts, w.expr(class(byTarget[t]))+" "+name(t))
			}
			alts = append(alts, `[^\x00-\x7F] `+name(0), `""`)
			w.define(name(j), strings.Join(alts, " | "))
		}
		return name(0)
	case rule:
		if !w.named[n.name] {
			w.named[n.name] = true
			w.define(n.name, w.expr(n.n))
		}
		return n.name
	}
	panic(fmt.Sprintf("grammar: unknown node %T", n))
}

// llama.cpp's GBNF parser (src/llama-grammar.cpp) expands X{m,n} into n
// rules and refuses the grammar ("number of rules ... exceeds sane
// defaults", HTTP 400 from llama-server) when the rules X itself stands for
// times n reach 2000: an inline group such as a JSON string character
// (several alternatives, a nested group) repeated 1024 times does. Older
// builds also refuse any count above 2000. So every repeated item is written
// as a rule reference (it counts as one rule), and a repetition longer than
// maxInlineRep is written as nested rules of chunks, which keeps the count
// of each at most maxInlineRep and the language exactly the same: no bound
// is shrunk, whatever its size.
const (
	maxInlineRep = 64
	repChunk     = 32
)

// repeat writes n.n repeated n.min to n.max times (n.max < 0: unbounded).
func (w *gbnfWriter) repeat(n rep) string {
	x := w.atom(n.n)
	switch {
	case n.min == 0 && n.max == 1:
		return x + "?"
	case n.max < 0:
		switch n.min {
		case 0:
			return x + "*"
		case 1:
			return x + "+"
		}
		return joinNonEmpty(w.exactly(x, n.min), x+"*")
	}
	return joinNonEmpty(w.exactly(x, n.min), w.upTo(x, n.max-n.min))
}

// exactly is the rule reference x written k times.
func (w *gbnfWriter) exactly(x string, k int) string {
	switch {
	case k == 0:
		return ""
	case k == 1:
		return x
	case k <= maxInlineRep:
		return fmt.Sprintf("%s{%d}", x, k)
	}
	chunk := w.name(fmt.Sprintf("%s{%d}", x, repChunk))
	return joinNonEmpty(w.exactly(chunk, k/repChunk), w.exactly(x, k%repChunk))
}

// upTo is the rule reference x written 0 to k times. Past maxInlineRep it is
// q = k/repChunk chunks of repChunk: either fewer than q chunks and fewer
// than repChunk more, or q chunks and at most k%repChunk more. The two differ
// by length, so a parser follows at most two short paths in each.
func (w *gbnfWriter) upTo(x string, k int) string {
	switch {
	case k == 0:
		return ""
	case k == 1:
		return x + "?"
	case k <= maxInlineRep:
		return fmt.Sprintf("%s{0,%d}", x, k)
	}
	q, r := k/repChunk, k%repChunk
	chunk := w.name(fmt.Sprintf("%s{%d}", x, repChunk))
	fewer := joinNonEmpty(w.upTo(chunk, q-1), fmt.Sprintf("%s{0,%d}", x, repChunk-1))
	full := joinNonEmpty(w.exactly(chunk, q), w.upTo(x, r))
	if full == "" {
		full = `""`
	}
	return w.name("(" + fewer + " | " + full + ")")
}

// atom writes n as one rule reference or one terminal, which llama.cpp
// counts as one rule when it is repeated.
func (w *gbnfWriter) atom(n node) string {
	switch n := n.(type) {
	case lit, class, utf8Char:
		return w.expr(n)
	case rule:
		return w.expr(n)
	}
	return w.name(w.expr(n))
}

// name defines a rule for an expression, once per distinct expression.
func (w *gbnfWriter) name(body string) string {
	if name, ok := w.atoms[body]; ok {
		return name
	}
	name := w.fresh("rep")
	w.atoms[body] = name
	w.define(name, body)
	return name
}

func joinNonEmpty(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + " " + b
}

// group writes an expression that binds tighter than a sequence.
func (w *gbnfWriter) group(n node) string {
	switch n := n.(type) {
	case alt:
		if len(n) > 1 {
			return "(" + w.expr(n) + ")"
		}
	case seq:
		if len(n) > 1 {
			return "(" + w.expr(n) + ")"
		}
	case rep:
		return "(" + w.expr(n) + ")"
	}
	return w.expr(n)
}

func gbnfLiteral(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\t':
			b.WriteString(`\t`)
		case c < 0x20 || c == 0x7F:
			fmt.Fprintf(&b, `\x%02X`, c)
		default:
			b.WriteByte(c) // UTF-8 text is written as is
		}
	}
	b.WriteByte('"')
	return b.String()
}

func gbnfClassChar(c byte) string {
	switch {
	case c == ']' || c == '[' || c == '\\' || c == '-':
		return `\` + string(c)
	case c == '^': // llama.cpp's parser takes no \^ escape
		return `\x5E`
	case c < 0x20 || c >= 0x7F:
		return fmt.Sprintf(`\x%02X`, c)
	}
	return string(c)
}

// prune removes the parts of a tree that match nothing (an empty alt, an
// empty class), since GBNF cannot write the empty language. It returns nil
// when the whole node matches nothing.
func prune(n node) node {
	switch x := n.(type) {
	case class:
		if len(x) == 0 {
			return nil
		}
	case seq:
		out := make(seq, 0, len(x))
		for _, c := range x {
			p := prune(c)
			if p == nil {
				return nil
			}
			out = append(out, p)
		}
		if len(out) == 1 {
			return out[0]
		}
		return out
	case alt:
		out := make(alt, 0, len(x))
		for _, c := range x {
			if p := prune(c); p != nil {
				out = append(out, p)
			}
		}
		switch len(out) {
		case 0:
			return nil
		case 1:
			return out[0]
		}
		return out
	case rep:
		p := prune(x.n)
		if p == nil {
			if x.min == 0 {
				return empty
			}
			return nil
		}
		return rep{p, x.min, x.max}
	case object:
		out := object{sep: x.sep}
		for _, f := range x.fields {
			p := prune(f.value)
			if p == nil {
				if f.required {
					return nil
				}
				continue
			}
			out.fields = append(out.fields, field{f.key, p, f.required})
		}
		return out
	case rule:
		p := prune(x.n)
		if p == nil {
			return nil
		}
		return rule{x.name, p}
	}
	return n
}
