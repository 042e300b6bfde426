package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/hal/sim"
)

// mcpNodeModules is where scripts/fetch-mcp.sh installs the TypeScript SDK and the
// reference server. Without node or them the test skips, unless
// CLAWEDGE_REQUIRE_MCP is set (scripts/test.sh sets it, so CI fails instead).
func mcpNodeModules(t *testing.T) string {
	t.Helper()
	nm, _ := filepath.Abs(filepath.Join("..", "..", "third_party", "mcp", "node_modules"))
	_, nodeErr := exec.LookPath("node")
	_, sdkErr := os.Stat(filepath.Join(nm, "@modelcontextprotocol", "sdk", "package.json"))
	if nodeErr != nil || sdkErr != nil {
		if os.Getenv("CLAWEDGE_REQUIRE_MCP") != "" {
			t.Fatalf("CLAWEDGE_REQUIRE_MCP is set but node or %s is missing (run scripts/fetch-mcp.sh): %v %v", nm, nodeErr, sdkErr)
		}
		t.Skip("node or the MCP npm packages are missing (scripts/fetch-mcp.sh)")
	}
	return nm
}

// nodeMCP runs testdata/mcp-client.cjs and decodes what it printed.
func nodeMCP(t *testing.T, nm string, args ...string) (out struct {
	Tools []struct {
		Name         string         `json:"name"`
		Description  string         `json:"description"`
		InputSchema  map[string]any `json:"inputSchema"`
		OutputSchema map[string]any `json:"outputSchema"`
	} `json:"tools"`
	Result struct {
		Content           []struct{ Text string } `json:"content"`
		IsError           bool                    `json:"isError"`
		StructuredContent map[string]any          `json:"structuredContent"`
	} `json:"result"`
}, err error) {
	t.Helper()
	cmd := exec.Command("node", append([]string{"testdata/mcp-client.cjs"}, args...)...)
	cmd.Env = append(os.Environ(), "NODE_PATH="+nm)
	cmd.Stderr = os.Stderr
	b, err := cmd.Output()
	if err != nil {
		return out, err
	}
	return out, json.Unmarshal(b, &out)
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestMCPServerWithTypeScriptClient: the TypeScript SDK, as an MCP host, lists
// and calls the daemon's tools through `clawedge mcp` on stdio (forwarded over
// the control socket) and over streamable HTTP with the bearer token; each
// gpio.write moves the simulated pin. The host calls itself node-host, which
// decides nothing: over stdio it is mcp:uid:N, the user the kernel reports on
// the control socket, over HTTP mcp:node, its token's name.
func TestMCPServerWithTypeScriptClient(t *testing.T) {
	nm := mcpNodeModules(t)
	const token = "mcp-e2e-token-0123456789"
	t.Setenv("MCP_TOKEN", token)
	var board *sim.Sim
	var mu sync.Mutex
	newSim = func() hal.Driver { mu.Lock(); defer mu.Unlock(); board = sim.New(); return board }
	defer func() { newSim = func() hal.Driver { return sim.New() } }()
	addr := freeAddr(t)
	cfgPath, dataDir := writeConfig(t, `console: {stdin: false}
policy:
  channels:
    mcp: {"i2c/*": deny}
mcp:
  serve: {listen: "`+addr+`", tokens: {node: "${MCP_TOKEN}"}}
`)
	runInProcess(t, cfgPath, "warn")
	waitForSocket(t, filepath.Join(dataDir, "clawedge.sock"))
	level := func() hal.Level { mu.Lock(); defer mu.Unlock(); return board.Level(17) }

	out, err := nodeMCP(t, nm, "stdio", "gpio.write", `{"pin":"led","value":1}`, "--", binPath, "mcp", "--config", cfgPath)
	if err != nil {
		t.Fatalf("node client over stdio: %v", err)
	}
	var names []string
	for _, tl := range out.Tools {
		names = append(names, tl.Name)
		if strings.HasPrefix(tl.Name, "i2c.") {
			t.Errorf("denied tool %s listed", tl.Name)
		}
		if tl.Name == "gpio.write" && (tl.Description == "" || tl.InputSchema["type"] != "object") {
			t.Errorf("gpio.write: %+v", tl)
		}
	}
	if !strings.Contains(strings.Join(names, ","), "gpio.write") {
		t.Fatalf("tools: %v", names)
	}
	if out.Result.IsError || level() != hal.High {
		t.Fatalf("gpio.write over stdio: %+v, led %v", out.Result, level())
	}
	// gpio.write declares its result (outputSchema), and the SDK, which
	// checks structuredContent against it, accepted the result.
	if sc := out.Result.StructuredContent; sc["pin"] != "led" || sc["value"] != 1.0 || sc["level"] != "high" {
		t.Errorf("gpio.write over stdio: structuredContent %v", sc)
	}
	for _, tl := range out.Tools {
		if tl.Name == "gpio.write" && tl.OutputSchema["type"] != "object" {
			t.Errorf("gpio.write has no outputSchema: %v", tl.OutputSchema)
		}
	}

	out, err = nodeMCP(t, nm, "http", "gpio.write", `{"pin":"led","value":0}`, "http://"+addr+"/mcp", token)
	if err != nil || out.Result.IsError || level() != hal.Low {
		t.Fatalf("gpio.write over HTTP: %v %+v, led %v", err, out.Result, level())
	}
	if sc := out.Result.StructuredContent; sc["value"] != 0.0 || sc["level"] != "low" {
		t.Errorf("gpio.write over HTTP: structuredContent %v", sc)
	}
	out, err = nodeMCP(t, nm, "http", "gpio.list", `{}`, "http://"+addr+"/mcp", token)
	if pins, _ := out.Result.StructuredContent["pins"].([]any); err != nil || len(pins) == 0 {
		t.Errorf("gpio.list over HTTP: %v %+v", err, out.Result)
	}
	if _, err := nodeMCP(t, nm, "http", "gpio.write", `{"pin":"led","value":1}`, "http://"+addr+"/mcp", "wrong-token"); err == nil || level() != hal.Low {
		t.Errorf("a wrong token was let in (led %v)", level())
	}

	audit := runCLI(t, 0, "", "audit", "--config", cfgPath)
	for _, who := range []string{fmt.Sprintf("mcp:uid:%d", os.Getuid()), "mcp:node"} {
		if n := strings.Count(audit, "mcp/"+who+" (client node-host) @gpio/write"); n != 1 {
			t.Errorf("want 1 gpio/write entry by %s, got %d:\n%s", who, n, audit)
		}
	}
	if strings.Contains(audit, token) {
		t.Error("the token is in the audit trail")
	}
}

// TestMCPStdioOpensTheBoardWithoutDaemon: with no daemon, `clawedge mcp` opens
// the store and the board itself (our Go client starts it; the TypeScript SDK test above is the independent one).
func TestMCPStdioOpensTheBoardWithoutDaemon(t *testing.T) {
	cfgPath, _ := writeConfig(t, "console: {stdin: false}\n")
	cs := goHost(t, cfgPath)
	r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "gpio.write", Arguments: map[string]any{"pin": "led", "value": 1}})
	if err != nil || r.IsError {
		t.Fatalf("gpio.write: %v %+v", err, r)
	}
	r, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "gpio.write", Arguments: map[string]any{"pin": "nope", "value": 1}})
	if err != nil || !r.IsError || !strings.Contains(mcpText(r), "nope") {
		t.Fatalf("bad pin: %v %+v", err, r)
	}
	cs.Close()
	audit := runCLI(t, 0, "", "audit", "--config", cfgPath)
	if !strings.Contains(audit, fmt.Sprintf("mcp/mcp:uid:%d (client go-host) @gpio/write", os.Getuid())) {
		t.Errorf("audit:\n%s", audit)
	}
}

