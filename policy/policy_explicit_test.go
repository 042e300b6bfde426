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

// A skill's tools are denied like an MCP server's until a rule names them,
// unless the owner granted them at install; a rule still decides first.
func TestPolicySkillNamespaces(t *testing.T) {
	p := &Policy{Default: Allow, Skills: map[string]bool{"ds18b20": false, "granted": true},
		Tools: map[string]Action{"*": Allow, "granted/reset": Deny, "group:skills": Ask}}
	for _, c := range []struct {
		tool string
		want Action
		why  string
	}{
		{"ds18b20/read_temp", Ask, "group:skills"},
		{"granted/read", Ask, "group:skills"},
		{"granted/reset", Deny, `policy.tools "granted/reset": deny`},
		{"gpio/write", Allow, `"*"`},
	} {
		if got, why := p.Rule("telegram", c.tool); got != c.want || !strings.Contains(why, c.why) {
			t.Errorf("%s: %s (%s), want %s (%s)", c.tool, got, why, c.want, c.why)
		}
	}
	p.Tools = map[string]Action{"*": Allow}
	if got, why := p.Rule("telegram", "ds18b20/read_temp"); got != Deny || !strings.Contains(why, `skill ds18b20 are denied unless a rule names them, such as policy.tools "ds18b20/*": allow`) {
		t.Errorf("an ungranted skill's tool under \"*\": %s (%s), want deny naming the rule", got, why)
	}
	if got, why := p.Rule("telegram", "granted/read"); got != Allow || !strings.Contains(why, "granted by the owner at install") {
		t.Errorf("a granted skill's tool: %s (%s), want allow", got, why)
	}
}

// group:readonly holds the tools Policy.ReadOnly says have no effects: one
// rule allows every read, an MCP server's trusted reads with them (naming
// the group counts as naming them), and nothing with effects.
func TestPolicyReadOnlyGroup(t *testing.T) {
	readOnly := map[string]bool{"gpio/read": true, "home/get_state": true}
	p := &Policy{Default: Deny, Explicit: map[string]bool{"home": true},
		Tools:    map[string]Action{"group:readonly": Allow},
		ReadOnly: func(tool string) bool { return readOnly[tool] }}
	for _, c := range []struct {
		tool string
		want Action
	}{
		{"gpio/read", Allow},
		{"home/get_state", Allow},
		{"gpio/write", Deny},
		{"home/turn_on", Deny},
	} {
		if got, why := p.Rule("telegram", c.tool); got != c.want {
			t.Errorf("%s: %s (%s), want %s", c.tool, got, why, c.want)
		}
	}
	if _, why := p.Rule("telegram", "home/get_state"); !strings.Contains(why, `policy.tools "group:readonly": allow`) {
		t.Errorf("the reason does not name the group: %s", why)
	}
	p.ReadOnly = nil // no registry to ask: the group is empty
	if got, _ := p.Rule("telegram", "gpio/read"); got != Deny {
		t.Errorf("gpio/read with no ReadOnly: %s, want the default", got)
	}
}
