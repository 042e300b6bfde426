package config

import (
	"strings"
	"testing"
)

// The names' length limits, checked apart from their patterns (shortRE).
func TestNameBounds(t *testing.T) {
	for _, tc := range []struct {
		re   shortRE
		s    string
		want bool
	}{
		{nameRE, "a" + strings.Repeat("b", 31), true},
		{nameRE, "a" + strings.Repeat("b", 32), false},
		{nameRE, "", false},
		{nameRE, "1a", false},
		{nameRE, "a_b-c9", true},
		{nameRE, "a\n", false},
		{topicWordRE, strings.Repeat("A", 64), true},
		{topicWordRE, strings.Repeat("A", 65), false},
		{topicWordRE, "", false},
		{topicWordRE, "a/b", false},
		{secretRefName, strings.Repeat(".", 64), true},
		{secretRefName, strings.Repeat(".", 65), false},
		{secretRefName, "", false},
	} {
		if got := tc.re.MatchString(tc.s); got != tc.want {
			t.Errorf("%s on %q = %v, want %v", tc.re.re, tc.s, got, tc.want)
		}
	}
}
