package llm

import (
	"strings"

	"github.com/clawedge/clawedge/grammar"
)

// Tool names on the wire. clawedge names tools by namespace and tool,
// "gpio/write", but the remote APIs accept only ^[a-zA-Z0-9_-]{1,64}$ as a
// function name. WireName maps any name into that alphabet and SpecName maps
// it back, so that a call a remote model makes names the tool it was shown:
//
//	letters, digits, '-'   themselves
//	'/'                    "__"                   gpio/write -> gpio__write
//	'_' before [A-Za-z0-9] '_'                    read_pin   -> read_pin
//	any other '_'          "_-5f"                 a__b       -> a_-5f_b
//	any other byte         "_-" and two hex digits gpio.write -> gpio_-2ewrite
//
// The mapping is reversible: SpecName(WireName(s)) == s for every string.
// Names are not shortened: a provider refuses a tool whose wire name is too
// long for its API, naming it, rather than sending a name it cannot map back.

// WireName is name in the alphabet of remote function names.
func WireName(name string) string {
	if isPlainWire(name) {
		return name
	}
	var b strings.Builder
	b.Grow(len(name) + 8)
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case isAlnum(c) || c == '-':
			b.WriteByte(c)
		case c == '/':
			b.WriteString("__")
		case c == '_' && i+1 < len(name) && isAlnum(name[i+1]):
			b.WriteByte('_')
		default:
			const hex = "0123456789abcdef"
			b.WriteString("_-")
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
	return b.String()
}

// SpecName is the name WireName(name) came from. A wire name WireName cannot
// have produced (a model's invention) comes back unchanged, for the caller's
// unknown-tool error to quote. Every name has exactly one wire name.
func SpecName(wire string) string {
	if !strings.Contains(wire, "_") {
		return wire
	}
	var b strings.Builder
	b.Grow(len(wire))
	for i := 0; i < len(wire); i++ {
		c := wire[i]
		switch {
		case isAlnum(c) || c == '-':
			b.WriteByte(c)
		case c != '_' || i+1 >= len(wire):
			return wire
		case wire[i+1] == '_':
			b.WriteByte('/')
			i++
		case isAlnum(wire[i+1]):
			b.WriteByte('_')
		case wire[i+1] == '-' && i+3 < len(wire) && isLowerHex(wire[i+2]) && isLowerHex(wire[i+3]):
			// Only the escape WireName writes: never for a byte it writes
			// as itself, so that every name has one wire name.
			e := unhex(wire[i+2])<<4 | unhex(wire[i+3])
			if isAlnum(e) || e == '-' || e == '/' || e == '_' && i+4 < len(wire) && isAlnum(wire[i+4]) {
				return wire
			}
			b.WriteByte(e)
			i += 3
		default:
			return wire
		}
	}
	return b.String()
}

// isPlainWire reports whether name maps to itself: letters, digits, '-', and
// '_' only before a letter or digit.
func isPlainWire(name string) bool {
	for i := 0; i < len(name); i++ {
		c := name[i]
		if isAlnum(c) || c == '-' {
			continue
		}
		if c != '_' || i+1 >= len(name) || !isAlnum(name[i+1]) {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

func isLowerHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' }

func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c - 'a' + 10
}

// WireSpec is spec with its tools under their wire names, the names a remote
// model is offered them under: a grammar or schema sent to a server must make
// the model write the name it was shown.
func WireSpec(spec grammar.Spec) grammar.Spec {
	tools := make([]grammar.ToolSpec, len(spec.Tools))
	for i, t := range spec.Tools {
		t.Name = WireName(t.Name)
		tools[i] = t
	}
	spec.Tools = tools
	return spec
}
