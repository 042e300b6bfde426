package grammar

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

type tokKind uint8

const (
	tEOF     tokKind = iota
	tIllegal         // something no token starts with; the parser reports it with what it expected
	tTool            // "@name" or "@ns/name": one token, so no space can split a tool name
	tIdent
	tString
	tInt
	tFloat
	tRef // "$scope.name": one token, like tTool
	tArrow
	tLBrace
	tRBrace
	tLBrack
	tRBrack
	tLParen
	tRParen
	tEq
	tSemi
	tComma
)

type token struct {
	kind     tokKind
	pos      Pos
	off, end int    // the token's bytes in the source
	text     string // identifier, decoded string, tool name or reference name
	ns       string // tool namespace or reference scope
	i        int64
	f        float64
	note     string // why a tIllegal is wrong, when the lexer knows better than the parser
}

// lexer hands out one token at a time. No token spans a line (strings may not hold
// raw line breaks), so line and lineStart are right for the whole current token.
type lexer struct {
	src       string
	off       int
	line      int
	lineStart int
}

func (l *lexer) posOf(off int) Pos { return Pos{Line: l.line, Column: off - l.lineStart + 1} }

func (l *lexer) errAt(off int, format string, args ...any) *SyntaxError {
	return newError(l.src, off, l.posOf(off), format, args...)
}

