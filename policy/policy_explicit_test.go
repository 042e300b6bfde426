package policy

import (
	"strings"
	"testing"
)

// The tools of an MCP server (an Explicit namespace) are denied unless a rule
// names them: neither "*" nor the default covers them.
func TestPolicyExplicitNamespaces(t *testing.T) {
	p := &Policy{Default: Allow, Explicit: map[string]bool{"home": true},
		Tools:    map[string]Action{"*": Allow, "home/lights": Ask},
		Channels: map[string]map[string]Action{"mcp": {"*": Allow, "home/*": Allow}}}
	for _, c := range []struct {
		channel, tool string
		want          Action
	}{
		{"telegram", "gpio/write", Allow},
		{"telegram", "home/lights", Ask},
		{"telegram", "home/locks", Deny},
		{"console/stdin", "home/locks", Deny},
		{"mcp", "home/locks", Allow},
	} {
		if got, why := p.Rule(c.channel, c.tool); got != c.want {
			t.Errorf("%s %s: %s (%s), want %s", c.channel, c.tool, got, why, c.want)
		}
	}
	if _, why := p.Rule("telegram", "home/locks"); !strings.Contains(why, `policy.tools "home/*": allow`) {
		t.Errorf("the reason does not say how to allow it: %s", why)
	}
}
