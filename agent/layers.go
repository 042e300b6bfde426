package agent

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// The layers of permission. A model's call runs only if every layer agrees:
//
//	profile     the starting point: minimal, hardware or full
//	rules       policy.channels, then policy.tools, then policy.default (Rule)
//	user        policy.users["telegram:123"]
//	automation  policy.automations["porch-off"], for calls of auto:<name>
//	elevated    a tool listed in policy.elevated runs only while an owner's
//	            /elevated window is open
//	exec        sys/exec only with exec.mode allowlist or full
//	approval    an ask from any layer waits for a person
//
// Any deny decides; otherwise any ask; otherwise the call runs. Explain gives
// every layer's verdict, for `clawedge policy explain`.

// Groups name sets of tools in rules, profiles and the elevated list.
var Groups = map[string][]string{
	"group:gpio":   {"gpio/*"},
	"group:serial": {"serial/*"},
	"group:i2c":    {"i2c/*"},
	"group:exec":   {"sys/exec"},
	"group:auto":   {"auto/*"},
	"group:mcp":    nil, // the namespaces of MCP servers (Policy.Explicit)
}

// Profiles are what each profile offers; "full" (or none) offers every tool.
var Profiles = map[string][]string{
	"minimal":  {"gpio/read", "gpio/list", "serial/list", "i2c/list", "sys/status", "sys/help", "sys/audit"},
	"hardware": {"group:gpio", "group:serial", "group:i2c", "sys/status", "sys/help", "sys/audit"},
	"full":     {"*"},
}

// Verdict is one layer's say about a call.
type Verdict struct {
	Layer  string
	Action Action
	Why    string
}

// Explanation is the outcome of every layer for one call.
type Explanation struct {
	Action   Action
	Decided  string // the layer that decided ("" when every layer allowed)
	Why      string
	Verdicts []Verdict
}

// Elevation is the set of open /elevated windows, per user, on a clock.
type Elevation struct {
	mu    sync.Mutex
	until map[string]time.Time
	Now   func() time.Time // nil: time.Now
}

func (e *Elevation) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

// Open opens user's window for d.
func (e *Elevation) Open(user string, d time.Duration) time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.until == nil {
		e.until = map[string]time.Time{}
	}
	t := e.now().Add(d)
	e.until[userID(user)] = t
	return t
}

// Active reports whether user's window is open, and until when.
func (e *Elevation) Active(user string) (time.Time, bool) {
	if e == nil {
		return time.Time{}, false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	t, ok := e.until[userID(user)]
	return t, ok && e.now().Before(t)
}

// userID is the stable part of a caller's name: "telegram:123 (@ann)" is
// "telegram:123".
func userID(user string) string {
	id, _, _ := strings.Cut(user, " ")
	return id
}

// Explain runs every layer for tool called by user through channel.
func (p *Policy) Explain(channel, user, tool string) Explanation {
	var vs []Verdict
	add := func(layer string, a Action, why string) { vs = append(vs, Verdict{layer, a, why}) }
	if p == nil {
		p = &Policy{}
	}

	profile := p.Profile
	if profile == "" {
		profile = "full"
	}
	if inSet(Profiles[profile], tool) || (profile == "full") {
		add("profile", Allow, "profile "+profile+" includes it")
	} else {
		add("profile", Deny, "profile "+profile+" does not include it")
	}

	a, why := p.Rule(channel, tool)
	add("rules", a, why)

	id := userID(user)
	if a, pat, ok := matchRule(p.Users[id], tool, p.groupsOf(tool)...); ok {
		add("user", a, fmt.Sprintf("policy.users.%s %q: %s", id, pat, a))
	} else {
		add("user", Allow, "no rule for "+or(id, "this caller"))
	}

	if name, ok := strings.CutPrefix(id, "auto:"); ok {
		if a, pat, ok := matchRule(p.Automations[name], tool, p.groupsOf(tool)...); ok {
			add("automation", a, fmt.Sprintf("policy.automations.%s %q: %s", name, pat, a))
		} else {
			add("automation", Allow, "no rule for automation "+name)
		}
	}

	if inSet(p.Elevated, tool) || slices.ContainsFunc(p.groupsOf(tool), func(g string) bool { return slices.Contains(p.Elevated, g) }) {
		if until, ok := p.Elevation.Active(user); ok {
			add("elevated", Allow, "elevated until "+until.Format("15:04:05"))
		} else {
			add("elevated", Deny, "listed in policy.elevated: an owner must send /elevated 10m first")
		}
	} else {
		add("elevated", Allow, "not an elevated tool")
	}

	if tool == "sys/exec" {
		switch mode := p.ExecMode; mode {
		case "":
			add("exec", Allow, "sys/exec exists only when exec.mode allows it")
		case "deny":
			add("exec", Deny, "exec.mode: deny")
		default:
			add("exec", Allow, "exec.mode: "+mode)
		}
	}

	d := Explanation{Action: Allow, Verdicts: vs}
	for _, want := range []Action{Deny, Ask} {
		if i := slices.IndexFunc(vs, func(v Verdict) bool { return v.Action == want }); i >= 0 {
			d.Action, d.Decided, d.Why = want, vs[i].Layer, vs[i].Why
			break
		}
	}
	if d.Action == Ask {
		d.Verdicts = append(d.Verdicts, Verdict{"approval", Ask, "a person must approve it within the approval timeout"})
	} else {
		d.Verdicts = append(d.Verdicts, Verdict{"approval", d.Action, "not needed"})
	}
	return d
}

// Check is Explain's action and reason, named as the config names it.
func (p *Policy) Check(channel, user, tool string) (Action, string) {
	d := p.Explain(channel, user, tool)
	if d.Decided == "" {
		return Allow, "every layer allows it"
	}
	return d.Action, d.Why
}

// groupsOf are the groups tool is in beyond Groups' fixed members: the tools
// of MCP servers are group:mcp.
func (p *Policy) groupsOf(tool string) []string {
	ns, _, _ := strings.Cut(tool, "/")
	if p.Explicit[ns] {
		return []string{"group:mcp"}
	}
	return nil
}

// inSet reports whether tool is in a list of patterns (tools, ns/*, *, groups).
func inSet(patterns []string, tool string) bool {
	for _, pat := range patterns {
		if members, ok := Groups[pat]; ok {
			if inSet(members, tool) {
				return true
			}
			continue
		}
		if pat == "*" || pat == tool {
			return true
		}
		if ns, ok := strings.CutSuffix(pat, "/*"); ok && strings.HasPrefix(tool, ns+"/") {
			return true
		}
	}
	return false
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// MaxElevation bounds one /elevated window.
const MaxElevation = 24 * time.Hour

// Elevate opens user's /elevated window for d, if user is an owner.
func (p *Policy) Elevate(user string, d time.Duration) (time.Time, error) {
	if p == nil || !slices.Contains(p.Owners, userID(user)) {
		return time.Time{}, fmt.Errorf("only an owner (policy.owners) may elevate; %s is not one", or(userID(user), "this caller"))
	}
	if d <= 0 || d > MaxElevation {
		return time.Time{}, fmt.Errorf("the window must be from 1s to %s, such as /elevated 10m", MaxElevation)
	}
	if p.Elevation == nil {
		return time.Time{}, fmt.Errorf("elevation is not available here")
	}
	return p.Elevation.Open(user, d), nil
}
