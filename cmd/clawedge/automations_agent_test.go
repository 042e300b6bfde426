package main

import (
	"path/filepath"
	"strings"
	"testing"

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
	waitForSocket(t, filepath.Join(dataDir, "clawedge.sock"))

	chat := chatToApproval(t, cfgPath, "water the plants every day at 7", &dout)
	if !strings.Contains(chat.seen.String(), "auto/add") {
		t.Errorf("the approval does not show the call:\n%s", chat.seen.String())
	}
	if out := runCLI(t, 0, "", "auto", "list", "--config", cfgPath); strings.Contains(out, "plants") {
		t.Fatalf("the automation exists before approval:\n%s", out)
	}
	chat.approve(t)
	if !strings.Contains(chat.seen.String(), "every day at 7") {
		t.Errorf("chat:\n%s", chat.seen.String())
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
