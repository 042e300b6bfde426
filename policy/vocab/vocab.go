// Package vocab is the policy's vocabulary, defined once: the patterns a
// rule, a profile or policy.elevated may name (a tool, ns/*, *, and every
// group the policy implements), the profiles, and the principals that
// policy.users and policy.owners may name. The policy decides with it
// (package policy), the config is validated against it (package config),
// and `clawedge policy explain --as` reads a principal with it, so that what
// `clawedge config check` accepts is what the policy understands, and
// nothing else.
//
// It is a package of its own, below config, because config is a leaf that
// the policy reads (policy.FromConfig): config cannot ask the policy, so
// both ask this.
package vocab

import (
	"fmt"
	"slices"
	"strings"

	"github.com/clawedge/clawedge/grammar"
)

// Groups name sets of tools in rules, profiles and the elevated list. A
// group with nil members is one whose members the policy learns from the
// board, not from this table (Dynamic).
var Groups = map[string][]string{
	"group:gpio":   {"gpio/*"},
	"group:serial": {"serial/*"},
	"group:i2c":    {"i2c/*"},
	"group:spi":    {"spi/*"},
	// The sensors' reads (sensor/*); sim/set, the simulated board's, is not one.
	"group:sensors": {"sensor/*"},
	"group:exec":    {"sys/exec"},
	"group:auto":    {"auto/*"},
	"group:mcp":     nil, // the namespaces of the configured MCP servers (policy.Policy.Explicit)
	"group:skills":  nil, // the namespaces of installed skills' script tools (policy.Policy.Skills)
	// The tools without effects (policy.Policy.ReadOnly): built-in reads,
	// lists and status, and the tools of MCP servers trusted for their
	// readOnlyHint.
	"group:readonly": nil,
}

// Dynamic reports whether group's members are known only to a running
// policy (the configured MCP servers, the installed skills, the registered
// tools without effects), not to this table.
func Dynamic(group string) bool {
	m, ok := Groups[group]
	return ok && m == nil
}

// GroupNames are the groups, sorted: the fixed order in which a tool in two
// groups matches a rule.
var GroupNames = func() []string {
	var gs []string
	for g := range Groups {
		gs = append(gs, g)
	}
	slices.Sort(gs)
	return gs
}()

// Profiles are what each profile offers; "full" (or none) offers every tool.
var Profiles = map[string][]string{
	"minimal":  {"gpio/read", "gpio/list", "serial/list", "i2c/list", "sensor/list", "sensor/read", "sys/status", "sys/help", "sys/audit", "memory/search"},
	"hardware": {"group:gpio", "group:serial", "group:i2c", "group:spi", "group:sensors", "sys/status", "sys/help", "sys/audit", "memory/search"},
	"full":     {"*"},
}

// ProfileNames are the profiles, as the config lists them.
var ProfileNames = []string{"minimal", "hardware", "full"}

// Actions are what a rule may say.
var Actions = []string{"allow", "deny", "ask"}

// CheckPattern says what is wrong with p as a tool pattern: one tool
// (ns/name, each part an identifier of the command language), a namespace
// (ns/*), every tool (*) or a group.
func CheckPattern(p string) error {
	if _, ok := Groups[p]; ok || p == "*" {
		return nil
	}
	if board, ok := strings.CutSuffix(p, ".*"); ok && Board(board) {
		return nil // every tool of a paired board (docs/boards.md)
	}
	ns, name, ok := strings.Cut(p, "/")
	if !ok || !grammar.IsNamespace(ns) || (name != "*" && !grammar.IsIdent(name)) {
		if strings.HasPrefix(p, "group:") {
			return fmt.Errorf("%q is not a tool pattern: no such group; want one of %s", p, strings.Join(GroupNames, ", "))
		}
		return fmt.Errorf("%q is not a tool pattern: want ns/name, ns/*, BOARD.*, * or a group (%s)", p, strings.Join(GroupNames, ", "))
	}
	return nil
}

// Door is one kind of principal: how policy.users, policy.owners and
// `policy explain --as` name it, and the door it calls through.
type Door struct {
	// Prefix is the principal's form: "telegram:" takes an id after it;
	// without a colon ("console", "mqtt") it is the whole name.
	Prefix string
	// Channel is the channel its calls come through.
	Channel string
	// Actor is who composes a call it makes: "person", "program" or
	// "automation" (tools.Person, tools.Program, tools.Automation).
	Actor string
	// Form is how a message shows it.
	Form string
	// ID reports whether the id after the prefix is one the door gives
	// (nil: no id); IDs says which those are.
	ID  func(string) bool
	IDs string
}

