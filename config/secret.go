package config

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// redacted is what a Secret prints instead of its value.
const redacted = "[redacted]"

// Secret is a string that must never reach a log, an error message or a
// dump of the configuration (the Telegram bot token, API keys). Every way
// Go prints or encodes a value — fmt verbs including %#v, JSON, YAML,
// text encoders, log/slog — yields "[redacted]" ("" when empty, so that
// "is it set?" stays visible). Only Reveal gives the value, which makes
// each use greppable.
type Secret string

// Reveal returns the secret value, for the code that sends it to its
// service and for nothing else.
func (s Secret) Reveal() string { return string(s) }

// String returns "[redacted]", or "" when the secret is empty.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return redacted
}

// Format implements fmt.Formatter so that every verb — %v, %s, %q, %x,
// %#v, even a wrong one like %d — formats the redacted form rather than
// the underlying string.
func (s Secret) Format(f fmt.State, verb rune) {
	fmt.Fprintf(f, fmt.FormatString(f, verb), s.String())
}

// GoString keeps %#v redacted for callers that use GoStringer directly.
func (s Secret) GoString() string { return strconv.Quote(s.String()) }

// MarshalJSON writes the redacted form.
func (s Secret) MarshalJSON() ([]byte, error) { return json.Marshal(s.String()) }

// MarshalText writes the redacted form, for encoders that prefer
// encoding.TextMarshaler (slog's text handler, map keys).
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// MarshalYAML writes the redacted form.
func (s Secret) MarshalYAML() (any, error) { return s.String(), nil }

// LogValue implements slog.LogValuer.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// minScrub is the shortest secret value scrub removes from messages:
// removing every "a" from an error message would make it unreadable and
// protects nothing, since a secret that short protects nothing either.
const minScrub = 4

// scrub replaces every occurrence of the secret values in msg.
func scrub(msg string, secrets []string) string {
	// Longest first, so that a secret containing another is removed whole.
	secrets = slices.Clone(secrets)
	slices.SortFunc(secrets, func(a, b string) int { return len(b) - len(a) })
	for _, s := range secrets {
		if len(s) >= minScrub {
			msg = strings.ReplaceAll(msg, s, redacted)
		}
	}
	return msg
}

// Redacted returns the effective configuration as YAML with every secret
// replaced by "[redacted]". `clawedge config check` and `clawedge doctor`
// print it so that a user can see what the defaults and ${VAR} expansion
// made of their file, and paste it into a bug report safely.
//
// The output parses back to the same configuration (with the secrets
// supplied again): it is written by hand rather than by a generic
// marshaller so that it uses exactly the keys Parse accepts, writes every
// "$" as "$$" so that no value is expanded twice, and quotes every string
// a YAML resolver could take for something else.
func (c *Config) Redacted() ([]byte, error) {
	return c.redacted(true), nil
}

// redacted writes the configuration. With scrubSecrets, a secret's value
// is also removed from the other fields: a token expanded into api_url
// ("https://host/bot${TELEGRAM_TOKEN}") must not be printed there either.
func (c *Config) redacted(scrubSecrets bool) []byte {
	var w writer
	if scrubSecrets {
		w.secrets = append(w.secrets, c.Telegram.secretValues()...)
		w.secrets = append(w.secrets, c.Models.secretValues()...)
		w.secrets = append(w.secrets, c.MQTT.secretValues()...)
		w.secrets = append(w.secrets, c.MCP.secretValues()...)
		w.secrets = append(w.secrets, c.Network.secretValues()...)
	}
	w.kv(0, "data_dir", w.str(c.DataDir))
	if len(c.Env) > 0 {
		w.key(0, "env")
		for _, e := range c.Env {
			w.item(1, w.str(e))
		}
	}

	c.writeBoard(&w)       // board.go
	c.writeConsole(&w)     // console.go
	c.writeTelegram(&w)    // telegram.go
	c.writeModels(&w)      // models.go
	c.writePolicy(&w)      // policy.go
	c.writeAutomations(&w) // automations.go
	c.writeMQTT(&w)        // mqtt.go
	c.writeMetrics(&w)     // metrics.go
	c.writeWeb(&w)         // web.go
	c.writeBoards(&w)      // boards.go
	c.writeStore(&w)       // store.go
	c.writeUpdate(&w)      // update.go
	c.writeExec(&w)        // exec.go
	c.writeSecrets(&w)     // secrets.go
	c.writeMCP(&w)         // mcp.go
	c.writeNetwork(&w)     // network.go
	c.writeMemory(&w)      // memory.go
	c.writeGoals(&w)       // goals.go
	c.writeSkills(&w)      // skills.go
	return []byte(w.String())
}

