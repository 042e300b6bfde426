package daemon

import (
	"fmt"
	"time"

	"github.com/clawedge/clawedge/policy"
	"github.com/clawedge/clawedge/tools"
)

// policy is the app's one policy: policy.FromConfig, the one mapping from a
// config to its policy, with what this board adds to it (the installed
// skills, and the registered tools without effects for group:readonly).
// The registry is asked at each decision, so an app whose registry is built
// later (or never: then group:readonly is empty) holds the same mapping.
func (a *Core) policy() *policy.Policy {
	if a.pol == nil {
		a.pol = policy.FromConfig(a.cfg, policy.Board{Skills: a.skillNamespaces(), ReadOnly: a.readOnly})
	}
	return a.pol
}

// readOnly reports whether tool is registered and has no effects: a member
// of group:readonly.
func (a *Core) readOnly(tool string) bool {
	if a.reg == nil {
		return false
	}
	t, err := a.reg.Lookup(tool)
	return err == nil && tools.WithoutEffects(t)
}

// authorizer is the app's one authorizer, which its runner asks about every
// call, and its one set of calls waiting for a person.
func (a *Core) authorizer() *policy.Authorizer {
	if a.auth == nil {
		appr := policy.NewApprovals()
		appr.Notify = a.announceApproval
		a.auth = &policy.Authorizer{Policy: a.policy(), Approvals: appr, Timeout: time.Duration(a.cfg.Policy.ApprovalTimeout)}
		for _, id := range a.cfg.Telegram.AllowUsers { // Telegram's owners decide any request, as its buttons always let them
			a.auth.Approvers = append(a.auth.Approvers, fmt.Sprintf("telegram:%d", id))
		}
	}
	return a.auth
}
