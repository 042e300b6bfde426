package main

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawedge/clawedge/daemon"
	"github.com/clawedge/clawedge/mcpclient"
)

// TestPrintMCPStatesEscapes: what an MCP server names its tools, or says in
// an error, reaches the terminal with its control characters escaped (ESC,
// BEL, CSI); and the note that MCP tools are denied is printed only when a
// listed tool is offered at no door.
func TestPrintMCPStatesEscapes(t *testing.T) {
	states := []mcpclient.State{{Name: "evil", State: "down: \x1b]52;c;aGk=\a boom\rready", Tools: []mcpclient.ToolState{
		{Name: "evil/read\x1b[2J", MCPName: "read\x1b[2J\x1b[31m"},
		{Name: "evil/list", MCPName: "list\u009b0m", Degraded: "bell\a"},
	}}}
	for _, c := range []struct {
		policy string
		denied bool
	}{
		{"", true},
		{"policy: {tools: {\"evil/*\": allow}}\n", false},
		{"policy: {channels: {telegram: {\"evil/list\": allow}}}\n", true}, // evil/read... is still denied everywhere
	} {
		cfgPath, _ := writeConfig(t, "mcp: {servers: {evil: {command: [\"true\"]}}}\n"+c.policy)
		cfg, err := loadConfig(&globalFlags{config: cfgPath})
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		core, err := daemon.Listing(cfg, daemon.Options{})
		if err != nil {
			t.Fatal(err)
		}
		printMCPStates(&out, states, core.Policy())
		got := out.String()
		if strings.ContainsAny(got, "\x1b\a\r\u009b") {
			t.Errorf("policy %q: a control character reached the terminal: %q", c.policy, got)
		}
		for _, want := range []string{`evil/read\x1b[2J`, `\x1b]52;c;aGk=\a boom\rready`, `list\u009b0m`, `bell\a`} {
			if !strings.Contains(got, want) {
				t.Errorf("policy %q: no %s (escaped) in\n%s", c.policy, want, got)
			}
		}
		if has := strings.Contains(got, "denied until a policy rule names them"); has != c.denied {
			t.Errorf("policy %q: the note that MCP tools are denied printed: %v, want %v\n%s", c.policy, has, c.denied, got)
		}
		if c.denied && (!strings.Contains(got, "denied now: evil/read") || strings.Contains(got, "evil/list.") != (c.policy == "")) {
			t.Errorf("policy %q: the note does not say which tools:\n%s", c.policy, got)
		}
	}
}

// TestChatWithoutDaemonOffersMCPTools: `clawedge chat` with no daemon starts
// the configured MCP servers as the daemon does (here the reference server,
// confined with the folder it declares), says so in one line, and their
// tools answer.
func TestChatWithoutDaemonOffersMCPTools(t *testing.T) {
	nm := openToAll(t, mcpNodeModules(t))
	// The package's own command, as npm installs it: a symlink to a script
	// whose #! line runs env, which runs node; the start grants those two.
	bin := filepath.Join(nm, ".bin", "mcp-server-everything")
	cfgPath, _ := writeConfig(t, fmt.Sprintf("mcp: {servers: {board: {command: [%q, stdio], read: [%q], timeout: 20s}}}\npolicy: {tools: {\"board/*\": allow}}\n", bin, nm))
	out := runCLI(t, 0, `@board/echo{message="led = 1"}`+"\n", "chat", "--config", cfgPath)
	if !strings.Contains(out, "MCP servers, started for this chat: board ready (") {
		t.Errorf("no line about the MCP servers:\n%s", out)
	}
	if !strings.Contains(out, "led = 1") {
		t.Errorf("the MCP server's echo did not answer:\n%s", out)
	}
	// And `clawedge tools` says nothing of a denial the policy does not
	// make, and says what the server may reach.
	if out := runCLI(t, 0, "", "tools", "--config", cfgPath); strings.Contains(out, "denied until") || !strings.Contains(out, "board/echo") ||
		!strings.Contains(out, "sandboxed, a uid of its own: reads its program and "+nm) {
		t.Errorf("clawedge tools with a rule for board/*:\n%s", out)
	}
}
