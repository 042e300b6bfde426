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

// The principals the vocabulary takes are the ones the doors make: an MCP
// host's caller (its token's name or uid:N, whatever name its handshake
// gives, which is never part of the principal), and exactly the web device
// names and automation names those packages accept. A rule for an id
// no door gives would hold nobody; a door's id the config refused could not
// be given rules.
func TestPrincipalsAreTheDoors(t *testing.T) {
	names := []string{"", "a", "Z", "0", "9lives", "porch-off", "porch_off", "-x", "_x", "x.y", "a b", "tab\tx", "é", "Claude Desktop",
		"claude-desktop", "UPPER", "x/y", "x:y", strings.Repeat("a", 32), strings.Repeat("a", 33), strings.Repeat("b", 64), strings.Repeat("b", 65)}
	for _, n := range names {
		for _, principal := range []string{"desktop", "token", "uid:1000"} {
			if c := mcpserver.Caller(principal, n); tools.UserID(c.User) != "mcp:"+principal || !accepts(tools.UserID(c.User)) {
				t.Errorf("MCP host %s saying %q calls as %q", principal, n, c.User)
			}
		}
		if got, want := accepts("mcp:"+n), vocab.MCPHost(n); got != want {
			t.Errorf("mcp:%s: the vocabulary takes it: %v, a token may be named so: %v", n, got, want)
		}
		if got, want := accepts("web:"+n), web.CheckName(n) == nil; got != want {
			t.Errorf("web:%s: the vocabulary takes it: %v, the dashboard names a device so: %v", n, got, want)
		}
		if got, want := vocab.Automation(n), (&automations.Spec{Name: n}).Check() == nil || !strings.Contains((&automations.Spec{Name: n}).Check().Error(), "a name is"); got != want {
			t.Errorf("automation %q: the vocabulary takes it: %v, automations do: %v", n, got, want)
		}
	}
	// The ids the other doors make: the kernel's uid, Telegram's number.
	for _, id := range []string{"uid:0", "uid:1000", "mcp:uid:1000", "mcp:token", "telegram:42", "telegram:7000000001", "console", "mqtt"} {
		if d, err := vocab.Principal(tools.UserID(id + " (@ann)")); err != nil || d.Channel == "" {
			t.Errorf("%s: %v", id, err)
		}
	}
}

func accepts(id string) bool {
	_, err := vocab.Principal(id)
	return err == nil
}

// policy.users keys for mcp: are the names a door gives, no more: a token's
// name (as mcp.serve.tokens takes it) or uid:N; a name a host might give in
// its handshake, which names nobody, is refused.
func TestMCPPrincipalsAreTheDoorsNames(t *testing.T) {
	for _, id := range []string{"mcp:desktop", "mcp:phone-2", "mcp:token", "mcp:uid:0", "mcp:uid:1000"} {
		if !accepts(id) {
			t.Errorf("%s refused", id)
		}
	}
	for _, id := range []string{"mcp:Claude Desktop", "mcp:Claude_Desktop", "mcp:claude.ai", "mcp:unnamed.1", "mcp:uid:", "mcp:uid:x", "mcp:2fa", "mcp:" + strings.Repeat("a", 33), "mcp:"} {
		if accepts(id) {
			t.Errorf("%s accepted: no door names a host so", id)
		}
	}
}
