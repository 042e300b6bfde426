package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clawedge/clawedge/llm"
	"github.com/clawedge/clawedge/llm/openai/openaitest"
)

// boardDaemon is one `clawedge run` of the boards test: its config, its
// process, and its A2A address.
type boardDaemon struct {
	name, cfgPath, dataDir, addr string
	cmd                          *exec.Cmd
	stderr                       *bytes.Buffer
}

func startBoard(t *testing.T, name, body string) *boardDaemon {
	t.Helper()
	b := &boardDaemon{name: name, addr: freeAddr(t)}
	b.cfgPath, b.dataDir = writeConfig(t, fmt.Sprintf("boards: {name: %s, listen: %q, discovery: %v}\n", name, b.addr, multicast())+body)
	b.run(t)
	return b
}

func (b *boardDaemon) run(t *testing.T) {
	t.Helper()
	b.cmd = exec.Command(binPath, "run", "--config", b.cfgPath)
	b.stderr = &bytes.Buffer{}
	b.cmd.Stderr = b.stderr
	if err := b.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	cmd := b.cmd
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	waitForSocket(t, filepath.Join(b.dataDir, "clawedge.sock"))
}

func (b *boardDaemon) cli(t *testing.T, code int, args ...string) string {
	t.Helper()
	return runCLI(t, code, "", append(args, "--config", b.cfgPath)...)
}

var codeRE = regexp.MustCompile(`code (\d{8})`)

// multicast reports whether this host has an interface for multicast DNS
// besides loopback (the boards then find each other by DNS-SD).
func multicast() bool {
	ifs, _ := net.Interfaces()
	for _, i := range ifs {
		if i.Flags&net.FlagUp != 0 && i.Flags&net.FlagMulticast != 0 && i.Flags&net.FlagLoopback == 0 {
			return true
		}
	}
	return false
}

// pairBoards pairs a with b, a naming it as, by the code `clawedge board
// pair` prints on b: by the name a found on the LAN when byName, else by URL.
func pairBoards(t *testing.T, a, b *boardDaemon, as string, byName bool) {
	t.Helper()
	m := codeRE.FindStringSubmatch(b.cli(t, 0, "board", "pair"))
	if m == nil {
		t.Fatal("board pair printed no code")
	}
	args := []string{"board", "add", as, "--code", m[1]}
	if !byName {
		args = append(args, "--url", "https://"+b.addr)
	}
	if out := a.cli(t, 0, args...); !strings.Contains(out, "paired with "+as) {
		t.Fatalf("board add: %s", out)
	}
}

type boardState struct {
	Name, State string
	Tools       int
}

func boardStates(t *testing.T, b *boardDaemon) map[string]boardState {
	t.Helper()
	var list []boardState
	if err := json.Unmarshal([]byte(b.cli(t, 0, "board", "list", "--json")), &list); err != nil {
		t.Fatal(err)
	}
	out := map[string]boardState{}
	for _, s := range list {
		out[s.Name] = s
	}
	return out
}

