package main

// The ways around the policy a hostile tester found (issue "One door to the
// hardware"), each reproduced from outside against the built binary running
// as the daemon: now refused by the one authorizer, and in the audit trail as
// refused. The sandboxed child's attempts on the control socket are in
// sandbox_escape_e2e_test.go.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/clawedge/clawedge/channels/mqtt/mqtttest"
)

// daemonUp runs the built binary as the daemon of cfgPath until the test
// ends (startDaemon), and returns once its control socket is there.
func daemonUp(t *testing.T, cfgPath, dataDir string) {
	t.Helper()
	startDaemon(t, cfgPath, &lockedBuffer{})
	waitForSocket(t, filepath.Join(dataDir, "clawedge.sock"))
}

// auditHas polls the audit trail (through the daemon) until it holds every
// want, and returns it.
func auditHas(t *testing.T, cfgPath string, want ...string) string {
	t.Helper()
	var out string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		out = runCLI(t, 0, "", "audit", "--config", cfgPath, "-n", "200")
		missing := false
		for _, w := range want {
			missing = missing || !strings.Contains(out, w)
		}
		if !missing {
			return out
		}
	}
	t.Fatalf("the audit trail lacks %q:\n%s", want, out)
	return ""
}

// ledLevel reads the daemon's led as a person at the board would.
func ledLevel(t *testing.T, cfgPath string) string {
	t.Helper()
	return strings.TrimSpace(runCLI(t, 0, "", "exec", "--config", cfgPath, `@gpio/read{pin="led"}`))
}

// Escape 2: an MCP host that may not write a pin nor run a program, but may add
// automations, added ones whose do: lines did both. An automation now runs with
// its creator's rights: the host's denies hold every run.
func TestDoorsAutomationHasItsCreatorsRights(t *testing.T) {
	cfgPath, dataDir := writeConfig(t, `console: {stdin: false}
exec: {mode: allowlist, allow: [{program: /usr/bin/echo, args: ["^hi$"]}]}
policy:
  approval_timeout: 1s
  channels:
    mcp: {"gpio/write": deny, "sys/exec": deny, "auto/*": allow, "auto/add": allow}
`)
	daemonUp(t, cfgPath, dataDir)
	cs := goHost(t, cfgPath)
	defer cs.Close()
	for _, args := range []map[string]any{
		{"name": "blink", "every": "1s", "do": `@gpio/write{pin="led";value=1}`},
		{"name": "once", "in": "1s", "do": `@sys/exec{program="/usr/bin/echo";args=("hi")}`},
	} {
		r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "auto.add", Arguments: args})
		if err != nil || r.IsError {
			t.Fatalf("auto.add %v: %v %+v", args, err, r)
		}
	}
	out := auditHas(t, cfgPath,
		`auto/auto:blink @gpio/write{pin="led";value=1} -> failed: refused:`,
		`auto/auto:once @sys/exec{program="/usr/bin/echo";args=("hi")} -> failed: refused:`)
	if !strings.Contains(out, `policy.channels.mcp "gpio/write": deny`) || !strings.Contains(out, `policy.channels.mcp "sys/exec": deny`) {
		t.Errorf("the refusals do not name the creator's rules:\n%s", out)
	}
	if strings.Contains(out, "-> ok: led = 1") {
		t.Errorf("an automation wrote the pin:\n%s", out)
	}
	if got := ledLevel(t, cfgPath); got != "led = 0 (low)" {
		t.Errorf("led: %s", got)
	}
	if list := runCLI(t, 0, "", "auto", "list", "--config", cfgPath); !strings.Contains(list, fmt.Sprintf("added at run time by mcp:uid:%d (client go-host) (program)", os.Getuid())) {
		t.Errorf("auto list does not show the creator:\n%s", list)
	}
}

// Escape 3: a wildcard on channel mcp made sys/exec and auto/add run with no
// approval. Risky tools ask unless a rule names them exactly.
func TestDoorsWildcardDoesNotGrantRiskyTools(t *testing.T) {
	cfgPath, dataDir := writeConfig(t, `console: {stdin: false}
exec: {mode: allowlist, allow: [{program: /usr/bin/echo, args: ["^hi$"]}]}
policy:
  approval_timeout: 1s
  channels:
    mcp: {"*": allow}
`)
	daemonUp(t, cfgPath, dataDir)
	cs := goHost(t, cfgPath)
	defer cs.Close()
	for tool, args := range map[string]map[string]any{
		"sys.exec": {"program": "/usr/bin/echo", "args": []string{"hi"}},
		"auto.add": {"name": "later", "in": "1h", "do": `@gpio/write{pin="led";value=1}`},
	} {
		r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil || !r.IsError || !strings.Contains(mcpText(r), "nobody approved") {
			t.Errorf("%s ran with no approval: %v %+v", tool, err, r)
		}
	}
	host := fmt.Sprintf("mcp/mcp:uid:%d (client go-host)", os.Getuid())
	auditHas(t, cfgPath, host+` @sys/exec{args=("hi");program="/usr/bin/echo"} -> failed: refused: nobody approved`,
		host+` @auto/add{`)
	if list := runCLI(t, 0, "", "auto", "list", "--config", cfgPath); strings.Contains(list, "later") {
		t.Errorf("the automation was added:\n%s", list)
	}
}

