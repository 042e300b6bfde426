package policy

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/clawedge/clawedge/policy/vocab"
	"github.com/clawedge/clawedge/tools"
)

// The layers of permission. A call runs only if every layer that holds its
// actor agrees (layersOf):
//
//	profile     the starting point: minimal, hardware or full
//	rules       policy.channels, then policy.tools, then policy.default (Rule)
//	user        policy.users["telegram:123"]
//	automation  policy.automations["porch-off"], for calls of auto:<name>
//	elevated    a tool listed in policy.elevated runs only while an owner's
//	            /elevated window is open
//	exec        sys/exec only with exec.mode allowlist or full
//	role        the door's role for the caller: a dashboard viewer calls nothing
//	approval    an ask from any layer waits for a person
//
// Any deny decides; otherwise any ask; otherwise the call runs. Explain gives
// every layer's verdict, for `clawedge policy explain`.

// The groups and profiles are the vocabulary's (package vocab): the one
// definition of what a rule, a profile or policy.elevated may name, which
// the config is validated against too.

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
	e.until[tools.UserID(user)] = t
	return t
}

// Active reports whether user's window is open, and until when.
func (e *Elevation) Active(user string) (time.Time, bool) {
	if e == nil {
		return time.Time{}, false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	t, ok := e.until[tools.UserID(user)]
	return t, ok && e.now().Before(t)
}

// layersOf are the layers that hold each actor. A person's typed command is
// that person's own act: only rules about that person (policy.users) and the
// exec mode hold it. The model and programs are held by everything: the
// profile, the rules of their door, their principal's rules, elevation. An
// automation is held by its own rules (policy.automations) and, through
// Creator, by everything that holds whoever created it.
var layersOf = map[tools.Actor][]string{
	tools.Person:     {"user", "exec"},
	tools.Model:      {"profile", "rules", "user", "automation", "elevated", "exec"},
	tools.Program:    {"profile", "rules", "user", "automation", "elevated", "exec"},
	tools.Automation: {"automation", "exec"},
}

// Explain runs every layer for tool called by caller: the decision the call
// path makes (Authorizer), layer by layer, for `clawedge policy explain`.
func (p *Policy) Explain(caller tools.Caller, tool string) Explanation {
	if p == nil {
		p = &Policy{}
	}
	vs := p.verdicts(caller.Channel, caller.User, actorOf(caller.Actor), tool, "")
	if caller.Role == tools.RoleViewer {
		// The door's role is a layer like the others: its refusal is decided
		// and audited on the call path, not at the door.
		vs = append(vs, Verdict{"role", Deny, caller.User + " is a viewer: it reads, and calls nothing (pair it again as an operator)"})
	}
	if c := caller.Creator; c != nil {
		creator := p.verdicts(c.Channel, c.User, actorOf(c.Actor), tool, "creator ")
		if caller.Approved != "" {
			// A person approved the automation as created, its do: line
			// included: what its creator's rules would ask was asked then.
			for i := range creator {
				if creator[i].Action == Ask {
					creator[i] = Verdict{creator[i].Layer, Allow, "approved with the automation (" + caller.Approved + ")"}
				}
			}
		}
		vs = append(vs, creator...)
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

// actorOf counts an unnamed actor as a program: held by every layer.
func actorOf(a tools.Actor) tools.Actor {
	if _, ok := layersOf[a]; ok {
		return a
	}
	return tools.Program
}

// verdicts are the verdicts of the layers that hold actor, for tool called
// by user through channel; prefix names the layers of a creator.
func (p *Policy) verdicts(channel, user string, actor tools.Actor, tool, prefix string) []Verdict {
	var vs []Verdict
	add := func(layer string, a Action, why string) { vs = append(vs, Verdict{prefix + layer, a, why}) }
	id := tools.UserID(user)
	for _, layer := range layersOf[actor] {
		switch layer {
		case "profile":
			profile := or(p.Profile, "full")
			if profile == "full" || inSet(vocab.Profiles[profile], tool) {
				add("profile", Allow, "profile "+profile+" includes it")
			} else {
				add("profile", Deny, "profile "+profile+" does not include it")
			}
		case "rules":
			a, why := p.Rule(channel, tool)
			add("rules", a, why)
		case "user":
			if a, pat, ok := matchRule(p.Users[id], tool, p.groupsOf(tool)...); ok {
				add("user", a, fmt.Sprintf("policy.users.%s %q: %s", id, pat, a))
			} else {
				add("user", Allow, "no rule for "+or(id, "this caller"))
			}
		case "automation":
			name, ok := strings.CutPrefix(id, "auto:")
			if !ok {
				continue
			}
			if a, pat, ok := matchRule(p.Automations[name], tool, p.groupsOf(tool)...); ok {
				add("automation", a, fmt.Sprintf("policy.automations.%s %q: %s", name, pat, a))
			} else {
				add("automation", Allow, "no rule for automation "+name)
			}
		case "elevated":
			if inSet(p.Elevated, tool) || slices.ContainsFunc(p.groupsOf(tool), func(g string) bool { return slices.Contains(p.Elevated, g) }) {
				if until, ok := p.Elevation.Active(user); ok {
					add("elevated", Allow, "elevated until "+until.Format("15:04:05"))
				} else {
					add("elevated", Deny, "listed in policy.elevated: an owner must send /elevated 10m first")
				}
			} else {
				add("elevated", Allow, "not an elevated tool")
			}
		case "exec":
			if tool != "sys/exec" {
				continue
			}
			switch mode := p.ExecMode; mode {
			case "":
				add("exec", Allow, "sys/exec exists only when exec.mode allows it")
			case "deny":
				add("exec", Deny, "exec.mode: deny")
			default:
				add("exec", Allow, "exec.mode: "+mode)
			}
		}
	}
	return vs
}

// Check is Explain's action and reason, named as the config names it.
func (p *Policy) Check(caller tools.Caller, tool string) (Action, string) {
	d := p.Explain(caller, tool)
	if d.Decided == "" {
		return Allow, "every layer allows it"
	}
	return d.Action, d.Why
}

// groupsOf are the groups tool is in beyond vocab.Groups' fixed members: the tools
// of MCP servers are group:mcp, those of skills group:skills, and those
// without effects group:readonly.
func (p *Policy) groupsOf(tool string) []string {
	var gs []string
	ns, _, _ := strings.Cut(tool, "/")
	if p.Explicit[ns] {
		gs = append(gs, "group:mcp")
	}
	if _, ok := p.Skills[ns]; ok {
		gs = append(gs, "group:skills")
	}
	if p.ReadOnly != nil && p.ReadOnly(tool) {
		gs = append(gs, "group:readonly")
	}
	return gs
}

// inSet reports whether tool is in a list of patterns (tools, ns/*, *, groups).
func inSet(patterns []string, tool string) bool {
	for _, pat := range patterns {
		if members, ok := vocab.Groups[pat]; ok {
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
	if p == nil || !slices.Contains(p.Owners, tools.UserID(user)) {
		return time.Time{}, fmt.Errorf("only an owner (policy.owners) may elevate; %s is not one", or(tools.UserID(user), "this caller"))
	}
	if d <= 0 || d > MaxElevation {
		return time.Time{}, fmt.Errorf("the window must be from 1s to %s, such as /elevated 10m", MaxElevation)
	}
	if p.Elevation == nil {
		return time.Time{}, fmt.Errorf("elevation is not available here")
	}
	return p.Elevation.Open(user, d), nil
}
