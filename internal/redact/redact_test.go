package redact

import (
	"encoding/base64"
	"encoding/hex"
	"math/rand/v2"
	"net/url"
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
		// 7 bytes is not enough to tell; 8 leading bytes of a long key go anywhere.
		{"key " + key[:7], "key " + key[:7]},
		{key[:12] + " then more", "[redacted] then more"},
		{"bad key " + key[:8] + "… (34 chars)", "bad key [redacted]… (34 chars)"},
		{"x" + key[1:20] + " y", "x" + key[1:20] + " y"}, // not its start: not a prefix
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
	if strings.Contains(got, key[:MinPrefix]) || !strings.Contains(got, Mark) {
		t.Errorf("Clip = %q", got)
	}
	// Cuts fall on a character boundary.
	if got := Clip("ééé", 3); got != "é…" {
		t.Errorf("Clip(ééé, 3) = %q", got)
	}
}

// TestStringEncodings checks that a secret is removed in each form a server
// may echo it in, and that nothing of it is left in that form.
func TestStringEncodings(t *testing.T) {
	const odd = "p@ss/w0rd+with=odd&chars?~" // every URL escape differs from it
	basic := base64.StdEncoding.EncodeToString([]byte("pi:" + odd))
	for _, c := range []struct{ name, secret, form string }{
		{"base64", key, base64.StdEncoding.EncodeToString([]byte(key))},
		{"base64 raw", key, base64.RawStdEncoding.EncodeToString([]byte(key))},
		{"base64 url", odd, base64.URLEncoding.EncodeToString([]byte(odd))},
		{"base64 url raw", odd, base64.RawURLEncoding.EncodeToString([]byte(odd))},
		{"query escape", odd, url.QueryEscape(odd)},
		{"path escape", odd, url.PathEscape(odd)},
		{"hex", key, hex.EncodeToString([]byte(key))},
		{"HEX", key, strings.ToUpper(hex.EncodeToString([]byte(key)))},
		{"inside a Basic header", odd, basic},
		{"prefix", key, key[:10]},
		{"prefix of the base64", key, base64.StdEncoding.EncodeToString([]byte(key))[:20]},
	} {
		in := "server said: " + c.form + " (echoed)"
		got := String(in, c.secret)
		if !strings.Contains(got, Mark) || strings.Contains(got, c.form[:min(len(c.form), 12)]) {
			t.Errorf("%s: String(%q) = %q", c.name, in, got)
		}
		if !strings.HasPrefix(got, "server said: ") || !strings.HasSuffix(got, " (echoed)") {
			t.Errorf("%s: the text around the secret changed: %q", c.name, got)
		}
	}
	// Short secrets keep to the whole secret: no encodings of 3 bytes, no prefixes.
	if got := String("YWJj abcdef", "abc"); got != "YWJj abcdef" {
		t.Errorf("a 3-byte secret's forms were removed: %q", got)
	}
}

// secretsText is 64 KiB of log-like text with 5 secrets of 40 bytes, each
// echoed once whole, once in base64 and once as a prefix.
func secretsText() (string, []string) {
	r := rand.New(rand.NewPCG(1, 2))
	const chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	var secrets []string
	for range 5 {
		b := make([]byte, 40)
		for i := range b {
			b[i] = chars[r.IntN(len(chars))]
		}
		secrets = append(secrets, string(b))
	}
	var sb strings.Builder
	for i := 0; sb.Len() < 64<<10; i++ {
		sb.WriteString("2026-11-27T04:10:27Z INFO request done status=200 path=/v1/chat/completions bytes=1234\n")
		if i%50 == 0 {
			k := secrets[(i/50)%5]
			sb.WriteString("echo " + k + " b64 " + base64.StdEncoding.EncodeToString([]byte(k)) + " lead " + k[:12] + "\n")
		}
	}
	return sb.String(), secrets
}

func TestSecretsTextRedacted(t *testing.T) {
	text, secrets := secretsText()
	got := String(text, secrets...)
	for _, k := range secrets {
		if strings.Contains(got, k[:MinPrefix]) || strings.Contains(got, base64.RawStdEncoding.EncodeToString([]byte(k))[:12]) {
			t.Fatalf("a secret is left in the text")
		}
	}
}

// BenchmarkString redacts 64 KiB of text with 5 secrets.
func BenchmarkString(b *testing.B) {
	text, secrets := secretsText()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		String(text, secrets...)
	}
}