// Escape 4: anyone on the control socket was whoever its "user" field said;
// {"text":"/elevated 24h","user":"telegram:42"} opened the owner's window.
// Who asks there is the peer's uid, from the kernel.
func TestDoorsControlSocketIdentityIsTheKernels(t *testing.T) {
	cfgPath, dataDir := writeConfig(t, `console: {stdin: false}
policy:
  owners: ["telegram:42"]
  elevated: ["group:gpio"]
`)
	daemonUp(t, cfgPath, dataDir)
	conn, err := net.Dial("unix", filepath.Join(dataDir, "clawedge.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintln(conn, `{"text":"/elevated 24h","user":"telegram:42"}`)
	line, err := bufio.NewReader(conn).ReadBytes('\n')
	if err != nil {
		t.Fatal(err)
	}
	var resp struct {
		Reply  string `json:"reply"`
		Failed bool   `json:"failed"`
	}
	json.Unmarshal(line, &resp)
	if !resp.Failed || !strings.Contains(resp.Reply, "only an owner") || !strings.Contains(resp.Reply, "uid:") || strings.Contains(resp.Reply, "Elevated until") {
		t.Fatalf("a claimed identity elevated: %s", line)
	}
	// What the uid typed is audited as the uid's, whatever the field says.
	fmt.Fprintln(conn, `{"text":"@gpio/read{pin=\"led\"}","user":"telegram:42"}`)
	auditHas(t, cfgPath, `control/uid:`)
	if out := runCLI(t, 0, "", "audit", "--config", cfgPath); strings.Contains(out, "telegram:42") {
		t.Errorf("the claimed name reached the audit trail:\n%s", out)
	}
}

// Escape 5: a set message from anyone on the broker switched a pin under
// policy.default: deny. MQTT is one principal, mqtt, held by the policy like
// any program; config check says when no one there may switch the outputs.
func TestDoorsMQTTIsHeldByThePolicy(t *testing.T) {
	b := mqtttest.Start(t, mqtttest.Options{})
	states := b.Subscribe(t, "clawedge/#")
	cfgPath, dataDir := writeConfig(t, fmt.Sprintf(`console: {stdin: false}
mqtt:
  broker: %s
  client_id: clawedge-doors
  discovery: {node: garage}
policy:
  default: deny
`, b.URL))
	if out := runCLI(t, 0, "", "config", "check", "--config", cfgPath); !strings.Contains(out, "warning: mqtt exposes the outputs led, relay") {
		t.Errorf("config check does not warn that nobody on the broker may switch the outputs:\n%s", out)
	}
	daemonUp(t, cfgPath, dataDir)
	if _, ok := states.Wait(10*time.Second, func(m mqtttest.Message) bool { return m.Topic == "clawedge/garage/led/state" }); !ok {
		t.Fatalf("the daemon did not come up on the broker: %+v", states.Messages())
	}
	b.Publish(t, "clawedge/garage/led/set", "ON", false)
	auditHas(t, cfgPath, `mqtt/mqtt @gpio/write{pin="led";value=1} -> failed: refused:`, "policy.default: deny")
	if got := ledLevel(t, cfgPath); got != "led = 0 (low)" {
		t.Errorf("an anonymous publish switched the pin: %s", got)
	}

	// Allowed by a rule on its channel, it switches.
	cfgPath2, dataDir2 := writeConfig(t, fmt.Sprintf(`console: {stdin: false}
mqtt:
  broker: %s
  client_id: clawedge-doors-2
  discovery: {node: shed}
policy:
  default: deny
  channels: {mqtt: {"gpio/write": allow}}
`, b.URL))
	if out := runCLI(t, 0, "", "config", "check", "--config", cfgPath2); strings.Contains(out, "warning") {
		t.Errorf("config check warns although mqtt may switch:\n%s", out)
	}
	daemonUp(t, cfgPath2, dataDir2)
	if _, ok := states.Wait(10*time.Second, func(m mqtttest.Message) bool { return m.Topic == "clawedge/shed/led/state" }); !ok {
		t.Fatalf("the second daemon did not come up: %+v", states.Messages())
	}
	b.Publish(t, "clawedge/shed/led/set", "ON", false)
	auditHas(t, cfgPath2, `mqtt/mqtt @gpio/write{pin="led";value=1} -> ok`)
}
