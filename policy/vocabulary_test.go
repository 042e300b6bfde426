package policy

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/clawedge/clawedge/config"
	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/policy/vocab"
	"github.com/clawedge/clawedge/tools"
)

// parseConfig is config.Load on src: what `clawedge config check` says of it.
func parseConfig(src string) (*config.Config, error) {
	return config.Parse([]byte(src), "test.yaml", func(string) (string, bool) { return "", false })
}

// mcpServer configures an MCP server srv, so that group:mcp has a member
// (srv/query), and board installs a skill weather (group:skills:
// weather/forecast) and says gpio/read has no effects (group:readonly).
const mcpServer = "mcp:\n  servers:\n    srv: {url: \"http://127.0.0.1:1/mcp\"}\n"

var board = Board{Skills: map[string]bool{"weather": false}, ReadOnly: func(tool string) bool { return tool == "gpio/read" }}

// witness is a tool that pattern p covers on that board.
func witness(p string) string {
	switch p {
	case "*":
		return "gpio/write"
	case "group:mcp":
		return "srv/query"
	case "group:skills":
		return "weather/forecast"
	case "group:readonly":
		return "gpio/read"
	}
	if members, ok := vocab.Groups[p]; ok {
		return witness(members[0])
	}
	return strings.Replace(p, "/*", "/x", 1)
}

// Every pattern the policy understands (each group it implements, *, a
// namespace, a tool, an MCP server's, every pattern a profile holds) is
// accepted by the config wherever a pattern goes, and the policy the config
// maps to (FromConfig) decides a call under it by that rule.
func TestConfigAcceptsEveryPatternThePolicyUnderstands(t *testing.T) {
	patterns := slices.Concat([]string{"*", "gpio/*", "gpio/write", "srv/*", "srv/query", "weather/*"}, vocab.GroupNames)
	for _, name := range vocab.ProfileNames {
		patterns = append(patterns, vocab.Profiles[name]...)
	}
	if len(vocab.GroupNames) < 8 || !slices.Contains(vocab.GroupNames, "group:readonly") {
		t.Fatalf("groups %v: the policy implements group:readonly and seven more", vocab.GroupNames)
	}
	mcp := tools.Caller{Channel: "mcp", User: "mcp:x", Actor: tools.Program}
	auto := tools.Caller{Channel: "auto", User: "auto:porch", Actor: tools.Automation}
	for _, p := range patterns {
		q := strconv.Quote(p)
		for _, place := range []struct {
			yaml   string
			caller tools.Caller
			layer  string
			why    string
		}{
			{"policy:\n  tools: {" + q + ": deny}\n", mcp, "rules", "policy.tools " + q + ": deny"},
			{"policy:\n  channels:\n    mcp: {" + q + ": deny}\n", mcp, "rules", "policy.channels.mcp " + q + ": deny"},
			{"policy:\n  users:\n    \"mcp:x\": {" + q + ": deny}\n", mcp, "user", "policy.users.mcp:x " + q + ": deny"},
			{"policy:\n  automations:\n    porch: {" + q + ": deny}\n", auto, "automation", "policy.automations.porch " + q + ": deny"},
			{"policy:\n  elevated: [" + q + "]\n", mcp, "elevated", "listed in policy.elevated"},
		} {
			cfg, err := parseConfig(mcpServer + place.yaml)
			if err != nil {
				t.Errorf("the config refuses %s, a pattern the policy understands:\n%v", q, err)
				continue
			}
			tool := witness(p)
			// The layer's own verdict: an MCP server's or a skill's tool is
			// also denied by the rules until a rule names it.
			d := FromConfig(cfg, board).Explain(place.caller, tool)
			i := slices.IndexFunc(d.Verdicts, func(v Verdict) bool { return v.Layer == place.layer })
			if d.Action != Deny || i < 0 || d.Verdicts[i].Action != Deny || !strings.Contains(d.Verdicts[i].Why, place.why) {
				t.Errorf("%s: %s by %s: %+v, want the %s layer to deny it (%s)", strings.TrimSpace(place.yaml), tool, place.caller.User, d, place.layer, place.why)
			}
		}
	}

	// Every profile, and every tool it holds decided by it.
	if !reflect.DeepEqual(slices.Sorted(func(yield func(string) bool) {
		for k := range vocab.Profiles {
			if !yield(k) {
				return
			}
		}
	}), slices.Sorted(slices.Values(vocab.ProfileNames))) {
		t.Errorf("profiles %v, listed as %v", vocab.Profiles, vocab.ProfileNames)
	}
	model := tools.Caller{Channel: "console/stdin", User: "console", Actor: tools.Model}
	for _, name := range vocab.ProfileNames {
		cfg, err := parseConfig("policy: {profile: " + name + "}\n")
		if err != nil {
			t.Errorf("the config refuses profile %s: %v", name, err)
			continue
		}
		pol := FromConfig(cfg, board)
		for _, p := range vocab.Profiles[name] {
			if d := pol.Explain(model, witness(p)); d.Action != Allow || d.Verdicts[0].Why != "profile "+name+" includes it" {
				t.Errorf("profile %s, %s: %+v", name, witness(p), d)
			}
		}
		if d := pol.Explain(model, "sys/exec"); name != "full" && d.Decided != "profile" {
			t.Errorf("profile %s holds sys/exec: %+v", name, d)
		}
	}
}

