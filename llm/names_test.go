package llm

import (
	"regexp"
	"testing"
)

var wireAlphabet = regexp.MustCompile(`^[a-zA-Z0-9_-]*$`)

func TestWireName(t *testing.T) {
	for _, tc := range []struct{ spec, wire string }{
		{"gpio/write", "gpio__write"},
		{"i2c/read_reg", "i2c__read_reg"},
		{"sys/time", "sys__time"},
		{"plain-name", "plain-name"},
		{"a__b", "a_-5f_b"},
		{"a_", "a_-5f"},
		{"_a", "_a"},
		{"a_/b", "a_-5f__b"},
		{"a/_b", "a___b"},
		{"gpio.write", "gpio_-2ewrite"},
		{"home/x__book_room", "home__x_-5f_book_room"}, // an MCP tool named "__book_room" (tools.PlainName)
		{"é", "_-c3_-a9"},
		{"", ""},
	} {
		if got := WireName(tc.spec); got != tc.wire {
			t.Errorf("WireName(%q) = %q, want %q", tc.spec, got, tc.wire)
		}
		if got := SpecName(tc.wire); got != tc.spec {
			t.Errorf("SpecName(%q) = %q, want %q", tc.wire, got, tc.spec)
		}
	}
	// Names a model invents come back as they are.
	for _, w := range []string{"foo_", "foo_-zz", "foo_-2E", "a b", "x_.y", "_-5fa", "_-61", "_-2f"} {
		if got := SpecName(w); got != w {
			t.Errorf("SpecName(%q) = %q, want it unchanged", w, got)
		}
	}
}

func FuzzWireName(f *testing.F) {
	for _, s := range []string{"gpio/write", "a__b", "a_", "_-5f", "x/y/z", "é/\x00", "__", "_-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		w := WireName(s)
		if !wireAlphabet.MatchString(w) {
			t.Fatalf("WireName(%q) = %q: outside [a-zA-Z0-9_-]", s, w)
		}
		if back := SpecName(w); back != s {
			t.Fatalf("SpecName(WireName(%q)) = %q (wire %q)", s, back, w)
		}
		// Decoding anything never panics, and a decoded valid wire name encodes back.
		if d := SpecName(s); d != s && WireName(d) != s {
			t.Fatalf("SpecName(%q) = %q, whose wire name is %q", s, d, WireName(d))
		}
	})
}
