package daemon

import (
	"testing"

	"github.com/clawedge/clawedge/config"
	"github.com/clawedge/clawedge/policy"
)

// The model's sys/exec and auto/add calls wait for approval unless a rule names
// the tool itself: no "*", group or namespace grants a risky tool silently.
func TestSysExecAsksByDefault(t *testing.T) {
	for _, tc := range []struct {
		def   string
		tools map[string]string
		want  policy.Action
	}{
		{"allow", nil, policy.Ask},
		{"allow", map[string]string{"*": "allow"}, policy.Ask},
		{"allow", map[string]string{"sys/exec": "allow"}, policy.Allow},
		{"allow", map[string]string{"sys/*": "deny"}, policy.Deny},
		{"allow", map[string]string{"sys/*": "allow"}, policy.Ask},
		{"allow", map[string]string{"group:exec": "allow"}, policy.Ask},
		// Denied by default, it stays denied (it became ask).
		{"deny", map[string]string{"gpio/write": "allow"}, policy.Deny},
		{"deny", map[string]string{"*": "allow"}, policy.Ask},
	} {
		p := newCore(&config.Config{Policy: config.Policy{Default: tc.def, Tools: tc.tools}}, Options{}).policy()
		if got := action(p.Rule("telegram", "sys/exec")); got != tc.want {
			t.Errorf("policy.default %s, policy.tools %v: sys/exec is %s, want %s", tc.def, tc.tools, got, tc.want)
		}
		if got := action(p.Rule("telegram", "auto/add")); got != tc.want && tc.tools["sys/exec"] == "" && tc.tools["sys/*"] != "deny" {
			t.Errorf("policy.default %s, policy.tools %v: auto/add is %s, want %s", tc.def, tc.tools, got, tc.want)
		}
		if got := action(p.Rule("telegram", "gpio/read")); got == policy.Ask {
			t.Errorf("policy.tools %v: gpio/read became ask", tc.tools)
		}
	}
}

// action is the action of a Rule, without its reason.
func action(a policy.Action, _ string) policy.Action { return a }
