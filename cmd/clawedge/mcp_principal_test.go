package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPHostIsNamedByItsDoor (issue 34): the daemon names an MCP host by
// what it cannot forge, never by the name in its handshake. Over stdio
// through the control socket it is mcp:uid:N, N this test's uid as the
// kernel reports it; over HTTP with the old single token it is mcp:token.
// Every host here calls itself "desktop", whose rules then hold none of them.
func TestMCPHostIsNamedByItsDoor(t *testing.T) {
	const token = "mcp-door-token-0123456789"
	t.Setenv("MCP_TOKEN", token)
	addr := freeAddr(t)
	uid := fmt.Sprintf("mcp:uid:%d", os.Getuid())
	cfgPath, dataDir := writeConfig(t, `console: {stdin: false}
mcp:
  serve: {listen: "`+addr+`", token: "${MCP_TOKEN}"}
policy:
  users:
    "mcp:desktop": {"*": deny}
    "`+uid+`": {"gpio/read": deny}
    "mcp:token": {"gpio/list": deny}
`)
	runInProcess(t, cfgPath, "warn")
	waitForSocket(t, filepath.Join(dataDir, "clawedge.sock"))
	connectAs := func(cs *mcp.ClientSession, err error) *mcp.ClientSession {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	c := &mcp.CommandTransport{Command: exec.Command(binPath, "mcp", "--config", cfgPath)}
	stdio := connectAs(mcp.NewClient(&mcp.Implementation{Name: "desktop", Version: "1"}, nil).Connect(context.Background(), c, nil))
	web := connectAs(mcp.NewClient(&mcp.Implementation{Name: "desktop", Version: "1"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp", HTTPClient: &http.Client{Transport: bearer(token)}}, nil))

	run := func(cs *mcp.ClientSession, tool string, args map[string]any) (ok bool) {
		t.Helper()
		r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
		return err == nil && !r.IsError
	}
	// mcp:desktop's deny of everything holds neither.
	if !run(stdio, "gpio.write", map[string]any{"pin": "led", "value": 1}) || !run(web, "gpio.write", map[string]any{"pin": "led", "value": 0}) {
		t.Error("the handshake's name desktop brought mcp:desktop's rules")
	}
	// Each door's own rules hold it, and only it.
	if run(stdio, "gpio.read", map[string]any{"pin": "button"}) || !run(web, "gpio.read", map[string]any{"pin": "button"}) {
		t.Errorf("%s's deny of gpio/read: stdio should be refused, HTTP not", uid)
	}
	if run(web, "gpio.list", nil) || !run(stdio, "gpio.list", nil) {
		t.Error("mcp:token's deny of gpio/list: HTTP should be refused, stdio not")
	}
	audit := runCLI(t, 0, "", "audit", "--config", cfgPath)
	for _, want := range []string{"mcp/" + uid + " (client desktop) @gpio/write", "mcp/mcp:token (client desktop) @gpio/write"} {
		if !strings.Contains(audit, want) {
			t.Errorf("no %q in the audit:\n%s", want, audit)
		}
	}
	if strings.Contains(audit, "mcp/mcp:desktop") || strings.Contains(audit, token) {
		t.Errorf("audit:\n%s", audit)
	}
}
