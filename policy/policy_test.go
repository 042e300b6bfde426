package policy

import "testing"

func TestPolicyDecide(t *testing.T) {
	p := &Policy{
		Default:  Allow,
		Tools:    map[string]Action{"gpio/write": Ask, "i2c/*": Deny},
		Channels: map[string]map[string]Action{"telegram": {"gpio/*": Deny, "gpio/read": Allow}, "console": {"*": Allow}, "console/ttyS0": {"gpio/write": Deny}},
	}
	for _, c := range []struct {
		ch, tool string
		want     Action
	}{
		{"control", "gpio/write", Ask},
		{"control", "i2c/read", Deny},
		{"control", "sys/status", Allow},
		{"telegram", "gpio/write", Deny},
		{"telegram", "gpio/read", Allow},
		{"telegram", "i2c/scan", Deny},
		{"console/stdin", "gpio/write", Allow},
		{"console/ttyS0", "gpio/write", Deny},
		{"console/ttyS0", "i2c/read", Allow},
	} {
		if got := p.Decide(c.ch, c.tool); got != c.want {
			t.Errorf("%s %s: %s, want %s", c.ch, c.tool, got, c.want)
		}
	}
	if (*Policy)(nil).Decide("x", "y") != Allow || (&Policy{Default: Ask}).Decide("x", "a/b") != Ask {
		t.Error("defaults")
	}
	for _, bad := range []string{"", "gpio", "gpio/", "/x", "gpio/*/x", "g pio/x", "**"} {
		if CheckPattern(bad) == nil {
			t.Errorf("pattern %q accepted", bad)
		}
	}
}
