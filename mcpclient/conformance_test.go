package mcpclient

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/store"
	"github.com/clawedge/clawedge/tools"
)

// TestConformanceClient runs the official conformance suite's client
// scenarios initialize, tools_call and sse-retry against this package: the
// suite starts its own server and runs this test binary as the client
// (conformanceClient), which connects with a Manager as the daemon does and
// calls the scenario's tool through the runner.
func TestConformanceClient(t *testing.T) {
	nm, _ := filepath.Abs(filepath.Join("..", "third_party", "mcp", "node_modules"))
	arch := map[string]string{"amd64": "x64", "arm64": "arm64"}[runtime.GOARCH]
	node := filepath.Join(nm, "node-linux-"+arch, "bin", "node")
	suite := filepath.Join(nm, "@modelcontextprotocol", "conformance", "dist", "index.js")
	for _, f := range []string{node, suite} {
		if _, err := os.Stat(f); err != nil {
			if os.Getenv("CLAWEDGE_REQUIRE_MCP") != "" {
				t.Fatalf("CLAWEDGE_REQUIRE_MCP is set but %s is missing (run scripts/fetch-mcp.sh)", f)
			}
			t.Skipf("%s is missing (scripts/fetch-mcp.sh)", f)
		}
	}
	self, _ := os.Executable()
	for _, scenario := range []string{"initialize", "tools_call", "sse-retry"} {
		t.Run(scenario, func(t *testing.T) {
			cmd := exec.Command(node, suite, "client", "--command", self, "--scenario", scenario, "-o", t.TempDir())
			cmd.Env = append(os.Environ(), "FAKE_MCP=conformance")
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), " 0 failed") {
				t.Fatalf("conformance %s: %v\n%s", scenario, err, out)
			}
		})
	}
}

// conformanceClient is the test binary as the suite's client: it connects to
// url as server "conf", waits for its tools and calls the scenario's one.
func conformanceClient(url, scenario string) int {
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	reg := tools.NewRegistry()
	m := &Manager{Registry: reg}
	wg := m.Start(ctx, []Server{{Name: "conf", URL: url, Timeout: 20 * time.Second}})
	defer wg.Wait()
	defer cancel()
	for m.States()[0].State != "ready" {
		if ctx.Err() != nil {
			fmt.Fprintln(os.Stderr, "never ready:", m.States()[0].State)
			return 1
		}
		time.Sleep(10 * time.Millisecond)
	}
	line := map[string]string{"tools_call": `@conf/add_numbers{a=2;b=3}`, "sse-retry": `@conf/test_reconnection{}`}[scenario]
	if line == "" {
		return 0 // initialize: the handshake and the listing were the scenario
	}
	cmd, err := grammar.Parse(line, grammar.ParseOptions{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	dir, _ := os.MkdirTemp("", "conformance-client")
	defer os.RemoveAll(dir)
	st, err := store.Open(dir, store.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer st.Close()
	r := &tools.Runner{Registry: reg, Audit: st}
	rep, err := r.Run(ctx, tools.Caller{Channel: "console/stdin", User: "t", Actor: tools.Person}, cmd)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(rep.Text())
	return 0
}
