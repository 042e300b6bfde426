package telegram

import (
	"strings"
	"unicode/utf8"
)

// MaxMessageLen is Telegram's limit on a message's text, in UTF-16 code units after
// entity parsing. Chunks are measured before parsing (escapes and code fences
// included), which is never less, so a chunk that fits here fits there.
const MaxMessageLen = 4096

// markdownSpecial are the characters MarkdownV2 reserves outside code: each must be
// escaped with a backslash to stand for itself (Bot API, "MarkdownV2 style").
const markdownSpecial = "_*[]()~`>#+-=|{}.!\\"

// EscapeMarkdownV2 makes s stand for itself in MarkdownV2 text.
func EscapeMarkdownV2(s string) string {
	if !strings.ContainsAny(s, markdownSpecial) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + len(s)/8)
	for _, r := range s {
		if r < 0x80 && strings.IndexByte(markdownSpecial, byte(r)) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// escapeCode escapes s for inside a pre or code entity, where only ` and \ are special.
func escapeCode(s string) string {
	if !strings.ContainsAny(s, "`\\") {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if r == '`' || r == '\\' {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// utf16Len is the length Telegram counts.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += runeUnits(r)
	}
	return n
}

func runeUnits(r rune) int {
	if r >= 0x10000 {
		return 2
	}
	return 1
}

// textCost and codeCost are a rune's size after escaping, for text and inside code.
func textCost(r rune) int {
	if r < 0x80 && strings.IndexByte(markdownSpecial, byte(r)) >= 0 {
		return 2
	}
	return runeUnits(r)
}

func codeCost(r rune) int {
	if r == '`' || r == '\\' {
		return 2
	}
	return runeUnits(r)
}

func plainCost(r rune) int { return runeUnits(r) }

// Split cuts text into chunks whose cost (the sum of cost over their runes, newlines
// between lines included) is at most limit. It cuts at line boundaries, dropping the
// newline it cuts at; a line longer than limit on its own is cut between runes. The
// chunks joined with the newlines that were cut give back the text exactly.
func Split(text string, limit int, cost func(rune) int) []string {
	if limit < 2 {
		limit = 2 // a rune costs at most 2
	}
	var out []string
	var cur strings.Builder
	curCost, have := 0, false
	flush := func() {
		if have {
			out = append(out, cur.String())
		}
		cur.Reset()
		curCost, have = 0, false
	}
	for line := range strings.SplitSeq(text, "\n") {
		lc := 0
		for _, r := range line {
			lc += cost(r)
		}
		nl := cost('\n')
		if have && curCost+nl+lc <= limit {
			cur.WriteByte('\n')
			cur.WriteString(line)
			curCost += nl + lc
			continue
		}
		flush()
		if lc <= limit {
			cur.WriteString(line)
			curCost, have = lc, true
			continue
		}
		// One line longer than a message: cut it between runes.
		start, c := 0, 0
		for i, r := range line {
			rc := cost(r)
			if c+rc > limit {
				out = append(out, line[start:i])
				start, c = i, 0
			}
			c += rc
		}
		cur.WriteString(line[start:])
		curCost, have = c, true
	}
	flush()
	return out
}

// outMsg is one message to send: its MarkdownV2 form, and the plain text to send
// instead when Telegram refuses the markup.
type outMsg struct {
	md    string // "" means send plain only
	plain string
}

// Fences around a code block; the newline after the opening fence makes the language
// empty rather than the first word of the text.
const (
	fenceOpen  = "```\n"
	fenceClose = "\n```"
)

// codeMessages renders text as one or more monospace blocks (command results: pin
// tables and reports line up).
func codeMessages(text string) []outMsg {
	var out []outMsg
	for _, part := range Split(text, MaxMessageLen-utf16Len(fenceOpen+fenceClose), codeCost) {
		if strings.TrimSpace(part) == "" {
			continue
		}
		out = append(out, outMsg{md: fenceOpen + escapeCode(part) + fenceClose, plain: part})
	}
	return out
}

// textMessages renders text as MarkdownV2 that shows it exactly as written.
func textMessages(text string) []outMsg {
	var out []outMsg
	for _, part := range Split(text, MaxMessageLen, textCost) {
		if strings.TrimSpace(part) == "" {
			continue
		}
		out = append(out, outMsg{md: EscapeMarkdownV2(part), plain: part})
	}
	return out
}

// plainMessages sends text with no markup at all.
func plainMessages(text string) []outMsg {
	var out []outMsg
	for _, part := range Split(text, MaxMessageLen, plainCost) {
		if strings.TrimSpace(part) == "" {
			continue
		}
		out = append(out, outMsg{plain: part})
	}
	return out
}

// bold is MarkdownV2 bold text.
func bold(s string) string { return "*" + EscapeMarkdownV2(s) + "*" }

// code is MarkdownV2 inline code.
func code(s string) string { return "`" + escapeCode(s) + "`" }

// validUTF8 replaces invalid bytes: Telegram refuses a request that is not UTF-8.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