// Every principal the doors establish may be named in policy.users and
// policy.owners, and the policy applies that principal's rules to a call
// through its door.
func TestConfigAcceptsEveryPrincipal(t *testing.T) {
	ids := []string{"pi"} // a console's user ($USER)
	for _, d := range vocab.Doors {
		id := strings.NewReplacer("ID", "42", "NAME", "kitchen", "N", "1000").Replace(d.Form)
		ids = append(ids, id)
	}
	for _, id := range ids {
		q := strconv.Quote(id)
		cfg, err := parseConfig("policy:\n  owners: [" + q + "]\n  users:\n    " + q + ": {\"group:gpio\": deny}\n")
		if err != nil {
			t.Errorf("the config refuses the principal %s: %v", q, err)
			continue
		}
		door, err := vocab.Principal(id)
		if err != nil {
			t.Fatal(err)
		}
		caller := tools.Caller{Channel: door.Channel, User: id, Actor: tools.Model}
		if d := FromConfig(cfg, board).Explain(caller, "gpio/write"); d.Decided != "user" || d.Why != "policy.users."+id+" \"group:gpio\": deny" {
			t.Errorf("%s: %+v", id, d)
		}
		if _, err := FromConfig(cfg, board).Elevate(id, 60e9); err != nil {
			t.Errorf("%s, an owner, may not elevate: %v", id, err)
		}
	}
}

// understood reports whether the policy decides some call by a rule of
// pattern p: a call of a built-in tool, of the MCP server's or skill's, or of
// the tool p itself names (each * read as a name), when the command language
// would parse that name. It asks the policy, never the vocabulary.
func understood(p string) bool {
	calls := []string{"gpio/read", "gpio/write", "serial/read", "i2c/scan", "spi/transfer", "sensor/read", "sys/exec", "sys/status", "auto/add", "memory/search", "srv/query", "weather/forecast"}
	if ns, name, ok := strings.Cut(strings.ReplaceAll(p, "*", "x"), "/"); ok && grammar.IsIdent(ns) && grammar.IsIdent(name) {
		calls = append(calls, ns+"/"+name)
	}
	pol := &Policy{Default: Allow, Tools: map[string]Action{p: Deny}, Explicit: map[string]bool{"srv": true}, Skills: board.Skills, ReadOnly: board.ReadOnly}
	for _, tool := range calls {
		if _, why := pol.Check(tools.Caller{Channel: "mcp", User: "mcp:x", Actor: tools.Program}, tool); why == fmt.Sprintf("policy.tools %q: deny", p) {
			return true
		}
	}
	return false
}

