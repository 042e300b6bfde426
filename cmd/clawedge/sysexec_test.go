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
		tools map[string]string
		want  agent.Action
	}{
		{nil, agent.Ask},
		{map[string]string{"*": "allow"}, agent.Ask},
		{map[string]string{"sys/exec": "allow"}, agent.Allow},
		{map[string]string{"sys/*": "deny"}, agent.Deny},
	} {
		p := policyOf(config.Policy{Default: "allow", Tools: tc.tools})
		if got := p.Decide("telegram", "sys/exec"); got != tc.want {
			t.Errorf("policy.tools %v: sys/exec is %s, want %s", tc.tools, got, tc.want)
		}
		if got := p.Decide("telegram", "gpio/read"); got == agent.Ask {
			t.Errorf("policy.tools %v: gpio/read became ask", tc.tools)
		}
	}
}
