package config

import (
	"reflect"
	"testing"
	"time"
)

const policySrc = `
policy:
  default: ask
  approval_timeout: 90s
  tools:
    gpio/write: ask
    "i2c/*": deny
    "*": allow
  channels:
    telegram: {"gpio/*": ask, gpio/read: allow}
    console/ttyS0: {gpio/write: deny}
agent:
  max_iterations: 5
  max_tokens: 8000
  max_time: 1m
  max_cost: 0.25
  max_repeats: 3
  reply_tokens: 256
  local_tools: 8
  calls_per_output: 6
  history: 12
  tool_choice: required
  tool_output: {"*": 1000, serial/read: 4000}
  system: "The relay opens the garage door."
`

func TestPolicyParse(t *testing.T) {
	c := mustParse(t, policySrc)
	wantP := Policy{Default: "ask", ApprovalTimeout: Duration(90 * time.Second),
		Tools:    map[string]string{"gpio/write": "ask", "i2c/*": "deny", "*": "allow"},
		Channels: map[string]map[string]string{"telegram": {"gpio/*": "ask", "gpio/read": "allow"}, "console/ttyS0": {"gpio/write": "deny"}},
		Profile:  "full"}
	wantA := Agent{MaxIterations: 5, MaxTokens: 8000, MaxTime: Duration(time.Minute), MaxCost: 0.25, MaxRepeats: 3,
		ReplyTokens: 256, LocalTools: 8, CallsPerOutput: 6, History: 12, ToolChoice: "required", ToolOutput: map[string]int{"*": 1000, "serial/read": 4000},
		System: "The relay opens the garage door."}
	if !reflect.DeepEqual(c.Policy, wantP) {
		t.Errorf("policy %+v\nwant   %+v", c.Policy, wantP)
	}
	if !reflect.DeepEqual(c.Agent, wantA) {
		t.Errorf("agent %+v\nwant  %+v", c.Agent, wantA)
	}
	// Sections not written keep the defaults; a partial one keeps the rest.
	c = mustParse(t, "agent: {max_iterations: 3}\n")
	if c.Policy.Default != "allow" || c.Policy.ApprovalTimeout != Duration(2*time.Minute) || c.Agent.MaxIterations != 3 || c.Agent.MaxTokens != 48000 || c.Agent.ToolChoice != "auto" {
		t.Errorf("%+v %+v", c.Policy, c.Agent)
	}
}

func TestPolicyRoundTrip(t *testing.T) {
	for _, src := range []string{policySrc, "", "policy: {tools: {}}\n"} {
		c := mustParse(t, src)
		out, err := c.Redacted()
		if err != nil {
			t.Fatal(err)
		}
		c2 := mustParse(t, string(out))
		c2.Source = c.Source
		if !reflect.DeepEqual(c.Policy, c2.Policy) || !reflect.DeepEqual(c.Agent, c2.Agent) {
			t.Errorf("round trip changed it:\n%+v %+v\n%+v %+v\n%s", c.Policy, c.Agent, c2.Policy, c2.Agent, out)
		}
	}
}

func TestPolicyErrors(t *testing.T) {
	for _, tc := range []struct{ src, at, msg string }{
		{"policy: {defualt: ask}\n", "defualt", `unknown key "defualt" in policy (valid: default, approval_timeout, tools, channels, profile, users, automations, elevated, owners)`},
		{"policy: {default: maybe}\n", "maybe", `policy.default: must be allow, deny or ask, found "maybe"`},
		{"policy:\n  tools:\n    gpio/write: yes\n", "yes", `policy.tools.gpio/write: must be allow, deny or ask, found "yes"`},
		{"policy:\n  tools:\n    gpio: ask\n", "gpio", `policy.tools: "gpio" is not a tool pattern: want ns/name, ns/*, BOARD.*, * or a group (group:auto, group:exec, group:gpio, group:i2c, group:mcp, group:readonly, group:sensors, group:serial, group:skills, group:spi)`},
		{"policy:\n  channels:\n    mcp: {\"group:readnly\": allow}\n", `"group:readnly"`, `policy.channels.mcp: "group:readnly" is not a tool pattern: no such group; want one of group:auto,`},
		{"policy:\n  tools:\n    \"gpio/**\": ask\n", `"gpio/**"`, `is not a tool pattern`},
		{"policy:\n  channels:\n    telegramm: {\"*\": ask}\n", "telegramm", `policy.channels: unknown channel "telegramm"`},
		{"policy:\n  channels:\n    telegram: {gpio/write: never}\n", "never", `policy.channels.telegram.gpio/write: must be allow, deny or ask`},
		{"policy:\n  channels:\n    telegram: ask\n", "ask", `policy.channels.telegram: expected a mapping of names`},
		{"policy: {approval_timeout: 0s}\n", "0s", `policy.approval_timeout: must be between 1s and 24h`},
		{"agent: {max_iterations: 0}\n", "0}", `agent.max_iterations: must be from 1 to 100, found 0`},
		{"agent: {max_tokens: ten}\n", "ten", `agent.max_tokens: expected an integer`},
		{"agent: {max_cost: -1}\n", "-1", `agent.max_cost: must not be negative`},
		{"agent: {max_time: 5}\n", "5}", `agent.max_time: expected a duration`},
		{"agent:\n  tool_output: {serial/read: 10}\n", "10", `agent.tool_output.serial/read: must be from 64 to 1048576 bytes, found 10`},
		{"agent:\n  tool_output: {serial: 100}\n", "serial", `agent.tool_output: "serial" is not a tool pattern`},
		// Matched without a running policy, a group of the board's tools would match nothing.
		{"agent:\n  tool_output: {\"group:readonly\": 100}\n", `"group:readonly"`, `agent.tool_output: "group:readonly" has members only a running policy knows`},
		{"agent: {tool_choice: any}\n", "any", `agent.tool_choice: must be auto, required or none, found "any"`},
		{"agent: {sytem: x}\n", "sytem", `unknown key "sytem" in agent`},
	} {
		problemAt(t, tc.src, tc.at, tc.msg)
	}
}

