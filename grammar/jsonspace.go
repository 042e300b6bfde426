package grammar

// ServerBlank is how many blank characters llama.cpp's grammar for a JSON
// Schema (json-schema-to-grammar, which llama-server applies to
// response_format) lets a model write after each JSON token:
// `space ::= | " " | "\n"{1,2} [ \t]{0,20}`. A weak model fills them, and a
// call padded so can run past a reply's token budget and be cut.
const ServerBlank = 22

// SchemaBlanks bounds the blank characters a server's grammar for
// JSONSchema(spec) admits in one reply: ServerBlank after each of the JSON
// tokens of its longest value. ok is false when that value is unbounded (an
// array without maxItems, or above ServerMaxRepeat, which the schema leaves
// out; a free-form object, which the schema leaves open), and for mode text,
// which has no schema. A reply budget that adds this much to what the call's
// text needs always lets the call close.
func SchemaBlanks(spec Spec) (chars int, ok bool) {
	if spec.Mode == ModeText || spec.Check() != nil {
		return 0, false
	}
	worst := 0
	if spec.Mode == ModeAny {
		worst = 2 + 3 + 1 // {"answer": "..."}
	}
	for _, t := range spec.Tools {
		args, ok := objectGaps(t.Shaped())
		if !ok {
			return 0, false
		}
		if !(spec.Form == FormJSON && len(spec.Tools) == 1) {
			args = 2 + (3 + 1) + (3 + args) // {"name": "...", "arguments": {...}}
		}
		worst = max(worst, args)
	}
	return ServerBlank * worst, true
}

// objectGaps counts the places blanks may follow in an object of props: after
// "{" and "}", and for each member after its key, its ":", its value's tokens
// and the "," before the next.
func objectGaps(props []ArgSpec) (int, bool) {
	n := 2
	for _, p := range props {
		g, ok := valueGaps(p)
		if !ok {
			return 0, false
		}
		n += 3 + g
	}
	return n, true
}

func valueGaps(p ArgSpec) (int, bool) {
	switch {
	case len(p.Values) > 0:
		return 1, true // a literal: a server's grammar writes it without blanks
	case p.Type == TypeAny:
		return 0, false
	case len(p.AnyOf) > 0:
		worst := 0
		for _, c := range p.AnyOf {
			g, ok := valueGaps(c)
			if !ok {
				return 0, false
			}
			worst = max(worst, g)
		}
		return worst, true
	case p.AnyProps:
		return 0, false
	case p.Type == TypeObject:
		return objectGaps(p.Props)
	case p.Type == TypeArray:
		if p.MaxItems <= 0 || p.MaxItems > ServerMaxRepeat || p.Items == nil {
			return 0, false
		}
		g, ok := valueGaps(*p.Items)
		if !ok {
			return 0, false
		}
		return 2 + p.MaxItems*(1+g), true // "[", "]", each item and its ","
	}
	return 1, true // a scalar, then blanks
}
