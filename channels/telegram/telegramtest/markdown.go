package telegramtest

import (
	"fmt"
	"strings"
)

// ParseMarkdownV2 parses text the way the Bot API's MarkdownV2 parse mode does, for the
// entities it defines (bold *, italic _, underline __, strikethrough ~, spoiler ||,
// inline code `, pre ```, links [text](url), block quotes > at a line start), and
// returns the plain text. Like Telegram it refuses a reserved character that is not
// escaped, an escape of a character outside 1..126, and an entity left open; it is
// stricter in one way: entities must nest (Telegram tolerates some overlaps), which only
// matters for text a test wrote by hand.
func ParseMarkdownV2(s string) (string, error) {
	var plain strings.Builder
	type open struct {
		marker string
		at     int
	}
	var stack []open
	top := func() string {
		if len(stack) == 0 {
			return ""
		}
		return stack[len(stack)-1].marker
	}
	toggle := func(m string, at int) {
		if top() == m {
			stack = stack[:len(stack)-1]
			return
		}
		stack = append(stack, open{m, at})
	}
	lineStart := true
	for i := 0; i < len(s); {
		c := s[i]
		if c == '\\' {
			if i+1 >= len(s) {
				return "", fmt.Errorf("text must not end with an unescaped '\\'")
			}
			n := s[i+1]
			if n < 1 || n > 126 {
				return "", fmt.Errorf("character at byte offset %d can't be escaped", i+1)
			}
			plain.WriteByte(n)
			i += 2
			lineStart = false
			continue
		}
		switch top() {
		case "```", "`":
			m := top()
			if strings.HasPrefix(s[i:], m) {
				stack = stack[:len(stack)-1]
				i += len(m)
				continue
			}
			if c == '`' {
				return "", fmt.Errorf("character '`' is reserved and must be escaped with the preceding '\\'")
			}
			plain.WriteByte(c)
			i++
			continue
		case "](":
			if c == ')' {
				stack = stack[:len(stack)-1]
			}
			i++
			continue
		}
		switch {
		case strings.HasPrefix(s[i:], "```"):
			stack = append(stack, open{"```", i})
			i += 3
			// The rest of the opening line is the language.
			if nl := strings.IndexByte(s[i:], '\n'); nl >= 0 && !strings.Contains(s[i:i+nl], "```") {
				i += nl + 1
			}
			continue
		case c == '`':
			stack = append(stack, open{"`", i})
		case strings.HasPrefix(s[i:], "__"):
			toggle("__", i)
			i += 2
			continue
		case strings.HasPrefix(s[i:], "||"):
			toggle("||", i)
			i += 2
			continue
		case c == '*' || c == '_' || c == '~':
			toggle(string(c), i)
		case c == '[':
			stack = append(stack, open{"[", i})
		case c == ']':
			if top() != "[" || i+1 >= len(s) || s[i+1] != '(' {
				return "", fmt.Errorf("character ']' is reserved and must be escaped with the preceding '\\'")
			}
			stack[len(stack)-1] = open{"](", i}
			i += 2
			continue
		case c == '>' && lineStart:
		case strings.IndexByte("_*[]()~`>#+-=|{}.!", c) >= 0:
			return "", fmt.Errorf("character '%c' is reserved and must be escaped with the preceding '\\'", c)
		default:
			plain.WriteByte(c)
		}
		lineStart = c == '\n'
		i++
	}
	if len(stack) > 0 {
		return "", fmt.Errorf("can't find end of the entity starting at byte offset %d", stack[0].at)
	}
	return plain.String(), nil
}
