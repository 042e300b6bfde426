package grammar

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// CanonicalJSON encodes c in the one shape `clawedge parse` prints and other programs
// read: keys in a fixed order, no whitespace, params as a list (order matters to tools
// that log them). Only values built in code can fail: NaN, infinities, a zero Kind.
func CanonicalJSON(c *Command) ([]byte, error) {
	if c == nil {
		return []byte("null"), nil
	}
	b := make([]byte, 0, 256)
	b = append(b, `{"stages":[`...)
	for i, st := range c.Stages {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"parallel":`...)
		b = strconv.AppendBool(b, st.Parallel)
		b = append(b, `,"calls":[`...)
		for j, call := range st.Calls {
			if j > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"tool":`...)
			b = appendJSONString(b, call.Tool())
			b = append(b, `,"namespace":`...)
			b = appendJSONString(b, call.Namespace)
			b = append(b, `,"name":`...)
			b = appendJSONString(b, call.Name)
			b = append(b, `,"line":`...)
			b = strconv.AppendInt(b, int64(call.Pos.Line), 10)
			b = append(b, `,"column":`...)
			b = strconv.AppendInt(b, int64(call.Pos.Column), 10)
			b = append(b, `,"params":[`...)
			for k, prm := range call.Params {
				if k > 0 {
					b = append(b, ',')
				}
				b = append(b, `{"key":`...)
				b = appendJSONString(b, prm.Key)
				b = append(b, `,"value":`...)
				var err error
				if b, err = appendJSONValue(b, prm.Value, 0); err != nil {
					return nil, fmt.Errorf("param %q of %q: %w", prm.Key, call.Tool(), err)
				}
				b = append(b, '}')
			}
			b = append(b, "]}"...)
		}
		b = append(b, "]}"...)
	}
	b = append(b, "]}"...)
	return b, nil
}

// MarshalJSON makes encoding/json produce the canonical shape for a Command.
func (c Command) MarshalJSON() ([]byte, error) { return CanonicalJSON(&c) }

// maxValueDepth stops a cyclic or absurdly deep value built in code; parsed values
// are at most MaxArrayDepth deep.
const maxValueDepth = 1000

func appendJSONValue(b []byte, v Value, depth int) ([]byte, error) {
	switch v.Kind {
	case String:
		b = append(b, `{"type":"string","value":`...)
		b = appendJSONString(b, v.Str)
	case Int:
		b = append(b, `{"type":"integer","value":`...)
		b = strconv.AppendInt(b, v.Int, 10)
	case Float:
		// encoding/json's float format, and its refusal of NaN and infinities.
		f, err := json.Marshal(v.Float)
		if err != nil {
			return b, err
		}
		b = append(b, `{"type":"number","value":`...)
		b = append(b, f...)
	case Bool:
		b = append(b, `{"type":"boolean","value":`...)
		b = strconv.AppendBool(b, v.Bool)
	case Array:
		if depth >= maxValueDepth {
			return b, fmt.Errorf("arrays nested deeper than %d", maxValueDepth)
		}
		b = append(b, `{"type":"array","items":[`...)
		for i, item := range v.Items {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendJSONValue(b, item, depth+1); err != nil {
				return b, err
			}
		}
		b = append(b, ']')
	case Ref:
		b = append(b, `{"type":"reference","scope":`...)
		b = appendJSONString(b, v.Ref.Scope)
		b = append(b, `,"name":`...)
		b = appendJSONString(b, v.Ref.Name)
	default:
		return b, fmt.Errorf("value has no kind (Kind %d)", int(v.Kind))
	}
	return append(b, '}'), nil
}

// appendJSONString quotes like encoding/json but without its HTML escaping of < > &,
// which would only make printed commands harder to read.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, `\n`...)
			case c == '\r':
				b = append(b, `\r`...)
			case c == '\t':
				b = append(b, `\t`...)
			case c == '\b':
				b = append(b, `\b`...)
			case c == '\f':
				b = append(b, `\f`...)
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			// Valid JSON, but not valid JavaScript before ES2019; encoding/json escapes them too.
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

// String returns the canonical text of c: no whitespace, double-quoted strings,
// decimal integers, true/false. Parse(c.String()) gives back c (positions aside)
// for every parsed command, as long as the text stays within MaxInputBytes: the
// canonical form can be a little longer than the input ("yes" becomes "true").
func (c Command) String() string {
	var b strings.Builder
	for i, st := range c.Stages {
		if i > 0 {
			b.WriteString("->")
		}
		st.write(&b)
	}
	return b.String()
}

func (s Stage) String() string {
	var b strings.Builder
	s.write(&b)
	return b.String()
}

func (s Stage) write(b *strings.Builder) {
	if s.Parallel {
		b.WriteByte('[')
	}
	for i, call := range s.Calls {
		if i > 0 {
			b.WriteByte(',')
		}
		call.write(b)
	}
	if s.Parallel {
		b.WriteByte(']')
	}
}

func (c Invoke) String() string {
	var b strings.Builder
	c.write(&b)
	return b.String()
}

func (c Invoke) write(b *strings.Builder) {
	b.WriteByte('@')
	b.WriteString(c.Tool())
	b.WriteByte('{')
	for i, p := range c.Params {
		if i > 0 {
			b.WriteByte(';')
		}
		b.WriteString(p.Key)
		b.WriteByte('=')
		p.Value.write(b, 0)
	}
	b.WriteByte('}')
}

// String returns the value as command text.
func (v Value) String() string {
	var b strings.Builder
	v.write(&b, 0)
	return b.String()
}

func (v Value) write(b *strings.Builder, depth int) {
	switch v.Kind {
	case String:
		writeQuoted(b, v.Str)
	case Int:
		b.WriteString(strconv.FormatInt(v.Int, 10))
	case Float:
		b.WriteString(formatFloat(v.Float))
	case Bool:
		b.WriteString(strconv.FormatBool(v.Bool))
	case Array:
		if depth >= maxValueDepth {
			b.WriteString("(...)")
			return
		}
		b.WriteByte('(')
		for i, item := range v.Items {
			if i > 0 {
				b.WriteByte(',')
			}
			item.write(b, depth+1)
		}
		b.WriteByte(')')
	case Ref:
		b.WriteByte('$')
		b.WriteString(v.Ref.Scope)
		b.WriteByte('.')
		b.WriteString(v.Ref.Name)
	default:
		b.WriteString("<invalid>")
	}
}

// formatFloat writes the shortest text that parses back to f, always in the
// language's float form (digits "." digits, then an optional exponent) so that it
// reads back as a float, not an integer.
func formatFloat(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return strconv.FormatFloat(f, 'g', -1, 64) // not expressible; shown as is
	}
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if strings.IndexByte(s, '.') >= 0 {
		return s
	}
	if e := strings.IndexByte(s, 'e'); e >= 0 {
		return s[:e] + ".0" + s[e:]
	}
	return s + ".0"
}

func writeQuoted(b *strings.Builder, s string) {
	const hex = "0123456789ABCDEF"
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				b.WriteString(`\u{FFFD}`) // strings built in code may hold bytes the language cannot
			} else {
				b.WriteString(s[i : i+size])
			}
			i += size
			continue
		}
		switch c {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		case '\r':
			b.WriteString(`\r`)
		case 0:
			b.WriteString(`\0`)
		default:
			if c < 0x20 || c == 0x7F {
				b.WriteString(`\x`)
				b.WriteByte(hex[c>>4])
				b.WriteByte(hex[c&0xF])
			} else {
				b.WriteByte(c)
			}
		}
		i++
	}
	b.WriteByte('"')
}
