// Package redact removes secrets (API keys, bot tokens) from text that came
// from outside — a server's error body, a reason phrase, a reply — before it
// becomes a message someone can read: a chat reply, an error, a log line, the
// store.
//
// It is the one redaction function of clawedge: every path that turns
// outside text into a message calls String before cutting the text short
// (Clip does both), so a secret echoed across the cut cannot survive as a
// long prefix. Text that was already cut elsewhere (a read capped at N bytes,
// a clip ending in "…") is handled too: a secret's prefix of MinPrefix bytes
// or more that ends the text, or ends just before "…", is removed as well.
//
// A server may echo a secret in another form than it was sent: what a
// header carried in base64 (Basic auth), a URL's query escaped, a hex dump,
// or only the start of it (a key "sk-abcd1234…" in an error). So each
// secret is also removed in its standard and URL-safe base64 forms (padded
// or not, and where it starts at any byte of a longer base64 text), its URL
// escapes and its hex forms; and, for a secret of MinLeadSecret bytes or
// more, any run of MinPrefix or more of its leading bytes, wherever it is.
package redact

import (
	"cmp"
	"encoding/base64"
	"encoding/hex"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"
)

const (
	// Mark replaces what was removed.
	Mark = "[redacted]"
	// MinSecret is the shortest secret removed: shorter ones would blank
	// out ordinary words (and no real key is that short).
	MinSecret = 4
	// MinPrefix is the shortest prefix of a secret removed where the text
	// was cut: 8 bytes of a random key are not found in ordinary text by
	// chance, and fewer leave too little to guess the rest from.
	MinPrefix = 8
	// MinLeadSecret is the shortest secret whose leading MinPrefix bytes
	// are removed anywhere in the text: a real key is 16 bytes or more, and
	// half of a shorter secret would say too much of it to keep it whole.
	MinLeadSecret = 16
	// Ellipsis is how a cut is marked (Clip adds it; the Telegram client
	// and the providers use it too).
	Ellipsis = "…"
)

// String returns s with every occurrence of every secret (of MinSecret bytes
// or more) replaced by Mark, and with any prefix of a secret of MinPrefix
// bytes or more replaced where it ends s or is followed by Ellipsis.
//
// Every form of every secret (Forms) goes the same way: whole, and as a run
// of MinPrefix or more of its leading bytes when it has MinLeadSecret bytes
// or more.
func String(s string, secrets ...string) string {
	// Where each form is found in s, then s rebuilt once: replacing form
	// after form copied the text each time (64 KiB, 5 secrets: 1.6 MB).
	var spans []span
	for _, k := range secrets {
		if len(k) < MinSecret {
			continue
		}
		forms := Forms(k)
		for i, f := range forms {
			if len(f) < MinLeadSecret {
				spans = appendWhole(spans, s, f)
				continue
			}
			// The leading runs of f cover f whole, and those of a longer
			// form that begins with f (padded base64, raw, the aligned
			// part) cover f's: one scan for them all.
			if !coveredBy(f, forms[:i]) {
				spans = appendLeading(spans, s, f)
			}
		}
	}
	s = replaceSpans(s, spans)
	for _, k := range secrets {
		if len(k) <= MinPrefix {
			continue // a whole secret: already gone
		}
		s = cutPrefixes(s, k)
	}
	return s
}

// span is a part of a text to replace: [from, to).
type span struct{ from, to int }

// appendWhole adds every occurrence of f in s.
func appendWhole(spans []span, s, f string) []span {
	for at := 0; ; {
		i := strings.Index(s[at:], f)
		if i < 0 {
			return spans
		}
		spans = append(spans, span{at + i, at + i + len(f)})
		at += i + len(f)
	}
}

