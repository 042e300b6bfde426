package termsafe

import (
	"strings"
	"testing"
)

func TestString(t *testing.T) {
	for _, c := range []struct{ in, text, line string }{
		{"plain name", "plain name", "plain name"},
		{"evil\x1b[2J\x1b[Hname", `evil\x1b[2J\x1b[Hname`, `evil\x1b[2J\x1b[Hname`},
		{"bell\a", `bell\a`, `bell\a`},
		{"csi\u009b31m red", `csi\u009b31m red`, `csi\u009b31m red`},
		{"osc\x1b]52;c;aGk=\a", `osc\x1b]52;c;aGk=\a`, `osc\x1b]52;c;aGk=\a`},
		{"over\rwrite", `over\rwrite`, `over\rwrite`},
		{"del\x7f nul\x00", `del\x7f nul\x00`, `del\x7f nul\x00`},
		{"two\nlines\tand tab", "two\nlines\tand tab", `two\nlines\tand tab`},
		{"héllo ✓ 日本", "héllo ✓ 日本", "héllo ✓ 日本"},
		{"split \xe6\x97", "split \xe6\x97", "split \xe6\x97"}, // half a character: left
	} {
		if got := String(c.in); got != c.text {
			t.Errorf("String(%q) = %q, want %q", c.in, got, c.text)
		}
		if got := Line(c.in); got != c.line {
			t.Errorf("Line(%q) = %q, want %q", c.in, got, c.line)
		}
		for _, got := range []string{String(c.in), Line(c.in)} {
			if strings.ContainsAny(got, "\x1b\a\r\x7f\x00\u009b") {
				t.Errorf("%q: a control character is left in %q", c.in, got)
			}
		}
	}
}

func BenchmarkStringClean(b *testing.B) {
	s := strings.Repeat("an ordinary line of a reply, nothing to escape\n", 1000)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		String(s)
	}
}