// goHost starts `clawedge mcp` with cfgPath as an MCP host named go-host would.
func goHost(t *testing.T, cfgPath string) *mcp.ClientSession {
	t.Helper()
	c := &mcp.CommandTransport{Command: exec.Command(binPath, "mcp", "--config", cfgPath)}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "go-host", Version: "1"}, nil).Connect(context.Background(), c, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// mcpText is the text of a tool result.
func mcpText(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestMCPClientInDaemon: the daemon starts the reference server, registers its
// tools as everything/<tool>; `clawedge tools` and doctor show it ready; a person's
// exec runs everything/echo; for an MCP host (channel mcp) only the tool the
// policy names is offered, and the others are refused by any spelling.
func TestMCPClientInDaemon(t *testing.T) {
	nm := openToAll(t, mcpNodeModules(t))
	js := filepath.Join(nm, "@modelcontextprotocol", "server-everything", "dist", "index.js")
	cfgPath, dataDir := writeConfig(t, `console: {stdin: false}
policy:
  tools: {"everything/echo": allow, "*": allow}
mcp:
  servers:
    everything: {command: ["node", "`+js+`", "stdio"], read: ["`+nm+`"], timeout: 20s}
`)
	runInProcess(t, cfgPath, "warn")
	waitForSocket(t, filepath.Join(dataDir, "clawedge.sock"))
	if out := waitMCPReady(t, cfgPath, "everything"); !strings.Contains(out, "everything/get-sum") {
		t.Fatalf("tools:\n%s", out)
	}
	if out := runCLI(t, 0, "", "exec", "--config", cfgPath, `@everything/echo{message="hi there"}`); !strings.Contains(out, "hi there") {
		t.Errorf("exec echo: %s", out)
	}
	if out := runCLI(t, 0, "", "doctor", "--config", cfgPath); !strings.Contains(out, "mcp server everything: ready") {
		t.Errorf("doctor:\n%s", out)
	}

	cs := goHost(t, cfgPath)
	defer cs.Close()
	lt, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range lt.Tools {
		names = append(names, tl.Name)
	}
	all := strings.Join(names, " ")
	if !strings.Contains(all, "everything.echo") || strings.Contains(all, "everything.get-sum") {
		t.Errorf("tools offered on channel mcp: %s", all)
	}
	r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "everything.echo", Arguments: map[string]any{"message": "via mcp"}})
	if err != nil || r.IsError || !strings.Contains(mcpText(r), "via mcp") {
		t.Errorf("everything.echo over mcp: %v %+v", err, r)
	}
	for _, n := range []string{"everything.get-sum", "everything/get-sum", "Everything.get-sum"} {
		r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: n, Arguments: map[string]any{"a": 1, "b": 2}})
		if err == nil && !r.IsError {
			t.Errorf("%s ran although the policy does not name it", n)
		}
	}
}