// appendLeading adds every run of MinPrefix or more leading bytes of f in
// s, the longest at each place.
func appendLeading(spans []span, s, f string) []span {
	lead := f[:MinPrefix]
	for at := 0; ; {
		i := strings.Index(s[at:], lead)
		if i < 0 {
			return spans
		}
		i += at
		n := MinPrefix
		for n < len(f) && i+n < len(s) && s[i+n] == f[n] {
			n++
		}
		spans = append(spans, span{i, i + n})
		at = i + n
	}
}

// replaceSpans replaces each span of s, overlapping ones as one, with Mark.
func replaceSpans(s string, spans []span) string {
	if len(spans) == 0 {
		return s
	}
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.from, b.from) })
	var b strings.Builder
	b.Grow(len(s))
	at := 0
	for i := 0; i < len(spans); {
		from, to := spans[i].from, spans[i].to
		for i++; i < len(spans) && spans[i].from <= to; i++ {
			to = max(to, spans[i].to)
		}
		b.WriteString(s[at:from])
		b.WriteString(Mark)
		at = to
	}
	b.WriteString(s[at:])
	return b.String()
}

// Forms are the ways a secret k may be written back: itself, its standard
// and URL-safe base64 (padded and not), its URL escapes, its hex in both
// cases, and, for a secret of MinPrefix bytes or more, the part of its
// base64 that does not depend on its neighbours when it starts at the 2nd
// or 3rd byte of a base64 group ("user:key" in a Basic header). Each form is
// listed once; the longest come first, so a shorter one (unpadded base64)
// does not leave the rest of a longer one behind.
func Forms(k string) []string {
	out := []string{k}
	add := func(f string) {
		if len(f) < MinSecret {
			return
		}
		for _, g := range out {
			if g == f {
				return
			}
		}
		out = append(out, f)
	}
	b := []byte(k)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		add(enc.EncodeToString(b))
	}
	add(url.QueryEscape(k))
	add(url.PathEscape(k))
	add(hex.EncodeToString(b))
	add(strings.ToUpper(hex.EncodeToString(b)))
	if len(k) >= MinPrefix {
		for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
			for o := 0; o < 3; o++ {
				// Character i of the encoding holds bits [6i, 6i+6); the
				// ones wholly inside k's bits [8o, 8(o+len k)) are k's own.
				e := enc.EncodeToString(append(make([]byte, o), b...))
				add(e[(8*o+5)/6 : 8*(o+len(k))/6])
			}
		}
	}
	return out
}

// coveredBy reports whether one of forms begins with f.
func coveredBy(f string, forms []string) bool {
	for _, g := range forms {
		if len(g) >= MinLeadSecret && strings.HasPrefix(g, f) {
			return true
		}
	}
	return false
}

// cutPrefixes replaces the longest prefix of k (MinPrefix bytes or more,
// shorter than k) that ends at a cut: the end of s or an Ellipsis.
func cutPrefixes(s, k string) string {
	if !strings.Contains(s, Ellipsis) { // the common case: no copy of s
		return cutTail(s, k)
	}
	var b strings.Builder
	rest := s
	for {
		end := strings.Index(rest, Ellipsis)
		last := end < 0
		if last {
			end = len(rest)
		}
		b.WriteString(cutTail(rest[:end], k))
		if last {
			return b.String()
		}
		b.WriteString(Ellipsis)
		rest = rest[end+len(Ellipsis):]
	}
}

// cutTail replaces the longest prefix of k (MinPrefix bytes or more,
// shorter than k) that ends s.
func cutTail(s, k string) string {
	for n := min(len(k)-1, len(s)); n >= MinPrefix; n-- {
		if strings.HasSuffix(s, k[:n]) {
			return s[:len(s)-n] + Mark
		}
	}
	return s
}

// Clip redacts s, then cuts it to at most max bytes (on a character
// boundary) and marks the cut with Ellipsis. The cut text is redacted again:
// a prefix of a secret that the cut made the end of the text goes too.
func Clip(s string, max int, secrets ...string) string {
	s = String(s, secrets...)
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return String(s[:cut]+Ellipsis, secrets...)
}