func TestPolicyLayersParse(t *testing.T) {
	c := mustParse(t, `policy:
  profile: hardware
  users: {"telegram:123": {"group:gpio": allow, sys/exec: deny}}
  automations: {porch-off: {"*": deny, gpio/write: allow}}
  elevated: ["group:exec", gpio/pulse]
  owners: ["telegram:123", console]
`)
	p := c.Policy
	if p.Profile != "hardware" || p.Users["telegram:123"]["group:gpio"] != "allow" || p.Automations["porch-off"]["*"] != "deny" ||
		!reflect.DeepEqual(p.Elevated, []string{"group:exec", "gpio/pulse"}) || !reflect.DeepEqual(p.Owners, []string{"telegram:123", "console"}) {
		t.Errorf("policy %+v", p)
	}
	out, _ := c.Redacted()
	if c2 := mustParse(t, string(out)); !reflect.DeepEqual(c, c2) {
		t.Errorf("round trip changed the policy:\n%s", out)
	}
	for _, tc := range []struct{ src, at, msg string }{
		{"policy: {profile: everything}\n", "everything", "policy.profile"},
		{"policy: {elevated: [\"group:nope\"]}\n", "\"group:nope\"", "is not a tool pattern"},
		{"policy: {users: {\"telegram:1\": {\"group:gpoi\": allow}}}\n", "\"group:gpoi\"", "is not a tool pattern"},
		{"policy: {owners: [\"telegram 1\"]}\n", "\"telegram 1\"", `policy.owners[0]: "telegram 1" is not a principal: want console, uid:N, telegram:ID, web:NAME, mcp:NAME, mqtt, board:NAME, auto:NAME or a console's user name`},
		// Principals the policy would never see: each key is a door's form.
		{"policy: {users: {\"telegram:@ann\": {\"*\": deny}}}\n", "\"telegram:@ann\"", `policy.users: "telegram:@ann" is not a principal: want telegram:ID`},
		{"policy: {users: {\"telegrm:1\": {\"*\": deny}}}\n", "\"telegrm:1\"", `policy.users: "telegrm:1" is not a principal: no door "telegrm"`},
		{"policy: {users: {\"model:telegram:1\": {\"*\": deny}}}\n", "\"model:telegram:1\"", `the model acts for one, and that principal's rules hold its model too; name "telegram:1"`},
		{"policy: {owners: [\"uid:root\"]}\n", "\"uid:root\"", `policy.owners[0]: "uid:root" is not a principal: want uid:N`},
		{"policy: {users: {\"web:My Phone\": {\"*\": deny}}}\n", "\"web:My Phone\"", `want web:NAME, NAME a paired device's`},
		{"policy: {users: {\"mcp:claude desktop\": {\"*\": deny}}}\n", "\"mcp:claude desktop\"", `want mcp:NAME, NAME the name of an mcp.serve.tokens entry`},
		{"policy: {automations: {Porch: {\"*\": deny}}}\n", "Porch", `policy.automations: "Porch" is not an automation name`},
	} {
		problemAt(t, tc.src, tc.at, tc.msg)
	}
}