// The reverse: of generated patterns, well formed and not, the config
// accepts exactly those the policy decides some call by. A pattern the
// config accepts but the policy ignores would be a rule that silently does
// nothing; one it refuses but the policy understands, a rule nobody can
// write (group:readonly was one).
func TestConfigAcceptsOnlyWhatThePolicyUnderstands(t *testing.T) {
	parts := []string{"", "*", "**", "gpio", "srv", "weather", "x_y-z", "Read2", "1x", "-x", "_x", "g pio", "gpio.", "x*", "group:gpio"}
	var patterns []string
	for _, a := range parts {
		patterns = append(patterns, a)
		for _, b := range parts {
			patterns = append(patterns, a+"/"+b)
		}
	}
	for _, g := range vocab.GroupNames {
		patterns = append(patterns, g, strings.ToUpper(g), g+"s", " "+g, g+"/*", strings.TrimPrefix(g, "group:"), "groups:"+strings.TrimPrefix(g, "group:"))
	}
	patterns = append(patterns, "group:", "group:nope", "group:*", "group:gpio:x", "gpio/*/x", "gpio/x/y", "/", "*/*")
	accepted, refused := 0, 0
	for _, p := range patterns {
		q := strconv.Quote(p)
		_, err := parseConfig(mcpServer + "policy:\n  tools: {" + q + ": deny}\n")
		if got, want := err == nil, understood(p); got != want {
			t.Errorf("pattern %s: the config accepts it: %v; the policy decides a call by it: %v (%v)", q, got, want, err)
		} else if got {
			accepted++
		} else {
			refused++
		}
	}
	t.Logf("%d generated patterns: %d accepted and understood, %d refused and not", len(patterns), accepted, refused)
	if accepted < 20 || refused < 100 {
		t.Errorf("%d patterns accepted, %d refused: the generator no longer covers both", accepted, refused)
	}
}

// FromConfig maps every key of the policy section (and exec.mode, and the
// MCP servers' namespaces); a key added to config.Policy fails here until it
// is mapped or named as the authorizer's.
func TestFromConfigMapsEveryKey(t *testing.T) {
	cfg, err := parseConfig(mcpServer + `exec: {mode: deny}
policy:
  default: ask
  approval_timeout: 30s
  tools: {gpio/write: deny}
  channels: {telegram: {"group:readonly": allow}}
  profile: hardware
  users: {"telegram:7": {"*": deny}}
  automations: {porch: {gpio/read: ask}}
  elevated: ["group:exec"]
  owners: ["telegram:7", pi]
`)
	if err != nil {
		t.Fatal(err)
	}
	p := FromConfig(cfg, board)
	want := &Policy{Default: Ask, Tools: map[string]Action{"gpio/write": Deny},
		Channels: map[string]map[string]Action{"telegram": {"group:readonly": Allow}}, Profile: "hardware",
		Users: map[string]map[string]Action{"telegram:7": {"*": Deny}}, Automations: map[string]map[string]Action{"porch": {"gpio/read": Ask}},
		Elevated: []string{"group:exec"}, Owners: []string{"telegram:7", "pi"}, ExecMode: "deny",
		Explicit: map[string]bool{"srv": true}, Skills: board.Skills}
	if p.Elevation == nil || p.ReadOnly == nil || !p.ReadOnly("gpio/read") {
		t.Fatalf("elevation %v, read-only set: %v", p.Elevation, p.ReadOnly != nil)
	}
	p.Elevation, p.ReadOnly = nil, nil
	if !reflect.DeepEqual(p, want) {
		t.Errorf("FromConfig:\n%+v\nwant\n%+v", p, want)
	}
	mapped := []string{"Default", "ApprovalTimeout" /* the Authorizer's Timeout */, "Tools", "Channels", "Profile", "Users", "Automations", "Elevated", "Owners"}
	for i, f := range reflect.VisibleFields(reflect.TypeFor[config.Policy]()) {
		if i >= len(mapped) || f.Name != mapped[i] {
			t.Errorf("config.Policy.%s: is it mapped by FromConfig? (then list it here)", f.Name)
		}
	}
}
