package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// netnsLAN is a LAN of network namespaces on a bridge: each board its own
// address, multicast between them as on a home's LAN.
type netnsLAN struct {
	t      *testing.T
	bridge string
	spaces []string
}

func ipCmd(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return nil
}

// newLAN makes the bridge, or skips the test where it cannot (not root, no ip).
func newLAN(t *testing.T) *netnsLAN {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("no ip command")
	}
	l := &netnsLAN{t: t, bridge: fmt.Sprintf("cebr%d", os.Getpid()%100000)}
	if err := ipCmd("link", "add", l.bridge, "type", "bridge"); err != nil {
		t.Skipf("no bridge here: %v", err)
	}
	t.Cleanup(l.close)
	if err := ipCmd("link", "set", l.bridge, "up"); err != nil {
		t.Fatal(err)
	}
	return l
}

// add makes namespace n with address 10.77.0.host/24 on the bridge.
func (l *netnsLAN) add(n string, host int) string {
	l.t.Helper()
	ns := fmt.Sprintf("ce%s%d", n, os.Getpid()%100000)
	veth, peer := ns+"v", ns+"p"
	steps := [][]string{
		{"netns", "add", ns},
		{"link", "add", veth, "type", "veth", "peer", "name", peer},
		{"link", "set", peer, "master", l.bridge},
		{"link", "set", peer, "up"},
		{"link", "set", veth, "netns", ns},
		{"-n", ns, "addr", "add", fmt.Sprintf("10.77.0.%d/24", host), "dev", veth},
		{"-n", ns, "link", "set", veth, "up", "multicast", "on"},
		{"-n", ns, "link", "set", "lo", "up"},
		{"-n", ns, "route", "add", "default", "dev", veth},
	}
	for i, s := range steps {
		if err := ipCmd(s...); err != nil {
			if i == 0 {
				l.t.Skipf("no network namespaces here: %v", err)
			}
			l.t.Fatal(err)
		}
		if i == 0 {
			l.spaces = append(l.spaces, ns)
		}
	}
	return ns
}

func (l *netnsLAN) close() {
	for _, ns := range l.spaces {
		ipCmd("netns", "del", ns)
	}
	ipCmd("link", "del", l.bridge)
}

// startBoardIn runs a daemon in namespace ns, its A2A server on addr.
func startBoardIn(t *testing.T, ns, name, addr, body string) *boardDaemon {
	t.Helper()
	b := &boardDaemon{name: name, addr: addr}
	b.cfgPath, b.dataDir = writeConfig(t, fmt.Sprintf("boards: {name: %s, listen: %q, discovery: true}\n", name, addr)+body)
	b.cmd = exec.Command("ip", "netns", "exec", ns, binPath, "run", "--config", b.cfgPath)
	b.stderr = &bytes.Buffer{}
	b.cmd.Stderr = b.stderr
	if err := b.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	cmd := b.cmd
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	waitForSocket(t, filepath.Join(b.dataDir, "clawedge.sock"))
	return b
}

// TestBoardsOnABridgedLAN: two daemons, each in its own network namespace
// on a bridge (two hosts of a LAN), find each other by DNS-SD over
// multicast, pair by the name found and a code, and hall switches garage's
// led; a third namespace with no pairing is a stranger: it reads the card
// and gets nothing else.
func TestBoardsOnABridgedLAN(t *testing.T) {
	lan := newLAN(t)
	nsHall, nsGarage, nsStranger := lan.add("h", 1), lan.add("g", 2), lan.add("s", 3)
	hall := startBoardIn(t, nsHall, "hall", "10.77.0.1:8765", "policy:\n  tools: {\"garage.*\": allow}\n")
	garage := startBoardIn(t, nsGarage, "garage", "10.77.0.2:8765", "policy:\n  users: {\"board:hall\": {\"gpio/*\": allow}}\n")

	waitUntil(t, "hall finds garage on the LAN", func() bool { return boardStates(t, hall)["garage"].State == "found" })
	pairBoards(t, hall, garage, "garage", true)
	waitUntil(t, "hall sees garage up", func() bool { s := boardStates(t, hall)["garage"]; return s.State == "up" && s.Tools > 0 })
	if out := hall.cli(t, 0, "exec", `@garage.gpio/write{pin="led";value=1}`); !strings.Contains(out, "led = 1") {
		t.Fatalf("hall's call: %s", out)
	}
	if out := garage.cli(t, 0, "exec", `@gpio/read{pin="led"}`); !strings.Contains(out, "led = 1") {
		t.Fatalf("garage's led: %s", out)
	}
	// A stranger on the LAN: the card, and 401 for the rest.
	curl := func(args ...string) string {
		out, _ := exec.Command("ip", append([]string{"netns", "exec", nsStranger, "curl", "-sk", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "5"}, args...)...).Output()
		return string(out)
	}
	if _, err := exec.LookPath("curl"); err == nil {
		if got := curl("https://10.77.0.2:8765/.well-known/agent-card.json"); got != "200" {
			t.Errorf("a stranger's card: %s", got)
		}
		if got := curl("-X", "POST", "-d", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{}}`, "https://10.77.0.2:8765/a2a"); got != "401" {
			t.Errorf("a stranger's SendMessage: %s", got)
		}
		if got := curl("https://10.77.0.2:8765/clawedge/tools"); got != "401" {
			t.Errorf("a stranger's tool list: %s", got)
		}
	}
}
