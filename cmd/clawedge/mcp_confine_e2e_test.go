package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clawedge/clawedge/sandbox"
)

// TestMCPServerConfinedInDaemon: a hostile stdio MCP server (an npm-style
// node program) started by the built daemon cannot read the device key or
// the store, reach the control socket, or listen on a port; it runs as a uid
// of its own under a root daemon; and a grandchild it started in a session
// of its own dies with the daemon, even one killed outright.
func TestMCPServerConfinedInDaemon(t *testing.T) {
	nm := openToAll(t, mcpNodeModules(t))
	server, _ := filepath.Abs(filepath.Join("testdata", "mcp-probe-server.cjs"))
	server = filepath.Join(openToAll(t, filepath.Dir(server)), filepath.Base(server))
	marker := fmt.Sprintf("probe-marker-%d", time.Now().UnixNano())
	cfgPath, dataDir := writeConfig(t, "")
	body := fmt.Sprintf(`console: {stdin: false}
policy: {tools: {"probe/*": allow}}
mcp:
  servers:
    probe: {command: [node, %q, %q, %q], env: {NODE_PATH: %q}, read: [%q, %q], timeout: 20s}
`, server, dataDir, marker, nm, nm, filepath.Dir(server))
	f, err := os.OpenFile(cfgPath, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(body)
	f.Close()
	// A secret in the vault, so that the device key exists to be read.
	runCLI(t, 0, "probe-secret-value\n", "secret", "set", "probe", "--config", cfgPath)
	if _, err := os.Stat(filepath.Join(dataDir, "secret.key")); err != nil {
		t.Fatalf("no device key to probe: %v", err)
	}

	daemon := exec.Command(binPath, "run", "--config", cfgPath)
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		daemon.Process.Kill()
		daemon.Wait()
		killMarked(marker)
	}()
	waitForSocket(t, filepath.Join(dataDir, "clawedge.sock"))
	waitMCPReady(t, cfgPath, "probe")
	out := runCLI(t, 0, "", "exec", "--config", cfgPath, "@probe/probe{}")
	var rep struct {
		UID                                    int
		Key, Store, Socket, Listen, Grandchild string
	}
	if err := json.Unmarshal([]byte(out[strings.Index(out, "{"):strings.LastIndex(out, "}")+1]), &rep); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if strings.HasPrefix(rep.Key, "read") || strings.HasPrefix(rep.Store, "read") || rep.Socket == "connected" || rep.Listen == "listening" {
		t.Fatalf("the server reached what it must not: %+v", rep)
	}
	if rep.Grandchild != "started" {
		t.Fatalf("the grandchild did not start: %+v", rep)
	}
	if os.Geteuid() == 0 && (rep.UID < sandbox.FirstRunUID || rep.UID >= sandbox.FirstRunUID+sandbox.RunUIDs) {
		t.Fatalf("under a root daemon the server ran as uid %d, not one of its own", rep.UID)
	}
	if len(marked(marker)) == 0 {
		t.Fatal("the grandchild is not running to begin with")
	}
	// The daemon killed outright: no clean stop of its servers.
	daemon.Process.Signal(syscall.SIGKILL)
	daemon.Wait()
	for deadline := time.Now().Add(20 * time.Second); len(marked(marker)) > 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the server's setsid grandchild outlived the daemon: %v", marked(marker))
		}
	}
}

func killMarked(marker string) {
	for _, pid := range marked(marker) {
		syscall.Kill(pid, syscall.SIGKILL)
	}
}
