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
// whitespace after it; text without one is returned as is.
func StripThink(text string) string {
	t := strings.TrimLeft(text, " \t\r\n")
	if !strings.HasPrefix(t, ThinkOpen) {
		return text
	}
	end := strings.Index(t, ThinkClose)
	if end < 0 {
		return text
	}
	return strings.TrimLeft(t[end+len(ThinkClose):], " \t\r\n")
}
