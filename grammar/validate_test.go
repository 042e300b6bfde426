package grammar

import "testing"

// describe is how errors and help say a parameter's type, bounds and default.
func TestDescribe(t *testing.T) {
	one, most := 1.0, 60000.0
	p := ArgSpec{Name: "timeout_ms", Type: TypeInteger, Min: &one, Max: &most, Default: 1000}
	if got := p.describe(); got != "an integer 1..60000, default 1000" {
		t.Errorf("describe = %q", got)
	}
}
