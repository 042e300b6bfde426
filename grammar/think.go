package grammar

import "strings"

// ThinkOpen and ThinkClose delimit a thinking model's reasoning (Qwen3).
const (
	ThinkOpen  = "<think>"
	ThinkClose = "</think>"
)

// thinkSection is the reasoning a thinking model writes before its answer: free
// text up to the first </think>, and the blank lines after it. llama.cpp's own
// grammars apply from the first token and so cut the reasoning off; here it is
// outside the constraint, which starts after it, in every mode.
var thinkSection node = rule{"think", seq{lit(ThinkOpen), until{ThinkClose}, lit(ThinkClose),
	rep{class{{'\t', '\n'}, {'\r', '\r'}, {' ', ' '}}, 0, 4}}}

// StripThink returns text without a leading <think>…</think> section and the
// whitespace after it; text without one (or with one still open) is returned as is.
func StripThink(text string) string {
	n, _ := ThinkLen(text)
	return text[n:]
}

// ThinkLen measures a leading <think>…</think> section of text, with the
// whitespace around it: n is where the answer starts (0 when there is no
// closed section), and open says that text so far is, or may yet become, an
// unclosed one (blank, a prefix of <think>, or <think> without </think>), so
// that a reader of a stream holds it back until it is known.
func ThinkLen(text string) (n int, open bool) {
	const blanks = " \t\r\n"
	t := strings.TrimLeft(text, blanks)
	if strings.HasPrefix(ThinkOpen, t) {
		return 0, true
	}
	if !strings.HasPrefix(t, ThinkOpen) {
		return 0, false
	}
	end := strings.Index(t, ThinkClose)
	if end < 0 {
		return 0, true
	}
	return len(text) - len(strings.TrimLeft(t[end+len(ThinkClose):], blanks)), false
}
