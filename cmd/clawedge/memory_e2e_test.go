package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawedge/clawedge/llm/openai/openaitest"
)

// The workspace end to end, against a scripted model server: a fact the
// model saves in one `clawedge chat` (a process) is recalled in the next one;
// the server sees the persona and the user file in the system message and the
// relevant entry, quoted, in the person's message, not the irrelevant one;
// `remember` at the console saves the person's own words without a model.
func TestMemoryAcrossChats(t *testing.T) {
	srv := openaitest.New(t)
	srv.Push(openaitest.ToolCall("memory/save", `{"text": "Ann is away on a trip until the 12th."}`), openaitest.Text("Noted."),
		openaitest.Text("On the 12th."))
	cfgPath, dataDir := writeConfig(t, "policy: {tools: {memory/save: allow}}\n"+remoteConfig(srv, ""))
	ws := filepath.Join(dataDir, "workspace")
	os.MkdirAll(ws, 0o700)
	os.WriteFile(filepath.Join(ws, "SOUL.md"), []byte("You are Pip, the house's cheerful helper."), 0o600)
	os.WriteFile(filepath.Join(ws, "USER.md"), []byte("Ann owns the board. Tom is nine."), 0o600)

	if out := runCLI(t, 0, "I'm away until the 12th, keep that in mind\n", "chat", "--config", cfgPath); out != "Noted.\n" {
		t.Fatalf("first chat: %q", out)
	}
	out := runCLI(t, 0, "remember the bins go out on Tuesday evening\nwhen is Ann back from her trip?\n", "chat", "--config", cfgPath)
	if !strings.HasPrefix(out, "remembered #2 ") || !strings.HasSuffix(out, "On the 12th.\n") {
		t.Fatalf("second chat: %q", out)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	msgs := reqs[2].Body.Messages
	sys, last := *msgs[0].Content, *msgs[len(msgs)-1].Content
	if !strings.Contains(sys, "You are Pip, the house's cheerful helper.") || !strings.Contains(sys, "Ann owns the board. Tom is nine.") {
		t.Errorf("system message:\n%s", sys)
	}
	if strings.Contains(sys, "12th") {
		t.Errorf("an entry in the system message:\n%s", sys)
	}
	if !strings.Contains(last, `model for console] "Ann is away on a trip until the 12th."`) || !strings.HasPrefix(last, "Notes from memory") {
		t.Errorf("the saved fact is not recalled, quoted:\n%s", last)
	}
	if strings.Contains(last, "bins") || !strings.HasSuffix(last, "\n\nwhen is Ann back from her trip?") {
		t.Errorf("the person's message:\n%s", last)
	}
	list := runCLI(t, 0, "", "memory", "list", "--config", cfgPath)
	if lines := strings.Split(strings.TrimSpace(list), "\n"); len(lines) != 2 || !strings.Contains(lines[0], "(model for console) Ann") || !strings.Contains(lines[1], "(person console) the bins") {
		t.Errorf("memory list:\n%s", list)
	}
}
