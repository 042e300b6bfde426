package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clawedge/clawedge/localmodel/gguf"
)

// The root scripts/fetch-llama-server.sh builds: Debian forky with
// llama.cpp-tools, whose llama-server is run with chroot (its CPU backends are
// found by the absolute path they were installed at, so the root's own dynamic
// loader alone does not load them).
const llamaServerRoot = "../../third_party/llama-server/root"

// llamaServer starts the real llama-server on 127.0.0.1 with the tiny
// random-weight model and returns its /v1 URL; it is stopped when the test
// ends (and killed with the test binary, whatever happens). Without the root,
// or not as root (chroot), the test is skipped, or fails with
// CLAWEDGE_REQUIRE_LLAMA_SERVER=1 (scripts/test.sh).
func llamaServer(t *testing.T) string {
	t.Helper()
	miss := func(why string) {
		if os.Getenv("CLAWEDGE_REQUIRE_LLAMA_SERVER") == "1" {
			t.Fatalf("%s (CLAWEDGE_REQUIRE_LLAMA_SERVER=1)", why)
		}
		t.Skip(why)
	}
	if _, err := os.Stat(filepath.Join(llamaServerRoot, "usr/bin/llama-server")); err != nil {
		miss("no llama-server root: run scripts/fetch-llama-server.sh")
	}
	if os.Geteuid() != 0 {
		miss("llama-server runs in its root with chroot, which needs root")
	}
	if _, err := os.Stat(vocabFile); err != nil {
		miss("the Qwen2 vocabulary is missing: run scripts/fetch-llama.sh")
	}
	// The model goes inside the root, where the chrooted server sees it.
	dir, err := os.MkdirTemp(filepath.Join(llamaServerRoot, "tmp"), "clawedge-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	model := synthModel(t, "tiny", gguf.F16, vocabFile)
	if err := os.Rename(model, filepath.Join(dir, "tiny.gguf")); err != nil {
		body, rerr := os.ReadFile(model)
		if rerr != nil {
			t.Fatal(rerr)
		}
		if err := os.WriteFile(filepath.Join(dir, "tiny.gguf"), body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	// -t 1: ggml's threads busy-wait, and CI has two loaded cores. One slot
	// (-np 1), so that a request waits rather than shares the context.
	cmd := exec.Command("chroot", llamaServerRoot, "/usr/bin/llama-server", "-m", "/tmp/"+filepath.Base(dir)+"/tiny.gguf",
		"--host", "127.0.0.1", "--port", fmt.Sprint(port), "--jinja", "-t", "1", "-tb", "1", "-c", "4096", "-np", "1", "--no-webui")
	var log lockedBuffer
	cmd.Stdout, cmd.Stderr = &log, &log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("llama-server's log (last 4 KiB):\n%s", tail(log.String(), 4096))
		}
	})
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	deadline := time.Now().Add(90 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		req, _ := http.NewRequestWithContext(ctx, "GET", url+"/health", nil)
		resp, err := http.DefaultClient.Do(req)
		cancel()
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if cmd.ProcessState != nil || time.Now().After(deadline) {
			t.Fatalf("llama-server did not become ready: %v\n%s", err, tail(log.String(), 4096))
		}
		time.Sleep(200 * time.Millisecond)
	}
	return url + "/v1"
}

// TestLlamaServerRequiredCalls runs the agent (`clawedge chat`) against the
// real llama-server (Debian's llama.cpp-tools) serving the tiny random-weight
// model, with agent.tool_choice required and reply_tokens 160, in each
// constraint mode and for each policy profile: every request is accepted
// (issue 26: the default profile's grammar was refused with HTTP 400), and
// every turn of the constrained modes makes a call that is valid and runs.
// Without a constraint the server does not enforce required (the model writes
// text): each such turn must end in the error that says so, never with the
// text shown as an answer. First, on the same server, every BFCL-sized tools
// file's grammar is accepted (bfcl-grammars).
func TestLlamaServerRequiredCalls(t *testing.T) {
	url := llamaServer(t)
	t.Run("bfcl-grammars", func(t *testing.T) { bfclGrammarsAccepted(t, url) }) // llamaserver_bfcl_test.go
	messages := []string{"turn on the led", "what is the temperature", "read the button", "list the serial ports"}
	// The client's window is 2048 where a constraint holds the reply: the
	// room for the longest call stops at a quarter of it, so a random model
	// filling strings writes 512 tokens at most. Without one, the prompt of
	// the full profile's tools needs the server's whole 4096.
	for _, c := range []struct {
		constraint, profile string
		reply, window       int
	}{
		{"gbnf", "full", 160, 2048}, {"gbnf", "hardware", 160, 2048}, {"gbnf", "minimal", 160, 2048},
		{"json_schema", "full", 160, 2048}, {"json_schema", "hardware", 160, 2048}, {"json_schema", "minimal", 160, 2048},
		// A budget the calls' text fits only without the blanks the
		// server's grammar lets the model pad it with (the random model
		// pads: without room for them, 0 of 4 calls closed).
		{"json_schema", "hardware", 24, 2048},
		{"none", "full", 160, 4096},
	} {
		t.Run(fmt.Sprintf("%s/%s/%d", c.constraint, c.profile, c.reply), func(t *testing.T) {
			cfg := fmt.Sprintf(`models:
  remote:
    - {name: box, kind: openai, base_url: %q, model: tiny, constraint: %s, context: %d, seed: 7}
agent: {tool_choice: required, reply_tokens: %d, max_iterations: 1, max_time: 120s}
policy: {profile: %s, tools: {memory/save: deny, memory/forget: deny, "goal/*": deny}}
`, url, c.constraint, c.window, c.reply, c.profile)
			// The model's memory/save, memory/forget and goal/add ask a person, and
			// none is here: a random model choosing one would wait out max_time.
			// Denied, they are not offered; memory/search (read-only) stays in the
			// grammar. The other goal/* tools act on goals nobody set here, and
			// their definitions would take the full profile's prompt past the
			// 2048-token window (2,307 tokens); goals' own plans are constrained
			// in TestGoalPlansConstrained.
			cfgPath, _ := writeConfig(t, cfg)
			start := time.Now()
			out := runCLIAny(t, strings.Join(messages, "\n")+"\n", "chat", "--config", cfgPath)
			took := time.Since(start)
			if strings.Contains(out, "HTTP 4") || strings.Contains(out, "failed to parse grammar") {
				t.Fatalf("a request was refused:\n%s", out)
			}
			audit := runCLI(t, 0, "", "audit", "--config", cfgPath)
			ran := 0
			for _, line := range strings.Split(audit, "\n") {
				if strings.Contains(line, "console/stdin") && strings.Contains(line, " -> ") {
					ran++
					if strings.Contains(line, "invalid") {
						t.Errorf("an invalid call: %s", line)
					}
				}
			}
			t.Logf("%d turns, %d calls run, %s", len(messages), ran, took.Round(time.Second))
			if c.constraint == "none" {
				if n := strings.Count(out, "ignored tool_choice required"); n+ran < len(messages) {
					t.Errorf("%d turns said the server ignored required and %d calls ran, of %d turns:\n%s", n, ran, len(messages), out)
				}
				return
			}
			if ran < len(messages) {
				t.Errorf("%d calls ran in %d turns with tool_choice required:\nchat:\n%s\naudit:\n%s", ran, len(messages), out, audit)
			}
		})
	}
}

// runCLIAny runs the binary and returns its output whatever its exit status.
func runCLIAny(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(binPath, args...)
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+cmd.Dir)
	out, _ := cmd.CombinedOutput()
	return string(out)
}
