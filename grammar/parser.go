package grammar

import (
	"slices"
	"strings"
)

// Limits against hostile input (a command can come from anyone who can reach the
// console or the bot). They keep parsing bounded in time, memory and stack.
const (
	MaxInputBytes = 64 << 10 // whole command text
	MaxArrayDepth = 16       // arrays inside arrays
	MaxCalls      = 64       // invocations in one command, over all stages
)

// ParseOptions are plain settings; the zero value accepts any namespace.
type ParseOptions struct {
	// Namespaces, when non-nil, is the set of registered tool namespaces; an
	// invocation with another namespace is an error at the namespace's position.
	// Bare names ("@ping{}") are not checked.
	Namespaces []string
}

// Parse parses one command. Errors are always *SyntaxError.
//
// Beyond the seed's BNF: a parallel block may be a stage of a chain; a ";" may end
// a param list; floats may have an exponent (1.5e-3, never on integers); "@ns/name"
// and "$scope.name" are single tokens, so no whitespace inside them; \x escapes are
// ASCII only, which keeps every string valid UTF-8 (\u{...} covers the rest).
// There are no comments.
func Parse(src string, opts ParseOptions) (*Command, error) {
	if len(src) > MaxInputBytes {
		return nil, errorAtOffset(src, MaxInputBytes, "expected at most %d bytes of input (64 KiB), found %d bytes", MaxInputBytes, len(src))
	}
	p := &parser{lx: lexer{src: src, line: 1}, opts: opts}
	if err := p.advance(); err != nil {
		return nil, err
	}
	cmd, err := p.command()
	if err != nil {
		return nil, err
	}
	return cmd, nil
}

type parser struct {
	lx    lexer
	tok   token
	opts  ParseOptions
	calls int
	keys  map[string]bool // for calls with many params; see seen
}

func (p *parser) advance() *SyntaxError { return p.lx.next(&p.tok) }

// errHere reports at the current token.
func (p *parser) errHere(format string, args ...any) *SyntaxError {
	return newError(p.lx.src, p.tok.off, p.tok.pos, format, args...)
}

// found describes the current token for "found ..." in messages.
func (p *parser) found() string {
	t := &p.tok
	text := p.lx.src[t.off:t.end]
	switch t.kind {
	case tEOF:
		return "end of input"
	case tString:
		return "string " + QuoteShort(t.text)
	case tIllegal:
		if len(text) == 1 || t.note == "" {
			return describeAt(p.lx.src, t.off)
		}
		return QuoteShort(text) + " (" + t.note + ")"
	}
	return QuoteShort(text)
}

func (p *parser) startsStage() bool { return p.tok.kind == tTool || p.tok.kind == tLBrack }

func (p *parser) command() (*Command, *SyntaxError) {
	if !p.startsStage() {
		return nil, p.errHere("expected a command (\"@tool{...}\" or \"[...]\"), found %s", p.found())
	}
	cmd := &Command{}
	for {
		st, err := p.stage()
		if err != nil {
			return nil, err
		}
		cmd.Stages = append(cmd.Stages, st)
		switch p.tok.kind {
		case tEOF:
			return cmd, nil
		case tArrow:
			if err := p.advance(); err != nil {
				return nil, err
			}
			if !p.startsStage() {
				return nil, p.errHere("expected \"@tool{...}\" or \"[\" after \"->\", found %s", p.found())
			}
		default:
			return nil, p.errHere("unexpected %s after end of command (expected \"->\" or end of input)", p.found())
		}
	}
}

func (p *parser) stage() (Stage, *SyntaxError) {
	if p.tok.kind == tTool {
		call, err := p.invoke()
		return Stage{Calls: []Invoke{call}}, err
	}
	// A parallel block: "[" call ("," call)* "]".
	if err := p.advance(); err != nil {
		return Stage{}, err
	}
	st := Stage{Parallel: true}
	for {
		if p.tok.kind != tTool {
			switch {
			case len(st.Calls) > 0:
				return st, p.errHere("expected \"@tool{...}\" after \",\", found %s", p.found())
			case p.tok.kind == tRBrack:
				return st, p.errHere("expected \"@tool{...}\" in \"[...]\", found \"]\" (a parallel block needs at least one call)")
			case p.tok.kind == tLBrack:
				return st, p.errHere("expected \"@tool{...}\" in \"[...]\", found \"[\" (only calls go inside a parallel block)")
			}
			return st, p.errHere("expected \"@tool{...}\" in \"[...]\", found %s", p.found())
		}
		call, err := p.invoke()
		if err != nil {
			return st, err
		}
		st.Calls = append(st.Calls, call)
		switch p.tok.kind {
		case tComma:
			if err := p.advance(); err != nil {
				return st, err
			}
		case tRBrack:
			return st, p.advance()
		case tArrow:
			return st, p.errHere("expected \",\" or \"]\" after a call in \"[...]\", found \"->\" (chain whole blocks: [...]->@tool{...})")
		default:
			return st, p.errHere("expected \",\" or \"]\" after a call in \"[...]\", found %s", p.found())
		}
	}
}

