package main

import (
	"testing"

	"github.com/clawedge/clawedge/agent"
	"github.com/clawedge/clawedge/config"
)

// The model's sys/exec calls wait for approval unless the policy says otherwise
// about sys/exec itself.
func TestSysExecAsksByDefault(t *testing.T) {
	for _, tc := range []struct {
		def   string
		tools map[string]string
		want  agent.Action
	}{
		{"allow", nil, agent.Ask},
		{"allow", map[string]string{"*": "allow"}, agent.Ask},
		{"allow", map[string]string{"sys/exec": "allow"}, agent.Allow},
		{"allow", map[string]string{"sys/*": "deny"}, agent.Deny},
		// Denied by default, it stays denied (it became ask).
		{"deny", map[string]string{"gpio/write": "allow"}, agent.Deny},
		{"deny", map[string]string{"*": "allow"}, agent.Ask},
	} {
		p := policyOf(config.Policy{Default: tc.def, Tools: tc.tools})
		if got := p.Decide("telegram", "sys/exec"); got != tc.want {
			t.Errorf("policy.default %s, policy.tools %v: sys/exec is %s, want %s", tc.def, tc.tools, got, tc.want)
		}
		if got := p.Decide("telegram", "auto/add"); got != tc.want && tc.tools["sys/exec"] == "" && tc.tools["sys/*"] == "" {
			t.Errorf("policy.default %s, policy.tools %v: auto/add is %s, want %s", tc.def, tc.tools, got, tc.want)
		}
		if got := p.Decide("telegram", "gpio/read"); got == agent.Ask {
			t.Errorf("policy.tools %v: gpio/read became ask", tc.tools)
		}
	}
}
