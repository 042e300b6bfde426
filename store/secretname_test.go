package store

import (
	"strings"
	"testing"
)

func TestCheckSecretNameBounds(t *testing.T) {
	for name, ok := range map[string]bool{
		"a": true, "wifi.home_2-b": true, strings.Repeat("x", 64): true,
		"": false, strings.Repeat("x", 65): false, "a/b": false, "a\n": false, "é": false,
	} {
		if err := CheckSecretName(name); (err == nil) != ok {
			t.Errorf("CheckSecretName(%q) = %v, want ok %v", name, err, ok)
		}
	}
}