// TestToolsCheck: an MCP tools file, one tool exact and one degraded with its
// reason, in text and JSON; a tool that cannot compile makes the exit status 1.
func TestToolsCheck(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "tools.json")
	os.WriteFile(file, []byte(`[{"name":"get.weather","description":"Weather","inputSchema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}},
 {"name":"search","inputSchema":{"type":"object","properties":{"filter":{"type":"object","required":["q"],"additionalProperties":false}}}}]`), 0o600)
	out := runCLI(t, 0, "", "tools", "check", file)
	if !regexp.MustCompile(`get_weather +exact +compile [0-9.]+ ms, [1-9][0-9]* states`).MatchString(out) ||
		!strings.Contains(out, "search") || !strings.Contains(out, "degraded") || !strings.Contains(out, `property filter: required property "q" is not described and additionalProperties is false: no object is valid`) {
		t.Errorf("tools check:\n%s", out)
	}
	var checks []toolCheck
	if err := json.Unmarshal([]byte(runCLI(t, 0, "", "tools", "check", "--json", file)), &checks); err != nil || len(checks) != 2 ||
		checks[0].Status != "exact" || checks[1].Status != "degraded" || checks[0].States == 0 {
		t.Errorf("--json: %+v %v", checks, err)
	}
	// A number range no integer fits cannot be compiled: refused, exit 1.
	os.WriteFile(file, []byte(`[{"name":"x/y","doc":"","params":[{"name":"n","type":"integer","min":0.2,"max":0.8}]}]`), 0o600)
	if out := runCLI(t, 1, "", "tools", "check", file); !strings.Contains(out, "refused") {
		t.Errorf("refused tool:\n%s", out)
	}
}

// TestMCPCancelReachesTheTool: a host that cancels a gpio/wait it called
// ends the wait on the board, through `clawedge mcp` forwarding to the daemon
// (stdio) and over streamable HTTP; the audit says it was cancelled.
func TestMCPCancelReachesTheTool(t *testing.T) {
	const token = "mcp-cancel-token-0123456789"
	t.Setenv("MCP_TOKEN", token)
	addr := freeAddr(t)
	cfgPath, dataDir := writeConfig(t, `console: {stdin: false}
mcp:
  serve: {listen: "`+addr+`", token: "${MCP_TOKEN}"}
`)
	runInProcess(t, cfgPath, "warn")
	waitForSocket(t, filepath.Join(dataDir, "clawedge.sock"))
	cancelWait := func(cs *mcp.ClientSession) {
		t.Helper()
		// Params of their own: the SDK writes the client's name into them.
		wait := &mcp.CallToolParams{Name: "gpio.wait", Arguments: map[string]any{"pin": "button", "edge": "rising", "timeout_ms": 3600000}}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { _, err := cs.CallTool(ctx, wait); done <- err }()
		auditUntil(t, cfgPath, "(pending)")
		cancel()
		if err := <-done; err == nil {
			t.Error("a cancelled call returned no error")
		}
		auditUntil(t, cfgPath, "-> failed: gpio/wait: cancelled")
	}

	stdio := goHost(t, cfgPath)
	cancelWait(stdio)
	stdio.Close()

	hc := &http.Client{Transport: bearer(token)}
	web, err := mcp.NewClient(&mcp.Implementation{Name: "go-http-host", Version: "1"}, nil).
		Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp", HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	cancelWait(web)
}

// bearer sends its token with every request.
type bearer string

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}
