package telegram

import (
	"strings"
	"testing"
)

// The shape's bounds: an id of 1 to 20 digits, a secret of 30 to 100 characters.
func TestTokenShapeBounds(t *testing.T) {
	id, secret := strings.Repeat("1", 20), strings.Repeat("a", 30)
	for tok, ok := range map[string]bool{
		"1:" + secret:                       true,
		id + ":" + strings.Repeat("_", 100): true,
		id + "1:" + secret:                  false,
		"1:" + secret[1:]:                   false,
		"1:" + strings.Repeat("-", 101):     false,
		":" + secret:                        false,
		"1:" + secret + ".":                 false,
		"1:" + secret + "\n":                false,
		"1:2:" + secret:                     false,
	} {
		if err := TokenShape(tok); (err == nil) != ok {
			t.Errorf("TokenShape(%q) = %v, want ok %v", tok, err, ok)
		}
	}
}