// formatNumber writes a number in plain decimal ("0.003", never
// "3e-03"), which every YAML resolver reads back as the same number.
func formatNumber(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// writer builds block-style YAML indented by two spaces per level.
type writer struct {
	strings.Builder
	secrets []string
}

// str writes a string value, without secrets.
func (w *writer) str(s string) string { return yamlString(scrub(s, w.secrets)) }

func (w *writer) line(level int, s string) {
	w.WriteString(strings.Repeat("  ", level))
	w.WriteString(s)
	w.WriteByte('\n')
}

func (w *writer) key(level int, k string)   { w.line(level, k+":") }
func (w *writer) kv(level int, k, v string) { w.line(level, k+": "+v) }
func (w *writer) item(level int, v string)  { w.line(level, "- "+v) }
func (w *writer) kvOmit(level int, k, v string) {
	if v != "" {
		w.kv(level, k, w.str(v))
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// yamlString writes s as a YAML scalar that parses back to s: "$" doubled
// (Parse expands ${VAR} and $$), plain when that is unambiguous, double
// quoted otherwise.
func yamlString(s string) string {
	s = strings.ReplaceAll(s, "$", "$$")
	if plainSafe(s) {
		return s
	}
	return doubleQuote(s)
}

// yamlKey writes a map key (a pin, port or bus name). Keys are not
// expanded, so "$" stays as it is.
func yamlKey(s string) string {
	if plainSafe(s) {
		return s
	}
	return doubleQuote(s)
}

// reserved are the plain scalars that YAML 1.1 or 1.2 resolvers read as
// booleans, nulls or special floats.
var reserved = map[string]bool{
	"true": true, "false": true, "yes": true, "no": true, "on": true, "off": true,
	"y": true, "n": true, "null": true, "nan": true, "inf": true,
}

// plainSafe reports whether s can be written without quotes: a
// conservative character set (paths, URLs, names, model tags) that starts
// with a letter, "_" or "/" (or "./", "../") so that it can never be read
// as a number, a date, an indicator or a reserved word.
func plainSafe(s string) bool {
	if s == "" || reserved[strings.ToLower(s)] || strings.HasSuffix(s, ":") {
		return false
	}
	switch {
	case strings.HasPrefix(s, "./"), strings.HasPrefix(s, "../"):
	case s[0] == '/' || s[0] == '_' || ('a' <= s[0] && s[0] <= 'z') || ('A' <= s[0] && s[0] <= 'Z'):
	default:
		return false
	}
	for _, r := range s {
		switch {
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9':
		case strings.ContainsRune("_./:@+=~-", r):
		default:
			return false
		}
	}
	return true
}

// doubleQuote writes a YAML double-quoted scalar. Printable characters
// go as they are; everything else is escaped with YAML's \x, \u and \U
// escapes (which, unlike Go's, denote code points), so control and
// line-separator characters cannot change the document's structure.
func doubleQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r != utf8.RuneError && unicode.IsPrint(r):
			b.WriteRune(r)
		case r < 0x100:
			fmt.Fprintf(&b, `\x%02X`, r)
		case r < 0x10000:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			fmt.Fprintf(&b, `\U%08X`, r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
