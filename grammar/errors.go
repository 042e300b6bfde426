package grammar

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// SyntaxError is a parse error at a 1-based line and byte column. It carries its
// source line so that a caller can show where the problem is without the input.
type SyntaxError struct {
	Pos
	Msg        string
	SourceLine string // the input line holding Pos, without its line break
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Msg)
}

// caretWindow is how much of a long source line Caret shows, in bytes: the
// part around the column. A 100 KB line echoed whole would be 26 Telegram
// messages for one typo.
const caretWindow = 80

// Caret returns the offending source line and, under it, a '^' at the error's column.
// A line longer than caretWindow is shown as the window around the column, with "…"
// where it was cut. Columns count bytes but terminals show characters, so the padding
// skips UTF-8 continuation bytes and copies tabs, keeping the caret under the right
// character.
func (e *SyntaxError) Caret() string {
	line, col := e.SourceLine, max(e.Column-1, 0) // col: bytes before the caret
	head, tail := "", ""
	if len(line) > caretWindow {
		start := max(0, min(col, len(line))-caretWindow/2)
		end := min(len(line), start+caretWindow)
		start = max(0, end-caretWindow)
		for start > 0 && !utf8.RuneStart(line[start]) {
			start--
		}
		for end < len(line) && !utf8.RuneStart(line[end]) {
			end++
		}
		if start > 0 {
			head = "…"
		}
		if end < len(line) {
			tail = "…"
		}
		line, col = line[start:end], col-start
	}
	var b strings.Builder
	b.WriteString(head + line + tail)
	b.WriteByte('\n')
	if head != "" {
		b.WriteByte(' ') // under the "…"
	}
	for i := 0; i < col; i++ {
		switch {
		case i >= len(line):
			b.WriteByte(' ')
		case line[i] == '\t':
			b.WriteByte('\t')
		case line[i]&0xC0 == 0x80:
		default:
			b.WriteByte(' ')
		}
	}
	b.WriteByte('^')
	return b.String()
}

// newError builds an error at byte offset off of src, at pos (which the caller has
// already computed for off, so that errors cost nothing when there are none).
func newError(src string, off int, pos Pos, format string, args ...any) *SyntaxError {
	return &SyntaxError{Pos: pos, Msg: fmt.Sprintf(format, args...), SourceLine: lineAround(src, off)}
}

// errorAtOffset is newError for the rare places that have no position at hand.
func errorAtOffset(src string, off int, format string, args ...any) *SyntaxError {
	if off > len(src) {
		off = len(src)
	}
	line := 1 + strings.Count(src[:off], "\n")
	start := strings.LastIndexByte(src[:off], '\n') + 1
	return newError(src, off, Pos{Line: line, Column: off - start + 1}, format, args...)
}

func lineAround(src string, off int) string {
	if off > len(src) {
		off = len(src)
	}
	start := strings.LastIndexByte(src[:off], '\n') + 1
	end := strings.IndexByte(src[off:], '\n')
	if end < 0 {
		end = len(src)
	} else {
		end += off
	}
	return strings.TrimSuffix(src[start:end], "\r")
}

// maxShown keeps messages about hostile input short.
const maxShown = 24

// QuoteShort quotes s for a message, cutting it at maxShown bytes on a rune boundary.
// Every message that quotes what a person typed (a name, a value) quotes it with
// this, so that a 100 KB input is never echoed whole.
func QuoteShort(s string) string {
	if len(s) <= maxShown {
		return strconv.Quote(s)
	}
	cut := maxShown
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + "..."
}

// describeAt says what a person would see at byte offset off, for "found ..." in
// messages: a whole word when a word starts there, else one character.
func describeAt(src string, off int) string { return describe(src, off, true) }

// describeChar is describeAt for one character, where a word would mislead (after a
// backslash, "\qb" is a bad escape "q", not a word "qb").
func describeChar(src string, off int) string { return describe(src, off, false) }

func describe(src string, off int, word bool) string {
	if off >= len(src) {
		return "end of input"
	}
	switch c := src[off]; {
	case c == ' ':
		return "a space"
	case c == '\t':
		return "a tab"
	case c == '\n' || c == '\r':
		return "a line break"
	case word && isWordByte(c):
		end := off
		for end < len(src) && (isWordByte(src[end]) || src[end] == '-') {
			end++
		}
		return QuoteShort(src[off:end])
	case c >= utf8.RuneSelf:
		r, size := utf8.DecodeRuneInString(src[off:])
		if r == utf8.RuneError && size == 1 {
			return fmt.Sprintf("byte 0x%02X (not UTF-8)", c)
		}
		return strconv.Quote(string(r))
	default:
		return strconv.Quote(src[off : off+1])
	}
}