// Doors are the principals the doors establish (docs/security.md, "Doors
// and principals"), with the ids each gives: a key that no caller can
// have would be a rule that holds nobody. A name without a colon that is
// none of these is a console's user (the console's $USER), a person at the
// board.
var Doors = []Door{
	{Prefix: "console", Channel: "console/stdin", Actor: "person", Form: "console"},
	{Prefix: "uid:", Channel: "control", Actor: "person", Form: "uid:N", ID: digits, IDs: "N a uid"},
	{Prefix: "telegram:", Channel: "telegram", Actor: "person", Form: "telegram:ID", ID: digits, IDs: "ID a Telegram user's number"},
	// channels/web.CheckName.
	{Prefix: "web:", Channel: "web", Actor: "person", Form: "web:NAME", ID: func(s string) bool { return word(s, 32, false, "_-") && s[0] != '_' && s[0] != '-' },
		IDs: "NAME a paired device's: a lower-case letter or digit, then lower-case letters, digits, _ and -, at most 32"},
	// channels/mcpserver.Caller: named by its door, never by the host's
	// handshake: over HTTP the name of the token it authenticated with
	// (mcp.serve.tokens, or "token" for the single mcp.serve.token), over
	// stdio the local user the kernel reports (uid:N).
	{Prefix: "mcp:", Channel: "mcp", Actor: "program", Form: "mcp:NAME", ID: func(s string) bool {
		uid, ok := strings.CutPrefix(s, "uid:")
		return ok && digits(uid) || MCPHost(s)
	}, IDs: "NAME the name of an mcp.serve.tokens entry (a lower-case letter, then lower-case letters, digits, _ and -, at most 32), token for the single mcp.serve.token, or uid:N for stdio (`clawedge mcp`, N the local user's uid)"},
	{Prefix: "mqtt", Channel: "mqtt", Actor: "program", Form: "mqtt"},
	// boards: another board paired with this one, calling over A2A
	// (docs/boards.md), named as that board announced itself at pairing.
	{Prefix: "board:", Channel: "board", Actor: "program", Form: "board:NAME", ID: Board,
		IDs: "NAME a paired board's: a lower-case letter, then lower-case letters, digits, _ and -, at most 32"},
	{Prefix: "auto:", Channel: "auto", Actor: "automation", Form: "auto:NAME", ID: Automation,
		IDs: "NAME an automation's: a lower-case letter, then lower-case letters, digits, _ and -, at most 32"},
}

// MCPHost reports whether name may name an MCP host's token
// (mcp.serve.tokens): its principal is mcp:NAME. The single mcp.serve.token
// is named "token".
func MCPHost(name string) bool {
	return word(name, 32, false, "_-") && name[0] >= 'a' && name[0] <= 'z'
}

// MCPSingleToken is the name of the single mcp.serve.token: its host is mcp:token.
const MCPSingleToken = "token"

// Board reports whether name may name a board (boards.name, a paired
// board): its principal is board:NAME and its tools NAME.ns/tool, so it is
// an identifier of the command language.
func Board(name string) bool {
	return word(name, 32, false, "_-") && name[0] >= 'a' && name[0] <= 'z'
}

// Automation reports whether name is an automation's (automations.Spec's
// and the config's automations rule): policy.automations is keyed by them.
func Automation(name string) bool {
	return word(name, 32, false, "_-") && name[0] >= 'a' && name[0] <= 'z'
}

// Principal finds the door of principal id (as tools.UserID gives it), or
// says what is wrong with it. A bare name (letters, digits, _ . -) that is
// no door's is a console's user: its door is the console's.
func Principal(id string) (Door, error) {
	forms := make([]string, len(Doors))
	for i, d := range Doors {
		forms[i] = d.Form
	}
	want := "want " + strings.Join(forms, ", ") + " or a console's user name"
	door, rest, colon := strings.Cut(id, ":")
	if !colon {
		for _, d := range Doors {
			if d.Prefix == id {
				return d, nil
			}
		}
		if !userName(id) {
			return Door{}, fmt.Errorf("%q is not a principal: %s", id, want)
		}
		return Door{Prefix: id, Channel: "console/stdin", Actor: "person", Form: "a console's user name"}, nil
	}
	switch door {
	case "model":
		return Door{}, fmt.Errorf("%q is not a principal: the model acts for one, and that principal's rules hold its model too; name %q", id, rest)
	case "goal":
		return Door{}, fmt.Errorf("%q is not a principal: a goal acts with its owner's rights; name the owner", id)
	}
	for _, d := range Doors {
		if d.Prefix != door+":" {
			continue
		}
		if !d.ID(rest) {
			return Door{}, fmt.Errorf("%q is not a principal: want %s, %s", id, d.Form, d.IDs)
		}
		return d, nil
	}
	return Door{}, fmt.Errorf("%q is not a principal: no door %q; %s", id, door, want)
}

// word reports whether s is 1 to max letters (lower-case only unless
// upper), digits and the bytes of extra.
func word(s string, max int, upper bool, extra string) bool {
	if s == "" || len(s) > max {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || upper && c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte(extra, c) >= 0) {
			return false
		}
	}
	return true
}

// userName is a login name: a letter or _, then letters, digits, _ . -.
func userName(s string) bool {
	for i, c := range s {
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
		if !letter && (i == 0 || !(c >= '0' && c <= '9') && c != '.' && c != '-') {
			return false
		}
	}
	return s != ""
}

func digits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// CheckChannel says what is wrong with ch as the name of a channel rule set
// (policy.channels): a door's channel family (console, control, telegram,
// web, mcp, mqtt, auto), or one console (console/stdin, console/ttyS0).
func CheckChannel(ch string) error {
	var fams []string
	for _, d := range Doors {
		if f, _, _ := strings.Cut(d.Channel, "/"); !slices.Contains(fams, f) {
			fams = append(fams, f)
		}
	}
	fam, rest, sub := strings.Cut(ch, "/")
	if !sub && slices.Contains(fams, ch) {
		return nil
	}
	if sub && fam == "console" && rest != "" && !strings.ContainsFunc(rest, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.')
	}) {
		return nil
	}
	return fmt.Errorf("unknown channel %q: want %s, or one console such as console/stdin or console/ttyS0", ch, strings.Join(fams, ", "))
}
