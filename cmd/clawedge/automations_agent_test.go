package main

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawedge/clawedge/llm/openai/openaitest"
)

// "Water the plants every day at 7" becomes an auto/add call from the model (a
// fake OpenAI server's tool call). The policy has no rule for it, and yet a
// person is asked: an automation the model creates acts later with nobody
// watching. Before the approval there is no such automation; after it, the
// daemon lists it with its next run, and it is kept in the store.
func TestAgentAddsAutomationWithApproval(t *testing.T) {
	srv := openaitest.New(t)
	srv.Push(openaitest.ToolCall("auto/add", `{"name": "plants", "cron": "0 7 * * *", "do": "@gpio/pulse{pin=\"relay\";ms=2000}"}`),
		openaitest.Text("Done: the plants get water every day at 7."))
	cfgPath, dataDir := writeConfig(t, "console: {stdin: false}\n"+remoteConfig(srv, ""))
	var dout lockedBuffer
	d := startDaemon(t, cfgPath, &dout)
	waitForFile(t, filepath.Join(dataDir, "clawedge.sock"))

	chat := exec.Command(binPath, "chat", "--config", cfgPath)
	chat.Dir = t.TempDir()
	chat.Env = append(os.Environ(), "XDG_CONFIG_HOME="+chat.Dir)
	in, _ := chat.StdinPipe()
	stdout, _ := chat.StdoutPipe()
	chat.Stderr = os.Stderr
	if err := chat.Start(); err != nil {
		t.Fatal(err)
	}
	defer chat.Process.Kill()
	io.WriteString(in, "water the plants every day at 7\n")
	r := bufio.NewReader(stdout)
	var seen strings.Builder
	id := ""
	deadline := time.AfterFunc(20*time.Second, func() { chat.Process.Kill() })
	defer deadline.Stop()
	for id == "" {
		line, err := r.ReadString('\n')
		seen.WriteString(line)
		if err != nil {
			t.Fatalf("%v; chat said:\n%s\ndaemon:\n%s", err, seen.String(), dout.String())
		}
		if m := approvalLine.FindStringSubmatch(line); m != nil {
			id = m[1]
		}
	}
	if !strings.Contains(seen.String(), "auto/add") {
		t.Errorf("the approval does not show the call:\n%s", seen.String())
	}
	if out := runCLI(t, 0, "", "auto", "list", "--config", cfgPath); strings.Contains(out, "plants") {
		t.Fatalf("the automation exists before approval:\n%s", out)
	}
	io.WriteString(in, "approve "+id+"\n")
	in.Close()
	rest, _ := io.ReadAll(r)
	seen.Write(rest)
	if err := chat.Wait(); err != nil {
		t.Fatalf("chat: %v\n%s", err, seen.String())
	}
	if !strings.Contains(seen.String(), "every day at 7") {
		t.Errorf("chat:\n%s", seen.String())
	}
	out := runCLI(t, 0, "", "auto", "list", "--config", cfgPath)
	if !strings.Contains(out, "plants: cron 0 7 * * *; next ") || !strings.Contains(out, " 07:00:00") || !strings.Contains(out, "added at run time") {
		t.Errorf("auto list after approval:\n%s", out)
	}
	if err := d.term(t); err != nil {
		t.Errorf("daemon: %v\n%s", err, dout.String())
	}
	// Kept in the store: listed with the daemon stopped.
	if out := runCLI(t, 0, "", "auto", "list", "--config", cfgPath); !strings.Contains(out, "plants") {
		t.Errorf("not kept:\n%s", out)
	}
}
