package policy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/clawedge/clawedge/policy/vocab"
	"github.com/clawedge/clawedge/tools"
)

// Action is what the policy says about a call the model proposes.
type Action string

const (
	Allow Action = "allow" // run it
	Deny  Action = "deny"  // never run it; the model is told
	Ask   Action = "ask"   // run it only if a person approves in time
)

// Policy is the config's rules of who may call what. Its layers (layers.go) hold
// each actor as layersOf says: the model and programs (MCP hosts, MQTT) by all
// of them; a command a person types by the rules about that person only.
//
// Rules are patterns over tool names (vocab.CheckPattern): "gpio/write" (one
// tool), a group ("group:readonly"), "gpio/*" (a namespace) or "*" (every tool). A channel's rules come before the tool rules, which come before
// Default; within a rule set the most specific pattern wins. A channel rule set is
// named by the channel ("telegram", "control", "console/ttyS0") or by its family
// ("console" covers console/stdin and every serial console).
type Policy struct {
	Default  Action
	Tools    map[string]Action
	Channels map[string]map[string]Action
	// Explicit are namespaces whose tools only a rule that names them ("ns/tool"
	// or "ns/*") allows: neither "*" nor Default covers them. The tools of MCP
	// servers are such: code nobody here reviewed is denied until someone says so.
	Explicit map[string]bool
	// Skills are the namespaces of installed skills' script tools, explicit
	// as the MCP servers' are; true when the owner granted the skill's
	// tools at install, which then stands in for a rule "NAME/*": allow
	// (any rule that covers a tool still decides first).
	Skills map[string]bool
	// ReadOnly reports whether a tool has no effects (tools.WithoutEffects
	// of the registered tool): the members of group:readonly, which a rule
	// can allow as a whole. nil: the group is empty.
	ReadOnly func(tool string) bool
	// The other layers (layers.go).
	Profile     string                       // minimal, hardware, full ("": full)
	Users       map[string]map[string]Action // by caller id, "telegram:123"
	Automations map[string]map[string]Action // by automation name
	Elevated    []string                     // patterns of tools that need an /elevated window
	Owners      []string                     // caller ids that may open one
	ExecMode    string                       // exec.mode
	Elevation   *Elevation
}

// Rule is the rules layer's action for tool called through channel, and which rule decided, named as in the config so that a person
// told "not run" can find it: `policy.channels.telegram "gpio/*": deny`,
// `policy.tools "gpio/write": deny`, `policy.default: deny`.
func (p *Policy) Rule(channel, tool string) (Action, string) {
	a, pat, why := p.rule(channel, tool)
	if a == Allow && risky(tool) && pat != tool {
		// No "*", group, namespace or default grants a risky tool silently.
		return Ask, fmt.Sprintf("%s asks unless a rule names it exactly, such as policy.tools %q: allow (it was allowed by %s)", tool, tool, why)
	}
	return a, why
}

// Risky are the tools that run programs or create actions that run later,
// with nobody watching, and those that write or erase what later turns read
// as memory (a tool result telling the model to "remember" something must
// not become a standing note unseen): only a rule naming the tool itself
// allows them without a person's approval. A person's own typed command is
// not held by the rules: /remember saves at once.
var Risky = []string{"sys/exec", "auto/add", "goal/add", "memory/save", "memory/forget"}

// risky reports whether tool is one of Risky, here or on another board
// (garage.sys/exec runs a program there as surely as sys/exec does here).
func risky(tool string) bool {
	if ns, rest, ok := strings.Cut(tool, "."); ok && !strings.Contains(ns, "/") {
		tool = rest
	}
	return slices.Contains(Risky, tool)
}

// rule is Rule before the risky tools' exception, with the pattern that
// matched ("" for the default).
func (p *Policy) rule(channel, tool string) (Action, string, string) {
	if p == nil {
		return Allow, "", "no policy"
	}
	ns, _, _ := strings.Cut(tool, "/")
	granted, skill := p.Skills[ns]
	board, _, remote := strings.Cut(ns, ".")
	// Another board's tools, like an MCP server's, run only where a rule
	// names them (garage.*, garage.gpio/*, garage.gpio/write): pairing
	// lets the boards talk, not this board's every principal use them.
	explicit := p.Explicit[ns] || skill || remote
	// The exact channel, then its family ("console/stdin" -> "console").
	for _, ch := range []string{channel, family(channel)} {
		if rules, ok := p.Channels[ch]; ok {
			if a, pat, ok := matchRule(rules, tool, p.groupsOf(tool)...); ok && !(explicit && pat == "*") {
				return a, pat, fmt.Sprintf("policy.channels.%s %q: %s", ch, pat, a)
			}
		}
	}
	if a, pat, ok := matchRule(p.Tools, tool, p.groupsOf(tool)...); ok && !(explicit && pat == "*") {
		return a, pat, fmt.Sprintf("policy.tools %q: %s", pat, a)
	}
	if skill && granted {
		return Allow, "", fmt.Sprintf("skill %s's tools were granted by the owner at install", ns)
	}
	if skill {
		return Deny, "", fmt.Sprintf("the tools of skill %s are denied unless a rule names them, such as policy.tools %q: allow (or the owner grants them at install)", ns, ns+"/*")
	}
	if remote {
		return Deny, "", fmt.Sprintf("the tools of board %s are denied unless a rule names them, such as policy.tools %q: allow", board, board+".*")
	}
	if explicit {
		return Deny, "", fmt.Sprintf("the tools of MCP server %s are denied unless a rule names them, such as policy.tools %q: allow", ns, ns+"/*")
	}
	if p.Default == "" {
		return Allow, "", "policy.default: allow"
	}
	return p.Default, "", "policy.default: " + string(p.Default)
}

// Offered reports whether tool is offered to caller at all (listed to an MCP
// host, put in the model's tools and so in its grammar): a tool the call
// path would deny is not shown, so nobody wastes a step on it.
func (p *Policy) Offered(caller tools.Caller, tool string) bool {
	a, _ := p.Check(caller, tool)
	return a != Deny
}

func family(channel string) string {
	f, _, _ := strings.Cut(channel, "/")
	return f
}

// Match finds the value of the rule that covers tool in rules (keyed by tool
// patterns, as the policy's are): the one way patterns are read, for other
// per-tool settings too (agent.tool_output).
func Match[V any](rules map[string]V, tool string) (V, bool) {
	a, _, ok := matchRule(rules, tool)
	return a, ok
}

// matchRule is match, and the pattern that matched: the tool, then a group
// holding it (group:gpio), then its namespace, then "*".
func matchRule[V any](rules map[string]V, tool string, extraGroups ...string) (V, string, bool) {
	if a, ok := rules[tool]; ok {
		return a, tool, true
	}
	for _, g := range vocab.GroupNames {
		if a, ok := rules[g]; ok && (inSet(vocab.Groups[g], tool) || slices.Contains(extraGroups, g)) {
			return a, g, true
		}
	}
	if ns, _, ok := strings.Cut(tool, "/"); ok {
		if a, ok := rules[ns+"/*"]; ok {
			return a, ns + "/*", true
		}
		if board, _, remote := strings.Cut(ns, "."); remote {
			if a, ok := rules[board+".*"]; ok {
				return a, board + ".*", true
			}
		}
	}
	a, ok := rules["*"]
	return a, "*", ok
}