func isAlpha(c byte) bool    { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func isDigit(c byte) bool    { return c >= '0' && c <= '9' }
func isHexDigit(c byte) bool { return isDigit(c) || c|0x20 >= 'a' && c|0x20 <= 'f' }
func isWordByte(c byte) bool { return isAlpha(c) || isDigit(c) || c == '_' }

// IsNamespace reports whether s is a tool namespace: an identifier ("gpio"),
// or a paired board's name and one of its namespaces ("garage.gpio"), the
// tools another board runs (docs/boards.md).
func IsNamespace(s string) bool {
	board, ns, remote := strings.Cut(s, ".")
	if !remote {
		return IsIdent(s)
	}
	return IsIdent(board) && IsIdent(ns)
}

// IsIdent reports whether s is one identifier of the command language: a
// letter, then letters, digits, '_' or '-'. Tool namespaces, tool names and
// parameter keys are identifiers.
func IsIdent(s string) bool {
	if s == "" || !isAlpha(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !isWordByte(c) && c != '-' {
			return false
		}
	}
	return true
}

func (l *lexer) at(off int) byte {
	if off < len(l.src) {
		return l.src[off]
	}
	return 0
}

func (l *lexer) skipSpace() {
	for l.off < len(l.src) {
		switch l.src[l.off] {
		case '\n':
			l.line++
			l.lineStart = l.off + 1
		case ' ', '\t', '\r':
		default:
			return
		}
		l.off++
	}
}

// identEnd returns where the identifier starting at off (a letter) ends. A '-'
// directly before '>' is left for the arrow, so "@a{}->@b{}" never needs a space.
func (l *lexer) identEnd(off int) int {
	for off++; off < len(l.src); off++ {
		c := l.src[off]
		if isWordByte(c) || c == '-' && l.at(off+1) != '>' {
			continue
		}
		break
	}
	return off
}

var punct = [256]tokKind{
	'{': tLBrace, '}': tRBrace, '[': tLBrack, ']': tRBrack,
	'(': tLParen, ')': tRParen, '=': tEq, ';': tSemi, ',': tComma,
}

// next reads the next token into t, which the parser owns: tokens are large
// enough that copying them showed up in profiles.
func (l *lexer) next(t *token) *SyntaxError {
	l.skipSpace()
	start := l.off
	*t = token{off: start, pos: l.posOf(start)}
	if start >= len(l.src) {
		t.kind, t.end = tEOF, start
		return nil
	}
	c := l.src[start]
	var err *SyntaxError
	switch {
	case c == '@':
		err = l.tool(t)
	case c == '$':
		err = l.ref(t)
	case c == '"' || c == '\'':
		err = l.str(t)
	case c == '-' && l.at(start+1) == '>':
		t.kind, l.off = tArrow, start+2
	case isDigit(c) || c == '-' && isDigit(l.at(start+1)):
		err = l.number(t)
	case isAlpha(c):
		l.off = l.identEnd(start)
		t.kind, t.text = tIdent, l.src[start:l.off]
	case punct[c] != tEOF:
		t.kind, l.off = punct[c], start+1
	default:
		_, size := utf8.DecodeRuneInString(l.src[start:])
		t.kind, l.off = tIllegal, start+size
	}
	t.end = l.off
	return err
}

func (l *lexer) tool(t *token) *SyntaxError {
	nameAt := t.off + 1
	if !isAlpha(l.at(nameAt)) {
		return l.errAt(nameAt, "expected a tool name (starting with a letter) after \"@\", found %s", describeAt(l.src, nameAt))
	}
	end := l.identEnd(nameAt)
	if l.at(end) == '.' && isAlpha(l.at(end+1)) {
		// A tool of another board: @garage.gpio/write{...} (docs/boards.md).
		// The board's name is part of the namespace, so the namespace check
		// and the constraint hold remote calls as they hold local ones.
		if boardEnd := l.identEnd(end + 1); l.at(boardEnd) == '/' {
			end = boardEnd
		}
	}
	if l.at(end) == '/' {
		ns := l.src[nameAt:end]
		nameAt = end + 1
		if !isAlpha(l.at(nameAt)) {
			return l.errAt(nameAt, "expected a tool name (starting with a letter) after \"@%s/\", found %s", ns, describeAt(l.src, nameAt))
		}
		t.ns = ns
		end = l.identEnd(nameAt)
	}
	t.kind, t.text, l.off = tTool, l.src[nameAt:end], end
	return nil
}

func (l *lexer) ref(t *token) *SyntaxError {
	scopeAt := t.off + 1
	if !isAlpha(l.at(scopeAt)) {
		return l.errAt(scopeAt, "expected a reference scope (prev, ctx, env or self) after \"$\", found %s", describeAt(l.src, scopeAt))
	}
	end := l.identEnd(scopeAt)
	scope := l.src[scopeAt:end]
	switch scope {
	case "prev", "ctx", "env", "self":
	default:
		return l.errAt(scopeAt, "unknown reference scope %s (expected prev, ctx, env or self)", QuoteShort(scope))
	}
	if l.at(end) != '.' {
		return l.errAt(end, "expected \".\" after \"$%s\", found %s", scope, describeAt(l.src, end))
	}
	nameAt := end + 1
	if !isAlpha(l.at(nameAt)) {
		return l.errAt(nameAt, "expected a name (starting with a letter) after \"$%s.\", found %s", scope, describeAt(l.src, nameAt))
	}
	l.off = l.identEnd(nameAt)
	t.kind, t.ns, t.text = tRef, scope, l.src[nameAt:l.off]
	return nil
}

// str reads a quoted string. The decoded text shares the source when there are no
// escapes, which is the common case. Raw line breaks are refused so that a missing
// quote is reported on its own line, not at the end of the input.
func (l *lexer) str(t *token) *SyntaxError {
	q := l.src[t.off]
	var b *strings.Builder
	from := t.off + 1 // start of the literal run not yet copied into b
	for i := from; ; {
		if i >= len(l.src) {
			return l.errAt(t.off, "unterminated string: expected a closing %c, found end of input", q)
		}
		c := l.src[i]
		switch {
		case c == q:
			if b == nil {
				t.text = l.src[from:i]
			} else {
				b.WriteString(l.src[from:i])
				t.text = b.String()
			}
			t.kind, l.off = tString, i+1
			return nil
		case c == '\n' || c == '\r':
			return l.errAt(i, "unterminated string: expected a closing %c before the line break (write a line break as \\n)", q)
		case c == '\\':
			if b == nil {
				b = &strings.Builder{}
			}
			b.WriteString(l.src[from:i])
			n, err := l.escape(i, b)
			if err != nil {
				return err
			}
			i += n
			from = i
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRuneInString(l.src[i:])
			if r == utf8.RuneError && size == 1 {
				return l.errAt(i, "expected UTF-8 text in string, found byte 0x%02X", c)
			}
			i += size
		default:
			i++
		}
	}
}

// escape decodes the escape at src[i] (a backslash) into b and returns its length.
// \x is limited to ASCII so that every string stays valid UTF-8; \u{...} covers the rest.
func (l *lexer) escape(i int, b *strings.Builder) (int, *SyntaxError) {
	c := l.at(i + 1)
	switch c {
	case '"', '\'', '\\':
		b.WriteByte(c)
		return 2, nil
	case 'n':
		b.WriteByte('\n')
		return 2, nil
	case 't':
		b.WriteByte('\t')
		return 2, nil
	case 'r':
		b.WriteByte('\r')
		return 2, nil
	case '0':
		b.WriteByte(0)
		return 2, nil
	case 'x':
		if bad := i + 2; !isHexDigit(l.at(bad)) || !isHexDigit(l.at(bad+1)) {
			if isHexDigit(l.at(bad)) {
				bad++
			}
			return 0, l.errAt(i, "expected two hex digits after \\x, found %s", describeChar(l.src, bad))
		}
		v, _ := strconv.ParseUint(l.src[i+2:i+4], 16, 8)
		if v >= utf8.RuneSelf {
			return 0, l.errAt(i, "expected \\x00 to \\x7F (ASCII), found \\x%s (write \\u{%X} for U+%04X)", l.src[i+2:i+4], v, v)
		}
		b.WriteByte(byte(v))
		return 4, nil
	case 'u':
		if l.at(i+2) != '{' {
			return 0, l.errAt(i, "expected \"{\" after \\u (as in \\u{e9}), found %s", describeChar(l.src, i+2))
		}
		j := i + 3
		for j < len(l.src) && isHexDigit(l.src[j]) && j-(i+3) < 7 {
			j++
		}
		digits := l.src[i+3 : j]
		if len(digits) == 0 || len(digits) > 6 {
			return 0, l.errAt(i, "expected 1 to 6 hex digits in \\u{...}, found %s", describeAt(l.src, i+3))
		}
		if l.at(j) != '}' {
			return 0, l.errAt(j, "expected \"}\" to close \\u{%s, found %s", digits, describeChar(l.src, j))
		}
		v, _ := strconv.ParseUint(digits, 16, 32)
		if v > utf8.MaxRune || v >= 0xD800 && v <= 0xDFFF {
			return 0, l.errAt(i, "expected a Unicode scalar value in \\u{...}, found \\u{%s}", digits)
		}
		b.WriteRune(rune(v))
		return j + 1 - i, nil
	}
	return 0, l.errAt(i, "expected an escape (\\\" \\' \\\\ \\n \\t \\r \\0 \\xHH \\u{HEX}) after \"\\\", found %s", describeChar(l.src, i+1))
}

// number reads an integer, float or hex literal. A literal that runs into letters,
// digits or dots ("12abc", "1.2.3", "1e5") becomes one tIllegal token so the parser
// can show all of it.
func (l *lexer) number(t *token) *SyntaxError {
	src := l.src
	i := t.off
	if src[i] == '-' {
		i++
	}
	if src[i] == '0' && l.at(i+1)|0x20 == 'x' {
		j := i + 2
		for j < len(src) && isHexDigit(src[j]) {
			j++
		}
		switch {
		case i != t.off:
			return l.illegalRun(t, j, "hex numbers take no sign")
		case j == i+2:
			return l.illegalRun(t, j, "hex digits must follow \"0x\"")
		case l.runsOn(j):
			return l.illegalRun(t, j, "a number ends at a separator")
		}
		v, err := strconv.ParseInt(src[i+2:j], 16, 64)
		if err != nil {
			return l.errAt(t.off, "expected a hex number up to 0x7FFFFFFFFFFFFFFF, found %s (too big for int64)", QuoteShort(src[t.off:j]))
		}
		t.kind, t.i, l.off = tInt, v, j
		return nil
	}
	j := i
	for j < len(src) && isDigit(src[j]) {
		j++
	}
	float := false
	if l.at(j) == '.' {
		if !isDigit(l.at(j + 1)) {
			return l.illegalRun(t, j, "a digit must follow \".\"")
		}
		float = true
		for j++; j < len(src) && isDigit(src[j]); j++ {
		}
		if l.at(j)|0x20 == 'e' {
			k := j + 1
			if c := l.at(k); c == '+' || c == '-' {
				k++
			}
			if !isDigit(l.at(k)) {
				return l.illegalRun(t, j, "digits must follow the exponent's \"e\"")
			}
			for j = k; j < len(src) && isDigit(src[j]); j++ {
			}
		}
	} else if l.at(j)|0x20 == 'e' {
		return l.illegalRun(t, j, "an exponent needs a fraction, as in 1.0e5")
	}
	if l.runsOn(j) {
		return l.illegalRun(t, j, "a number ends at a separator")
	}
	text := src[t.off:j]
	if float {
		v, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return l.errAt(t.off, "expected a number within float64 range, found %s", QuoteShort(text))
		}
		t.kind, t.f = tFloat, v
	} else {
		v, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			return l.errAt(t.off, "expected an integer from -9223372036854775808 to 9223372036854775807, found %s (out of range)", QuoteShort(text))
		}
		t.kind, t.i = tInt, v
	}
	l.off = j
	return nil
}

func (l *lexer) runsOn(off int) bool {
	c := l.at(off)
	return isWordByte(c) || c == '.'
}

// illegalRun makes t a tIllegal covering the malformed literal up to the next separator.
func (l *lexer) illegalRun(t *token, j int, note string) *SyntaxError {
	for j < len(l.src) {
		c := l.src[j]
		if !isWordByte(c) && c != '.' && !((c == '+' || c == '-') && l.src[j-1]|0x20 == 'e') {
			break
		}
		j++
	}
	t.kind, t.note, l.off = tIllegal, note, j
	return nil
}
