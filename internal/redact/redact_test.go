package redact

import (
	"strings"
	"testing"
)

const key = "sk-abcdefghijklmnopqrstuvwxyz0123456" // 34 characters, like the issue's

func TestString(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"no secret here", "no secret here"},
		{"key " + key + " echoed twice " + key, "key [redacted] echoed twice [redacted]"},
		// Cut elsewhere: a prefix of 8+ bytes ending the text or before "…" goes.
		{"key " + key[:33], "key [redacted]"},
		{"key " + key[:8], "key [redacted]"},
		{"header \"" + key[:20] + "…\" bad", "header \"[redacted]…\" bad"},
		// 7 bytes is not enough to tell, and a prefix in the middle of the text is not at a cut.
		{"key " + key[:7], "key " + key[:7]},
		{key[:12] + " then more", key[:12] + " then more"},
		{"", ""},
	} {
		if got := String(c.in, key); got != c.want {
			t.Errorf("String(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	// Short secrets are ignored rather than blanking words; no secrets: unchanged.
	if got := String("abc abc", "abc"); got != "abc abc" {
		t.Errorf("short secret replaced: %q", got)
	}
	if got := String("x " + key); got != "x "+key {
		t.Errorf("no secrets: %q", got)
	}
}

// TestClipRedactsFirst is issue 11 item 2: a key echoed across the cut must not
// leave its first 33 characters in the message.
func TestClipRedactsFirst(t *testing.T) {
	for cut := 0; cut <= len(key)+10; cut++ {
		msg := strings.Repeat("x", 490-cut) + " " + key + " tail"
		got := Clip(msg, 500, key)
		for n := MinPrefix; n <= len(key); n++ {
			if strings.Contains(got, key[:n]) {
				t.Fatalf("cut %d: %q holds %d bytes of the key", cut, got[len(got)-60:], n)
			}
		}
		if len(got) > 500+len(Ellipsis) {
			t.Fatalf("cut %d: %d bytes", cut, len(got))
		}
	}
	// A partial echo that the cut turns into a trailing prefix goes too.
	got := Clip("0123456789 "+key[:20]+" and more", 25, key)
	if strings.Contains(got, key[:MinPrefix]) || !strings.HasSuffix(got, Mark+Ellipsis) {
		t.Errorf("Clip = %q", got)
	}
	// Cuts fall on a character boundary.
	if got := Clip("ééé", 3); got != "é…" {
		t.Errorf("Clip(ééé, 3) = %q", got)
	}
}
