package config

import (
	"strings"
	"unicode/utf8"
)

// The checks here run on the raw bytes before the YAML parser sees them,
// because what they refuse costs too much or is lost once it has: the
// parser replaces invalid UTF-8 with U+FFFD (a data_dir named "��"), and
// it spends memory and time that grow much faster than the input on deep
// nesting (80 KB of "[" took 2.5 GB) and on many small elements, so the
// file size cap alone does not protect a 512 MB board checking its config
// at boot.

// maxDepth is the deepest nesting of collections a config may have. The
// deepest real key (a list of mappings inside a mapping inside a section)
// is five levels down; the rest is headroom for new sections, not a
// promise that a file this deep makes sense.
const maxDepth = 32

// maxElements bounds how many pieces of YAML syntax (lines, keys, list
// items, brackets, commas, anchors) a config may have. The parser takes
// about 550 bytes for each, so 1 MiB of "a," took 570 MB however flat; a
// real config has a few hundred.
const maxElements = 20000

// shape is what checkShape found wrong.
type shape int

const (
	shapeOK shape = iota
	tooDeep
	tooMany
)

// prescan reports a file larger than maxFileSize, the first invalid UTF-8
// sequence, or else the first place where collections nest deeper than
// maxDepth or the elements exceed maxElements. It allocates nothing and
// looks at each byte once.
func prescan(data []byte, ps *problems) bool {
	if len(data) > maxFileSize {
		ps.add(pos{1, 1}, "file is larger than %d KiB; this is not a clawedge config", maxFileSize>>10)
		return false
	}
	if at, ok := checkUTF8(data); !ok {
		ps.add(at, "invalid UTF-8 (byte 0x%02X); a config file must be UTF-8 text: re-save it as UTF-8", data[offsetOf(data, at)])
		return false
	}
	switch at, sh := checkShape(data); sh {
	case tooDeep:
		ps.add(at, "collections nest deeper than %d levels here; a clawedge config needs far fewer (is this a config file?)", maxDepth)
		return false
	case tooMany:
		ps.add(at, "more than %d YAML elements (lines, keys, items, brackets) by here; a clawedge config has a few hundred (is this a config file?)", maxElements)
		return false
	}
	return true
}

// checkUTF8 returns where the first invalid UTF-8 sequence is.
func checkUTF8(data []byte) (pos, bool) {
	if utf8.Valid(data) {
		return pos{}, true
	}
	c := cursor{at: pos{1, 1}}
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n == 1 {
			return c.at, false
		}
		c.advance(data, i, n)
		i += n
	}
	return pos{}, true
}

// offsetOf is the byte offset of at in data (which is valid UTF-8 up to
// at), for showing the offending byte.
func offsetOf(data []byte, at pos) int {
	c := cursor{at: pos{1, 1}}
	for i := 0; i < len(data); {
		if c.at == at {
			return i
		}
		_, n := utf8.DecodeRune(data[i:])
		c.advance(data, i, n)
		i += n
	}
	return len(data) - 1
}

// cursor counts lines and columns (in characters) the way prepare does:
// "\n", "\r\n" and a lone "\r" each end a line.
type cursor struct{ at pos }

// advance moves past the n bytes of the character at data[i].
func (c *cursor) advance(data []byte, i, n int) {
	switch data[i] {
	case '\n':
		c.at = pos{c.at.line + 1, 1}
		return
	case '\r':
		if i+1 == len(data) || data[i+1] != '\n' {
			c.at = pos{c.at.line + 1, 1}
			return
		}
	}
	c.at.col++
}

