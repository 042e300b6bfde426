package grammar

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// FuzzParse checks the promises Parse makes for any input: no panic, a located
// *SyntaxError on failure, and on success a canonical text and JSON that hold up.
// Seeds live in testdata/fuzz/FuzzParse; the tables add more.
func FuzzParse(f *testing.F) {
	for _, tc := range validCases() {
		if len(tc.src) < 4096 {
			f.Add(tc.src)
		}
	}
	for _, tc := range errCases() {
		if len(tc.src) < 4096 {
			f.Add(tc.src)
		}
	}
	f.Fuzz(func(t *testing.T, src string) {
		c, err := Parse(src, ParseOptions{})
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("error is %T, want *SyntaxError: %v", err, err)
			}
			lines := strings.Count(src, "\n") + 1
			if se.Line < 1 || se.Column < 1 || se.Line > lines+1 {
				t.Fatalf("error at %d:%d, input has %d lines: %v", se.Line, se.Column, lines, err)
			}
			if se.Msg == "" || strings.Contains(se.SourceLine, "\n") {
				t.Fatalf("bad error %#v", se)
			}
			_ = se.Caret()
			return
		}
		if c == nil || len(c.Stages) == 0 {
			t.Fatalf("Parse(%q) succeeded with no stages", src)
		}
		text := c.String()
		// The canonical text may outgrow the size limit ("yes" -> "true"); that is
		// the only case where it cannot be read back.
		if len(text) <= MaxInputBytes {
			again, err := Parse(text, ParseOptions{})
			if err != nil {
				t.Fatalf("canonical text %q of %q does not parse: %v", text, src, err)
			}
			if !sameCommand(c, again) {
				t.Fatalf("round trip of %q changed it: %q then %q", src, text, again.String())
			}
		}
		b, err := CanonicalJSON(c)
		if err != nil {
			t.Fatalf("CanonicalJSON(%q): %v", src, err)
		}
		if !json.Valid(b) {
			t.Fatalf("CanonicalJSON(%q) is not JSON: %s", src, b)
		}
	})
}
