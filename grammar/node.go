package grammar

// The constraint is first built as a small tree of regular-language nodes; the
// same tree becomes the byte-level automaton (automaton.go) and the GBNF text
// (gbnf.go), so the runner and a remote llama-server enforce one language.

type node interface{ isNode() }

// lit is an exact byte string.
type lit string

// class is a set of ASCII bytes, as inclusive ranges.
type class []byteRange

type byteRange struct{ lo, hi byte }

// utf8Char is any one non-ASCII character, well-formed UTF-8 (no surrogates,
// nothing above U+10FFFF). ASCII is left to classes, so that each form says
// which ASCII bytes it allows.
type utf8Char struct{}

type seq []node

// alt is a choice; an empty alt is the empty language.
type alt []node

// rep repeats n between min and max times; max < 0 is unbounded.
type rep struct {
	n        node
	min, max int
}

// object is a sequence of fields in a fixed order, where optional fields may be
// left out: "k1 v1 SEP k3 v3". Braces are outside it. Building it directly
// (instead of as alternatives of every subset) keeps it linear in the fields.
type object struct {
	sep    string
	fields []field
}

type field struct {
	key      string // everything before the value: `"pin": ` or `pin=`
	value    node
	required bool
}

// until is text that never contains trigger (valid UTF-8, any ASCII). With an
// empty trigger it is any text.
type until struct{ trigger string }

// rule names a node for GBNF; the automaton ignores it.
type rule struct {
	name string
	n    node
}

func (lit) isNode()      {}
func (class) isNode()    {}
func (utf8Char) isNode() {}
func (seq) isNode()      {}
func (alt) isNode()      {}
func (rep) isNode()      {}
func (object) isNode()   {}
func (until) isNode()    {}
func (rule) isNode()     {}

var (
	empty   node = lit("")
	nothing node = alt{}
	digit        = class{{'0', '9'}}
)

func opt(n node) node { return rep{n, 0, 1} }

// rangeOf is the class lo..hi; empty (no output) when lo > hi.
func rangeOf(lo, hi byte) class {
	if lo > hi {
		return class{}
	}
	return class{{lo, hi}}
}