// checkShape scans data the way a YAML tokenizer would, just enough to
// count its elements and its nesting: flow collections ("[", "{" where a node starts, any of
// them inside a flow collection), and block collections (each deeper
// indentation, and each "- " or "? " indicator that opens a node on the
// same line). Quoted scalars, comments and block scalars (| and >) are
// skipped, so that brackets in text do not count. The count can be a
// little high (a plain scalar continued on a more indented line counts as
// a level) but never lower than the parser's nesting, which is what the
// bound is about. It returns where the nesting first exceeds maxDepth,
// or the elements maxElements.
func checkShape(data []byte) (pos, shape) {
	var (
		elements int
		c        = cursor{at: pos{1, 1}}
		flow     int   // open flow collections
		stack    []int // columns of the open block collections
		// quote is the quote character of the quoted scalar being
		// skipped, which may continue on later lines.
		quote byte
		// blockScalar is the indentation a line must exceed to be
		// part of the block scalar being skipped; -1 when none.
		blockScalar = -1
	)
	stackBuf := [maxDepth + 2]int{}
	stack = stackBuf[:0]
	for i := 0; i < len(data); {
		// A line starts at data[i].
		lineStart := i
		indent := 0
		for i < len(data) && data[i] == ' ' {
			i++
			indent++
		}
		blank := i == len(data) || data[i] == '\n' || data[i] == '\r' || data[i] == '#'
		c.at.col = indent + 1
		if blockScalar >= 0 && (blank || indent > blockScalar) {
			i = skipLine(data, i, &c)
			continue
		}
		blockScalar = -1
		atStart := true // a node may start here
		if !blank {
			if elements++; elements > maxElements {
				return c.at, tooMany
			}
		}
		if quote == 0 && flow == 0 && !blank {
			// A block line: its indentation closes the deeper
			// collections and may open one.
			for len(stack) > 0 && stack[len(stack)-1] > indent {
				stack = stack[:len(stack)-1]
			}
			if len(stack) == 0 || stack[len(stack)-1] < indent {
				if len(stack) == maxDepth {
					return c.at, tooDeep
				}
				stack = append(stack, indent)
			}
		}
		for i < len(data) && data[i] != '\n' && data[i] != '\r' {
			b := data[i]
			if quote == 0 && strings.IndexByte("[]{},:-?&!*", b) >= 0 {
				// A piece of syntax, or a character of a plain
				// scalar: counting both keeps this simple and
				// errs high only on text full of punctuation.
				if elements++; elements > maxElements {
					return c.at, tooMany
				}
			}
			switch {
			case quote != 0:
				if b == quote {
					if quote == '\'' && i+1 < len(data) && data[i+1] == '\'' {
						c.step(data, &i) // '' is an escaped quote
					} else {
						quote = 0
						atStart = false
					}
				} else if b == '\\' && quote == '"' && i+1 < len(data) && data[i+1] != '\n' && data[i+1] != '\r' {
					c.step(data, &i) // skip the escaped character
				}
			case b == '#' && (i == lineStart || data[i-1] == ' ' || data[i-1] == '\t'):
				i = lineEnd(data, i, &c)
				continue
			case b == ' ' || b == '\t':
			case (b == '"' || b == '\'') && atStart:
				quote = b
			case (b == '[' || b == '{') && (atStart || flow > 0):
				if flow+len(stack) >= maxDepth {
					return c.at, tooDeep
				}
				flow++
				atStart = true
			case (b == ']' || b == '}') && flow > 0:
				flow--
				atStart = false
			case b == ',' && flow > 0:
				atStart = true
			case (b == '-' || b == '?' || b == ':') && (i+1 == len(data) || isBlank(data[i+1])):
				if b == ':' {
					atStart = true // a value follows
					break
				}
				if col := c.at.col - 1; flow == 0 && atStart && (len(stack) == 0 || stack[len(stack)-1] < col) {
					// "- - x": an indicator further right than
					// the line's indentation opens a collection
					// in its column.
					if len(stack) == maxDepth {
						return c.at, tooDeep
					}
					stack = append(stack, col)
				}
			case (b == '|' || b == '>') && atStart && flow == 0:
				blockScalar = indent
				i = lineEnd(data, i, &c)
				continue
			case (b == '&' || b == '!' || b == '*') && atStart:
				// An anchor, tag or alias: its name, then maybe
				// the node it belongs to.
				c.step(data, &i)
				for i < len(data) && !isBlank(data[i]) && data[i] != ',' && data[i] != ']' && data[i] != '}' {
					c.step(data, &i)
				}
				continue
			default:
				atStart = false
			}
			c.step(data, &i)
		}
		if i < len(data) {
			c.step(data, &i) // the line break
		}
	}
	return pos{}, shapeOK
}

// step moves past the character at data[*i] on the current line.
func (c *cursor) step(data []byte, i *int) {
	_, n := utf8.DecodeRune(data[*i:])
	c.advance(data, *i, n)
	*i += n
}

// lineEnd moves to the end of the line, before its line break.
func lineEnd(data []byte, i int, c *cursor) int {
	for i < len(data) && data[i] != '\n' && data[i] != '\r' {
		c.step(data, &i)
	}
	return i
}

// skipLine moves to the start of the next line.
func skipLine(data []byte, i int, c *cursor) int {
	i = lineEnd(data, i, c)
	if i < len(data) {
		c.step(data, &i)
	}
	return i
}

func isBlank(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }
