package chat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// pyJSON writes raw JSON the way the templates' tojson filter does (Python's
// json.dumps with ensure_ascii=False): ", " and ": " separators, keys in the
// order given, non-ASCII characters as they are. Models were trained on this
// spelling, so the tool list and past calls must use it exactly.
func pyJSON(raw []byte) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var b strings.Builder
	if err := pyValue(dec, &b); err != nil {
		return "", err
	}
	if _, err := dec.Token(); err != io.EOF {
		return "", fmt.Errorf("invalid JSON: data after the value")
	}
	return b.String(), nil
}

func pyValue(dec *json.Decoder, b *strings.Builder) error {
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("invalid JSON: %v", err)
	}
	switch t := tok.(type) {
	case json.Delim:
		open, close := t, json.Delim('}')
		if open == '[' {
			close = ']'
		}
		b.WriteRune(rune(open))
		for i := 0; dec.More(); i++ {
			if i > 0 {
				b.WriteString(", ")
			}
			if open == '{' {
				key, err := dec.Token()
				if err != nil {
					return fmt.Errorf("invalid JSON: %v", err)
				}
				pyString(b, key.(string))
				b.WriteString(": ")
			}
			if err := pyValue(dec, b); err != nil {
				return err
			}
		}
		if end, err := dec.Token(); err != nil || end != close {
			return fmt.Errorf("invalid JSON: unterminated %c", open)
		}
		b.WriteRune(rune(close))
	case string:
		pyString(b, t)
	case json.Number:
		b.WriteString(t.String())
	case bool:
		fmt.Fprint(b, t)
	case nil:
		b.WriteString("null")
	}
	return nil
}

// pyString quotes s as json.dumps(ensure_ascii=False) does.
func pyString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case utf8.RuneError:
			b.WriteRune(r)
		default:
			if r < 0x20 {
				fmt.Fprintf(b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
}