func (p *parser) invoke() (Invoke, *SyntaxError) {
	t := &p.tok
	call := Invoke{Namespace: t.ns, Name: t.text, Pos: t.pos}
	if p.calls++; p.calls > MaxCalls {
		return call, p.errHere("expected at most %d calls in one command, found more", MaxCalls)
	}
	if t.ns != "" && p.opts.Namespaces != nil && !slices.Contains(p.opts.Namespaces, t.ns) {
		known := slices.Clone(p.opts.Namespaces)
		slices.Sort(known)
		list := strings.Join(known, ", ")
		if list == "" {
			list = "none"
		}
		pos := Pos{Line: call.Pos.Line, Column: call.Pos.Column + 1}
		return call, newError(p.lx.src, p.tok.off+1, pos, "unknown namespace %s (known: %s)", QuoteShort(t.ns), list)
	}
	if err := p.advance(); err != nil {
		return call, err
	}
	if p.tok.kind != tLBrace {
		return call, p.errHere("expected \"{\" after %s, found %s", QuoteShort("@"+call.Tool()), p.found())
	}
	if err := p.advance(); err != nil {
		return call, err
	}
	// Params: empty, or key=value separated by ";", with an optional ";" before "}".
	for p.tok.kind != tRBrace {
		if p.tok.kind != tIdent {
			return call, p.errHere("expected a parameter name or \"}\", found %s", p.found())
		}
		key, keyPos := p.tok.text, p.tok.pos
		if p.seen(call.Params, key) {
			return call, p.errHere("duplicate parameter %s in %s (expected each name once)", QuoteShort(key), QuoteShort("@"+call.Tool()))
		}
		if err := p.advance(); err != nil {
			return call, err
		}
		if p.tok.kind != tEq {
			return call, p.errHere("expected \"=\" after %s, found %s", QuoteShort(key), p.found())
		}
		if err := p.advance(); err != nil {
			return call, err
		}
		v, err := p.value(`after "="`, 0)
		if err != nil {
			return call, err
		}
		call.Params = append(call.Params, Param{Key: key, Value: v, Pos: keyPos})
		switch p.tok.kind {
		case tSemi:
			if err := p.advance(); err != nil {
				return call, err
			}
		case tRBrace:
		default:
			return call, p.errHere("expected \";\" or \"}\" after the value of %s, found %s", QuoteShort(key), p.found())
		}
	}
	return call, p.advance()
}

// seen reports whether key is already in params. A linear scan suits the usual
// handful of params; past that a map keeps a hostile 64 KiB of "k1=1;k2=1;..."
// from costing quadratic time.
func (p *parser) seen(params []Param, key string) bool {
	const small = 16
	if len(params) < small {
		for i := range params {
			if params[i].Key == key {
				return true
			}
		}
		return false
	}
	if len(params) == small {
		clear(p.keys)
		if p.keys == nil {
			p.keys = make(map[string]bool)
		}
		for i := range params {
			p.keys[params[i].Key] = true
		}
	}
	if p.keys[key] {
		return true
	}
	p.keys[key] = true
	return false
}

// value parses one value; where says where it was expected, for messages.
func (p *parser) value(where string, depth int) (Value, *SyntaxError) {
	t := &p.tok
	v := Value{Pos: t.pos}
	switch t.kind {
	case tString:
		v.Kind, v.Str = String, t.text
	case tInt:
		v.Kind, v.Int = Int, t.i
	case tFloat:
		v.Kind, v.Float = Float, t.f
	case tRef:
		v.Kind, v.Ref = Ref, Reference{Scope: t.ns, Name: t.text}
	case tIdent:
		switch t.text {
		case "true", "yes":
			v.Kind, v.Bool = Bool, true
		case "false", "no":
			v.Kind, v.Bool = Bool, false
		default:
			return v, p.errHere("expected a value %s, found %s (quote strings: \"%s\")", where, p.found(), t.text)
		}
	case tLParen:
		return p.array(depth + 1)
	default:
		return v, p.errHere("expected a value %s, found %s", where, p.found())
	}
	return v, p.advance()
}

func (p *parser) array(depth int) (Value, *SyntaxError) {
	v := Value{Kind: Array, Pos: p.tok.pos}
	if depth > MaxArrayDepth {
		return v, p.errHere("expected arrays nested at most %d deep, found deeper", MaxArrayDepth)
	}
	if err := p.advance(); err != nil {
		return v, err
	}
	if p.tok.kind == tRParen {
		return v, p.errHere("expected a value after \"(\", found \")\" (an array needs at least one item)")
	}
	where := `after "("`
	for {
		item, err := p.value(where, depth)
		if err != nil {
			return v, err
		}
		v.Items = append(v.Items, item)
		switch p.tok.kind {
		case tComma:
			if err := p.advance(); err != nil {
				return v, err
			}
			where = `after ","`
		case tRParen:
			return v, p.advance()
		default:
			return v, p.errHere("expected \",\" or \")\" in an array, found %s", p.found())
		}
	}
}
