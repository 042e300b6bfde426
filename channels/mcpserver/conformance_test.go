package mcpserver

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// conformance returns node 22 and the official conformance suite's entry
// point, installed by scripts/fetch-mcp.sh. Without them the test skips,
// unless CLAWEDGE_REQUIRE_MCP is set (scripts/test.sh sets it).
func conformance(t *testing.T) (node, suite string) {
	t.Helper()
	nm, _ := filepath.Abs(filepath.Join("..", "..", "third_party", "mcp", "node_modules"))
	arch := map[string]string{"amd64": "x64", "arm64": "arm64"}[runtime.GOARCH]
	node = filepath.Join(nm, "node-linux-"+arch, "bin", "node")
	suite = filepath.Join(nm, "@modelcontextprotocol", "conformance", "dist", "index.js")
	for _, f := range []string{node, suite} {
		if _, err := os.Stat(f); err != nil {
			if os.Getenv("CLAWEDGE_REQUIRE_MCP") != "" {
				t.Fatalf("CLAWEDGE_REQUIRE_MCP is set but %s is missing (run scripts/fetch-mcp.sh)", f)
			}
			t.Skipf("%s is missing (scripts/fetch-mcp.sh)", f)
		}
	}
	return node, suite
}

// port is ln's port: the suite asks for localhost, the name a host uses.
func port(ln net.Listener) string {
	_, p, _ := net.SplitHostPort(ln.Addr().String())
	return p
}

// TestConformanceServer runs the official conformance suite's server
// scenarios against the daemon's HTTP server (the one of `mcp.serve`, on a
// simulated board): every one passes but those listed in
// testdata/conformance-expected.yaml, which need the suite's own test tools,
// resources or prompts (docs/mcp.md says why each). The suite cannot send a
// token, so the test puts it on each request in front of the real handler.
func TestConformanceServer(t *testing.T) {
	node, suite := conformance(t)
	const token = "conformance-token-0123456789"
	bd := newBoard(t, nil, time.Minute)
	ln, err := Listen("127.0.0.1:0", map[string]string{"token": token})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error)
	h := Handler(&Servers{Backend: bd.local, Version: "test"}, map[string]string{"token": token}, nil).(tokenHandler)
	// In front of the listener's check too, which keeps the connections of
	// requests with the token before strangers' (a stranger's requests are
	// half the connections at most, fewer than the suite's streams).
	withToken := func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+token) }
	go func() {
		served <- Serve(ctx, ln, tokenHandler{
			authorized: func(r *http.Request) bool { withToken(r); return h.authorized(r) },
			h:          http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { withToken(r); h.ServeHTTP(w, r) }),
		})
	}()
	t.Cleanup(func() { cancel(); <-served })
	expected, _ := filepath.Abs(filepath.Join("testdata", "conformance-expected.yaml"))
	cmd := exec.Command(node, suite, "server", "--url", "http://localhost:"+port(ln)+"/mcp",
		"--expected-failures", expected, "-o", t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("conformance suite: %v\n%s", err, out)
	}
	if testing.Verbose() {
		io.WriteString(os.Stderr, string(out))
	}
}
