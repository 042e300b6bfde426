package daemon

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clawedge/clawedge/agent"
	"github.com/clawedge/clawedge/agent/agenttest"
	"github.com/clawedge/clawedge/automations"
	"github.com/clawedge/clawedge/channels"
	"github.com/clawedge/clawedge/channels/mcpserver"
	"github.com/clawedge/clawedge/channels/mqtt"
	"github.com/clawedge/clawedge/config"
	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/llm"
	"github.com/clawedge/clawedge/policy"
	"github.com/clawedge/clawedge/tools"
)

// countingTool runs by counting: whether a door reached it is the count.
type countingTool struct {
	name string
	runs *atomic.Int64
}

func (c countingTool) Spec() grammar.ToolSpec { return grammar.ToolSpec{Name: c.name, Doc: "counts"} }
func (c countingTool) Run(context.Context, grammar.Args) (tools.Result, error) {
	c.runs.Add(1)
	return tools.Result{Text: "ran " + c.name}, nil
}

// refusals counts the refused calls the call path audits.
type refusals struct {
	n      atomic.Int64
	nextID atomic.Uint64
}

func (r *refusals) Intent(who, channel, command string) (uint64, error) { return r.nextID.Add(1), nil }
func (r *refusals) Outcome(id uint64, ok bool, detail string) error {
	if !ok && strings.HasPrefix(detail, "refused: ") {
		r.n.Add(1)
	}
	return nil
}

// door is one way in, as the daemon wires it: a principal (as `policy explain
// --as` names it) and the door's real entry, which makes the call as that door
// does.
type door struct {
	as    string
	enter func(r *tools.Runner, p *policy.Policy, tool string)
}