// TestBoardsThreeDaemons: three daemons on one host pair by code; hall's
// @garage.gpio/write switches garage's led, audited on hall as the person
// and on garage as board:hall with one call id; garage SIGKILLed while a
// call of hall's runs: hall reports it unknown, fails fast while garage is
// away, and uses it again once it is back, and the call ran once.
func TestBoardsThreeDaemons(t *testing.T) {
	model := openaitest.New(t)
	// Its window holds hall's tools and its two boards': a remote model is
	// offered every tool the policy allows (a local one at most
	// agent.local_tools, the message's words first).
	hall := startBoard(t, "hall", strings.Replace(remoteConfig(model, "policy:\n  tools: {\"garage.*\": allow, \"greenhouse.*\": allow}\n"), "model: qwen2.5:7b}", "model: qwen2.5:7b, context: 32768}", 1))
	garage := startBoard(t, "garage", "policy:\n  tools: {\"sys/exec\": allow}\n  users: {\"board:hall\": {\"gpio/*\": allow, \"sys/exec\": allow}}\n"+
		"exec: {mode: allowlist, allow: [{program: /usr/bin/sleep, args: [\"^2$\"]}], allow_without_landlock: true}\n")
	greenhouse := startBoard(t, "greenhouse", "")
	if multicast() {
		// The three find each other by DNS-SD: garage is paired by the name found.
		waitUntil(t, "hall finds garage on the LAN", func() bool { return boardStates(t, hall)["garage"].State == "found" })
	}
	pairBoards(t, hall, garage, "garage", multicast())
	pairBoards(t, hall, greenhouse, "greenhouse", false)
	waitUntil(t, "hall sees garage up", func() bool { s := boardStates(t, hall)["garage"]; return s.State == "up" && s.Tools > 0 })

	out := hall.cli(t, 0, "exec", `@garage.gpio/write{pin="led";value=1}`)
	if !strings.Contains(out, "led = 1") {
		t.Fatalf("hall's call of garage's gpio/write: %s", out)
	}
	if out := garage.cli(t, 0, "exec", `@gpio/read{pin="led"}`); !strings.Contains(out, "led = 1") {
		t.Fatalf("garage's led after hall's call: %s", out)
	}
	onHall := hall.cli(t, 0, "audit", "-n", "20")
	if !strings.Contains(onHall, `@board/add{name="garage";code="(not kept)"`) || regexp.MustCompile(`code="\d{8}"`).MatchString(onHall) {
		t.Errorf("hall's audit keeps a pairing code:\n%s", onHall)
	}
	m := regexp.MustCompile(`@garage\.gpio/write\{pin="led";value=1\} -> ok.*\[call (c-[0-9a-f]+)`).FindStringSubmatch(onHall)
	if m == nil {
		t.Fatalf("hall's audit has no call with a call id:\n%s", onHall)
	}
	onGarage := garage.cli(t, 0, "audit", "-n", "20")
	if !strings.Contains(onGarage, "board:hall") || !strings.Contains(onGarage, `@gpio/write{pin="led";value=1} [call `+m[1]+`] -> ok`) {
		t.Fatalf("garage's audit has no call %s by board:hall:\n%s", m[1], onGarage)
	}

	// A scripted model on hall answers by calling greenhouse's tool: it was
	// offered greenhouse's tools with hall's own, under their board's name.
	waitUntil(t, "hall sees greenhouse up", func() bool { return boardStates(t, hall)["greenhouse"].State == "up" })
	model.Push(openaitest.ToolCall("greenhouse.gpio/read", `{"pin": "button"}`), openaitest.Text("The greenhouse door is closed."))
	answer := runCLI(t, 0, "is the greenhouse door open?\n", "chat", "--config", hall.cfgPath)
	if !strings.Contains(answer, "The greenhouse door is closed.") {
		t.Fatalf("hall's answer: %s", answer)
	}
	reqs := model.Requests()
	if len(reqs) == 0 || !slices.Contains(reqs[0].ToolNames(), llm.WireName("greenhouse.gpio/read")) || !slices.Contains(reqs[0].ToolNames(), "gpio__write") {
		t.Fatalf("the model was not offered greenhouse's tools with hall's: %v", reqs)
	}
	t.Logf("the model was offered %d tools in a request of %d bytes", len(reqs[0].Body.Tools), len(reqs[0].Raw))
	if out := greenhouse.cli(t, 0, "audit", "-n", "10"); !strings.Contains(out, `board/board:hall @gpio/read{pin="button"}`) {
		t.Fatalf("greenhouse's audit has no read by board:hall:\n%s\nhall's answer:\n%s\n%d requests, the last: %s", out, answer, len(reqs), reqs[len(reqs)-1].Raw)
	}

	// garage SIGKILLed mid-call.
	done := make(chan string, 1)
	go func() {
		out, _ := exec.Command(binPath, "exec", "--config", hall.cfgPath, `@garage.sys/exec{program="/usr/bin/sleep";args=("2")}`).CombinedOutput()
		done <- string(out)
	}()
	waitUntil(t, "garage's audit shows the exec begun", func() bool {
		select {
		case out := <-done:
			t.Fatalf("the call ended before garage was killed: %s", out)
		default:
		}
		return strings.Contains(garage.cli(t, 0, "audit", "-n", "5"), "@sys/exec")
	})
	garage.cmd.Process.Signal(syscall.SIGKILL)
	garage.cmd.Wait()
	if out := <-done; !strings.Contains(out, "outcome unknown") {
		t.Fatalf("a call in flight when garage died: %s", out)
	}
	start := time.Now()
	out = hall.cli(t, 1, "exec", `@garage.gpio/write{pin="led";value=0}`)
	if !strings.Contains(out, "garage") || !strings.Contains(out, "last seen") || time.Since(start) > 3*time.Second {
		t.Fatalf("a call to the dead garage (%v): %s", time.Since(start), out)
	}
	garage.run(t)
	waitUntil(t, "hall sees garage up again", func() bool { return boardStates(t, hall)["garage"].State == "up" })
	hall.cli(t, 0, "exec", `@garage.gpio/write{pin="led";value=0}`)
	if n := strings.Count(garage.cli(t, 0, "audit", "-n", "100"), `@sys/exec{`); n != 1 {
		t.Fatalf("garage's audit shows the exec %d times, want once:\n%s", n, garage.cli(t, 0, "audit", "-n", "100"))
	}
	if s := boardStates(t, hall)["greenhouse"]; s.State != "up" {
		t.Errorf("greenhouse as hall lists it: %+v", s)
	}
}
