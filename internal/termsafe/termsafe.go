// Package termsafe escapes the control characters of text from outside (an
// MCP server's tool names and errors, a tool's output, a Telegram user's
// name, an audit line) before the CLI prints it to a terminal. A terminal
// obeys what it is sent: ESC [ ... rewrites the screen, ESC ] 52 writes the
// clipboard on some, BEL rings, CR overwrites a line with another, so a
// server could make `clawedge tools` show what it likes.
//
// What is escaped: the C0 controls (U+0000–U+001F) but tab and newline in
// String, DEL (U+007F) and the C1 controls (U+0080–U+009F, some terminals
// take U+009B as CSI). They are written as Go writes them in a string
// literal: \x1b, \a, \r, \u009b. Other text, invalid UTF-8 included, is
// left as it is: a byte of a character split across two pieces of a stream
// must not be mangled, and it cannot steer a terminal by itself.
package termsafe

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// String escapes s's control characters but newline and tab: for text that
// is printed as lines (a reply, a tool's output).
func String(s string) string { return escape(s, false) }

// Line escapes every control character of s, newline and tab too: for a
// name or a short text printed on one line (a tool's name, a state).
func Line(s string) string { return escape(s, true) }

func escape(s string, line bool) string {
	i := firstControl(s, line)
	if i < 0 {
		return s // the common case: no copy
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b.WriteByte(s[i]) // not a character: left as it is
		} else if control(r, line) {
			q := strconv.QuoteRune(r) // '\x1b', '\a', '\u009b'
			b.WriteString(q[1 : len(q)-1])
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// firstControl is the index of s's first control character, or -1.
func firstControl(s string, line bool) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c < 0x20 || c == 0x7f:
			if line || (c != '\n' && c != '\t') {
				return i
			}
		case c == 0xc2 && i+1 < len(s) && s[i+1] >= 0x80 && s[i+1] <= 0x9f: // U+0080–U+009F
			return i
		}
	}
	return -1
}

func control(r rune, line bool) bool {
	switch {
	case r == '\n' || r == '\t':
		return line
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	}
	return false
}