// The doors × principals × tools × policies table: every door's real entry,
// for thousands of combinations of layers, reaches a tool exactly when the
// decision `policy explain` prints for that principal is allow. An ask is never
// answered here, so it expires and nothing runs; a deny is audited as refused.
func TestEveryDoorReachesOnlyWhatTheAuthorizerAllows(t *testing.T) {
	toolNames := []string{"gpio/read", "gpio/write", "i2c/read", "sys/exec", "auto/add", "sys/status"}
	ctx := context.Background()
	line := func(tool string) string { return "@" + tool + "{}" }
	person := func(channel, user string) func(*tools.Runner, *policy.Policy, string) {
		return func(r *tools.Runner, _ *policy.Policy, tool string) {
			d := &channels.Dispatcher{Runner: r}
			d.Respond(ctx, channels.Message{Channel: channel, User: user, Text: line(tool)})
		}
	}
	model := func(channel, user string) func(*tools.Runner, *policy.Policy, string) {
		return func(r *tools.Runner, p *policy.Policy, tool string) {
			prov := agenttest.New(agenttest.Step{Text: fmt.Sprintf("<tool_call>\n{\"name\": %q, \"arguments\": {}}\n</tool_call>", tool)},
				agenttest.Step{Text: "done"})
			ag, err := agent.New(agent.Options{Provider: prov, Runner: r, Policy: p, Limits: agent.Limits{ApprovalTimeout: time.Millisecond}})
			if err != nil {
				t.Fatal(err)
			}
			(loopAgent{a: ag}).Reply(ctx, channels.Message{Channel: channel, User: user, Text: "do it"})
		}
	}
	doors := []door{
		{"console", person("console/stdin", "console")},
		{"uid:1000", person("control", "uid:1000")},
		{"telegram:9", person("telegram", "telegram:9")},
		{"telegram:42", person("telegram", "telegram:42")},
		{"model:telegram:9", model("telegram", "telegram:9")},
		{"model:console", model("console/stdin", "console")},
		{"mcp:host", func(r *tools.Runner, p *policy.Policy, tool string) {
			mcpserver.Local{Runner: r, Policy: p}.Call(ctx, mcpserver.Host{Token: "host", Client: "not-host"}, tool, nil)
		}},
		{"mqtt", func(r *tools.Runner, _ *policy.Policy, tool string) { channels.Run(ctx, r, mqtt.Caller, line(tool)) }},
		{"auto:porch", func(r *tools.Runner, _ *policy.Policy, tool string) {
			channels.Run(ctx, r, automations.Caller(automations.Spec{Name: "porch"}), line(tool))
		}},
	}
	// Added at run time by an MCP host: its runs have the host's rights.
	added := automations.Spec{Name: "added", Added: true, Creator: &tools.Principal{Channel: "mcp", User: "mcp:host", Actor: tools.Program}}
	addedDoor := func(r *tools.Runner, _ *policy.Policy, tool string) {
		channels.Run(ctx, r, automations.Caller(added), line(tool))
	}

	var policies []config.Policy
	for _, def := range []string{"allow", "deny", "ask"} {
		for _, channels := range []map[string]map[string]string{
			nil,
			{"mcp": {"*": "allow"}, "mqtt": {"*": "allow"}, "telegram": {"*": "allow"}},
			{"telegram": {"gpio/*": "deny"}, "mqtt": {"gpio/write": "allow"}, "mcp": {"gpio/write": "deny", "auto/add": "allow"}},
			{"console": {"sys/exec": "allow", "gpio/*": "ask"}, "mcp": {"sys/*": "allow"}},
		} {
			for _, profile := range []string{"", "minimal", "hardware"} {
				for _, users := range []map[string]map[string]string{nil, {"telegram:9": {"gpio/write": "deny"}, "mcp:host": {"i2c/*": "ask"}, "uid:1000": {"sys/*": "deny"}}} {
					for _, rules := range []map[string]string{nil, {"gpio/write": "ask", "sys/exec": "allow", "auto/*": "allow"}} {
						policies = append(policies, config.Policy{Default: def, Channels: channels, Tools: rules, Profile: profile, Users: users,
							Automations: map[string]map[string]string{"porch": {"i2c/read": "deny"}}})
					}
				}
			}
		}
	}
	n := 0
	for _, pc := range policies {
		a := newCore(&config.Config{Policy: pc, Exec: config.Exec{Mode: "full"}, Automations: map[string]config.Automation{"porch": {}}}, Options{})
		pol := a.policy()
		for _, tool := range toolNames {
			for _, d := range append(doors, door{"auto:added", addedDoor}) {
				n++
				reg := tools.NewRegistry()
				runs := map[string]*atomic.Int64{}
				for _, name := range toolNames {
					runs[name] = &atomic.Int64{}
					if err := reg.Register(countingTool{name, runs[name]}); err != nil {
						t.Fatal(err)
					}
				}
				audit := &refusals{}
				auth := &policy.Authorizer{Policy: pol, Approvals: policy.NewApprovals(), Timeout: time.Millisecond}
				r := &tools.Runner{Registry: reg, Audit: audit, Authorizer: auth}
				d.enter(r, pol, tool)

				caller, err := policy.CallerOf(d.as, "")
				if err != nil {
					t.Fatal(err)
				}
				switch d.as {
				case "auto:porch":
					caller = automations.Caller(automations.Spec{Name: "porch"})
				case "auto:added":
					caller = automations.Caller(added)
				}
				want := pol.Explain(caller, tool)
				where := fmt.Sprintf("policy %+v, %s calls %s", pc, d.as, tool)
				if ran := runs[tool].Load(); (ran == 1) != (want.Action == policy.Allow) || ran > 1 {
					t.Fatalf("%s: ran %d times, but policy explain says %s (%s: %s)", where, ran, want.Action, want.Decided, want.Why)
				}
				for name, c := range runs {
					if name != tool && c.Load() != 0 {
						t.Fatalf("%s: %s ran too", where, name)
					}
				}
				// The model is not offered a denied tool, so its call never
				// reaches the path; every other door's denied call is audited as refused.
				if want.Action == policy.Deny && !strings.HasPrefix(d.as, "model:") && audit.n.Load() != 1 {
					t.Fatalf("%s: denied, but %d refusals audited", where, audit.n.Load())
				}
			}
		}
	}
	if n < 5000 {
		t.Fatalf("only %d combinations", n)
	}
}

var _ llm.Provider = (*agenttest.Provider)(nil)
