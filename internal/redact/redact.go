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
package redact

import (
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
	// Ellipsis is how a cut is marked (Clip adds it; the Telegram client
	// and the providers use it too).
	Ellipsis = "…"
)

// String returns s with every occurrence of every secret (of MinSecret bytes
// or more) replaced by Mark, and with any prefix of a secret of MinPrefix
// bytes or more replaced where it ends s or is followed by Ellipsis.
func String(s string, secrets ...string) string {
	for _, k := range secrets {
		if len(k) >= MinSecret && strings.Contains(s, k) {
			s = strings.ReplaceAll(s, k, Mark)
		}
	}
	for _, k := range secrets {
		if len(k) <= MinPrefix {
			continue // a whole secret: already gone
		}
		s = cutPrefixes(s, k)
	}
	return s
}

// cutPrefixes replaces the longest prefix of k (MinPrefix bytes or more,
// shorter than k) that ends at a cut: the end of s or an Ellipsis.
func cutPrefixes(s, k string) string {
	var b strings.Builder
	rest := s
	for {
		end := strings.Index(rest, Ellipsis)
		last := end < 0
		if last {
			end = len(rest)
		}
		head := rest[:end]
		for n := min(len(k)-1, len(head)); n >= MinPrefix; n-- {
			if strings.HasSuffix(head, k[:n]) {
				head = head[:len(head)-n] + Mark
				break
			}
		}
		b.WriteString(head)
		if last {
			return b.String()
		}
		b.WriteString(Ellipsis)
		rest = rest[end+len(Ellipsis):]
	}
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
