package automations

import (
	"strings"
	"testing"
	"time"
)

func TestSpecNameBounds(t *testing.T) {
	for name, ok := range map[string]bool{
		"a" + strings.Repeat("b", 31): true, "porch-on_2": true,
		"a" + strings.Repeat("b", 32): false, "": false, "2a": false, "Porch": false, "a\n": false,
	} {
		sp := Spec{Name: name, Every: time.Minute, Do: `@gpio/write{pin="led";value=1}`}
		err := sp.Check()
		if (err == nil) != ok {
			t.Errorf("name %q: %v, want ok %v", name, err, ok)
		}
	}
}
