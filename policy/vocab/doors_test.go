package vocab_test

import (
	"strings"
	"testing"

	"github.com/clawedge/clawedge/automations"
	"github.com/clawedge/clawedge/channels/mcpserver"
	"github.com/clawedge/clawedge/channels/web"
	"github.com/clawedge/clawedge/policy/vocab"
	"github.com/clawedge/clawedge/tools"
)

// The principals the vocabulary takes are the ones the doors make: every
// MCP host's caller (whatever name its handshake gives), and exactly the web
// device names and automation names those packages accept. A rule for an id
// no door gives would hold nobody; a door's id the config refused could not
// be given rules.
func TestPrincipalsAreTheDoors(t *testing.T) {
	names := []string{"", "a", "Z", "0", "9lives", "porch-off", "porch_off", "-x", "_x", "x.y", "a b", "tab\tx", "é", "Claude Desktop",
		"claude-desktop", "UPPER", "x/y", "x:y", strings.Repeat("a", 32), strings.Repeat("a", 33), strings.Repeat("b", 64), strings.Repeat("b", 65)}
	for _, n := range names {
		if c := mcpserver.Caller(n); !accepts(c.User) {
			t.Errorf("MCP host %q calls as %q, which policy.users refuses", n, c.User)
		}
		if got, want := accepts("web:"+n), web.CheckName(n) == nil; got != want {
			t.Errorf("web:%s: the vocabulary takes it: %v, the dashboard names a device so: %v", n, got, want)
		}
		if got, want := vocab.Automation(n), (&automations.Spec{Name: n}).Check() == nil || !strings.Contains((&automations.Spec{Name: n}).Check().Error(), "a name is"); got != want {
			t.Errorf("automation %q: the vocabulary takes it: %v, automations do: %v", n, got, want)
		}
	}
	// The ids the other doors make: the kernel's uid, Telegram's number.
	for _, id := range []string{"uid:0", "uid:1000", "telegram:42", "telegram:7000000001", "console", "mqtt"} {
		if d, err := vocab.Principal(tools.UserID(id + " (@ann)")); err != nil || d.Channel == "" {
			t.Errorf("%s: %v", id, err)
		}
	}
}

func accepts(id string) bool {
	_, err := vocab.Principal(id)
	return err == nil
}
