package policy

import "github.com/clawedge/clawedge/config"

// Board is what a policy takes from the board it runs on rather than from
// the config: which skills are installed, and which registered tools have
// no effects. The zero Board is a board with neither.
type Board struct {
	// Skills are the installed skills' namespaces with script tools, true
	// when the owner granted them at install (Policy.Skills).
	Skills map[string]bool
	// ReadOnly reports whether a registered tool has no effects
	// (tools.WithoutEffects): the members of group:readonly. It is asked
	// at each decision, so a registry filled later is seen.
	ReadOnly func(tool string) bool
}

// FromConfig is the one mapping from a config to its policy: the daemon,
// `clawedge policy explain`, `clawedge config check` and the tests all make
// their policy here, so none holds a policy another would not. It takes the
// policy section's layers as they are, exec.mode, the MCP servers'
// namespaces as explicit (their tools run only when a rule names them), and
// a fresh set of /elevated windows. cfg was validated when it was loaded,
// against the same vocabulary (package vocab) the policy decides with.
func FromConfig(cfg *config.Config, b Board) *Policy {
	c := cfg.Policy
	p := &Policy{
		Default:     Action(c.Default),
		Tools:       actions(c.Tools),
		Channels:    actionSets(c.Channels),
		Profile:     c.Profile,
		Users:       actionSets(c.Users),
		Automations: actionSets(c.Automations),
		Elevated:    c.Elevated,
		Owners:      c.Owners,
		ExecMode:    cfg.Exec.Mode,
		Elevation:   &Elevation{},
		Skills:      b.Skills,
		ReadOnly:    b.ReadOnly,
	}
	if cfg.MCP != nil && len(cfg.MCP.Servers) > 0 {
		p.Explicit = map[string]bool{}
		for name := range cfg.MCP.Servers {
			p.Explicit[name] = true
		}
	}
	return p
}

func actions(in map[string]string) map[string]Action {
	if in == nil {
		return nil
	}
	out := make(map[string]Action, len(in))
	for k, v := range in {
		out[k] = Action(v)
	}
	return out
}

func actionSets(in map[string]map[string]string) map[string]map[string]Action {
	if in == nil {
		return nil
	}
	out := make(map[string]map[string]Action, len(in))
	for name, rules := range in {
		out[name] = actions(rules)
	}
	return out
}
