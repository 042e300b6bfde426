package policy

import (
	"errors"
	"testing"

	"github.com/clawedge/clawedge/tools"
)

func TestPolicyDecide(t *testing.T) {
	p := &Policy{
		Default:  Allow,
		Tools:    map[string]Action{"gpio/write": Ask, "i2c/*": Deny},
		Channels: map[string]map[string]Action{"telegram": {"gpio/*": Deny, "gpio/read": Allow}, "console": {"*": Allow}, "console/ttyS0": {"gpio/write": Deny}},
	}
	for _, c := range []struct {
		ch, tool string
		want     Action
	}{
		{"control", "gpio/write", Ask},
		{"control", "i2c/read", Deny},
		{"control", "sys/status", Allow},
		{"telegram", "gpio/write", Deny},
		{"telegram", "gpio/read", Allow},
		{"telegram", "i2c/scan", Deny},
		{"console/stdin", "gpio/write", Allow},
		{"console/ttyS0", "gpio/write", Deny},
		{"console/ttyS0", "i2c/read", Allow},
	} {
		if got := action(p.Rule(c.ch, c.tool)); got != c.want {
			t.Errorf("%s %s: %s, want %s", c.ch, c.tool, got, c.want)
		}
	}
	if action((*Policy)(nil).Rule("x", "y")) != Allow || action((&Policy{Default: Ask}).Rule("x", "a/b")) != Ask {
		t.Error("defaults")
	}
}

// Who may decide a request: only a person; at the board any; elsewhere the one
// it was made for, an owner or an approver (Telegram's owners); never someone
// their own rules deny the tool; never the model, a host, MQTT or an automation.
func TestWhoMayDecide(t *testing.T) {
	pol := &Policy{Owners: []string{"telegram:1"}, Users: map[string]map[string]Action{"telegram:7": {"gpio/write": Deny}}}
	a := &Authorizer{Policy: pol, Approvals: NewApprovals(), Approvers: []string{"telegram:2"}}
	p := Pending{Channel: "telegram", User: "telegram:5", Actor: tools.Model, Tool: "gpio/write", Call: `@gpio/write{pin="led";value=1}`}
	person := func(ch, user string) tools.Caller { return tools.Caller{Channel: ch, User: user, Actor: tools.Person} }
	for _, c := range []struct {
		by   tools.Caller
		want error
	}{
		{person("console/stdin", "console"), nil},
		{person("control", "uid:1000"), nil},
		{person("telegram", "telegram:5 (@ann)"), nil}, // made for them
		{person("telegram", "telegram:1"), nil},        // policy.owners
		{person("telegram", "telegram:2"), nil},        // an approver
		{person("telegram", "telegram:9"), ErrNotYours},
		{person("mcp", "telegram:5"), ErrNotYours}, // the same name on another door is not them
		{tools.Caller{Channel: "telegram", User: "telegram:5", Actor: tools.Model}, ErrNotAPerson},
		{tools.Caller{Channel: "mcp", User: "mcp:host", Actor: tools.Program}, ErrNotAPerson},
		{tools.Caller{Channel: "mqtt", User: "mqtt", Actor: tools.Program}, ErrNotAPerson},
		{tools.Caller{Channel: "auto", User: "auto:x", Actor: tools.Automation}, ErrNotAPerson},
		// A dashboard browser's role is the authorizer's to weigh too: only
		// an owner's may decide, and then only as the rules above say.
		{tools.Caller{Channel: "web", User: "web:phone", Actor: tools.Person, Role: tools.RoleOperator}, ErrNotYours},
		{tools.Caller{Channel: "web", User: "web:tablet", Actor: tools.Person, Role: tools.RoleViewer}, ErrNotYours},
		{tools.Caller{Channel: "web", User: "telegram:1", Actor: tools.Person, Role: tools.RoleOwner}, nil},
	} {
		if err := a.mayDecide(p, c.by); !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
			t.Errorf("%+v: %v, want %v", c.by, err, c.want)
		}
	}
	// Their own rules deny them the tool: they may not approve it for another.
	var ref *tools.Refusal
	if err := a.mayDecide(p, person("console/stdin", "telegram:7")); !errors.As(err, &ref) {
		t.Errorf("a person denied gpio/write approved it: %v", err)
	}
}

// action is the action of a Rule, without its reason.
func action(a Action, _ string) Action { return a }

// Another board's tools run only where a rule names them (garage.*,
// garage.gpio/*, the tool), "*" not enough; a risky tool there asks unless
// a rule names it exactly, as here.
func TestOtherBoardsTools(t *testing.T) {
	p := &Policy{Default: Allow, Tools: map[string]Action{"garage.*": Allow, "hall.gpio/*": Allow, "*": Allow, "attic.sys/exec": Allow}}
	for _, c := range []struct {
		tool string
		want Action
	}{
		{"garage.gpio/write", Allow},
		{"garage.sys/exec", Ask},
		{"garage.auto/add", Ask},
		{"hall.gpio/read", Allow},
		{"hall.sys/status", Deny},
		{"greenhouse.gpio/read", Deny},
		{"attic.sys/exec", Allow},
		{"sys/status", Allow},
	} {
		if got := action(p.Rule("control", c.tool)); got != c.want {
			t.Errorf("%s: %s, want %s", c.tool, got, c.want)
		}
	}
}
