package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawedge/clawedge/daemon"
)

// The first reply after a restart, in a conversation that had several turns:
// the runner's saved state holds the system turn and the conversation's
// earlier turns (localmodel's savedPrefix, chat.RenderLayout), so at least
// 90 % of the restarted daemon's first prompt comes from it, as its status
// says. Before, only the system turn was saved and the earlier turns were
// prefilled again (872 of 1,223 tokens from the saved state, issue 36).
func TestRestartKeepsTheConversationCached(t *testing.T) {
	model := needLocalModel(t)
	// tool_choice none: random weights answer text, one model step a turn, so
	// the last reply is the turn's first (the one a restart affects).
	cfgPath, dataDir := writeConfig(t, fmt.Sprintf("console: {stdin: false}\nmodels:\n  local: {path: %q, threads: 1, context: 2048}\n"+
		"agent: {max_iterations: 1, reply_tokens: 16, tool_choice: none}\n", model))
	sock := filepath.Join(dataDir, "clawedge.sock")
	status := func() *daemon.LocalReply {
		t.Helper()
		var st daemon.StatusReport
		if err := json.Unmarshal([]byte(runCLI(t, 0, "", "status", "--json", "--config", cfgPath)), &st); err != nil {
			t.Fatal(err)
		}
		if st.LocalReply == nil {
			t.Fatal("no local reply in status")
		}
		return st.LocalReply
	}

	out := &lockedBuffer{}
	d := startDaemon(t, cfgPath, out)
	waitForSocket(t, sock)
	var first, last *daemon.LocalReply
	for i, msg := range []string{"switch the fan on", "and now the heater", "is the door open?", "thanks, good night"} {
		runCLIAny(t, msg+"\n", "chat", "--config", cfgPath) // random weights: any reply, or none
		last = status()
		if i == 0 {
			first = last
		}
	}
	if err := d.term(t); err != nil {
		t.Fatalf("daemon: %v\n%s", err, out)
	}
	if fi, err := os.Stat(filepath.Join(dataDir, daemon.PromptCacheDir, "prefix.kv")); err != nil || fi.Size() == 0 {
		t.Fatalf("no prompt state saved in data_dir: %v\n%s", err, out)
	}

	out2 := &lockedBuffer{}
	d = startDaemon(t, cfgPath, out2)
	waitForSocket(t, sock)
	runCLIAny(t, "good morning\n", "chat", "--config", cfgPath)
	lr := status()
	text := runCLI(t, 0, "", "status", "--config", cfgPath)
	if err := d.term(t); err != nil {
		t.Fatalf("daemon: %v\n%s", err, out2)
	}
	t.Logf("first turn: %s; last before the restart: %s; first after it: %s", first.Line, last.Line, lr.Line)
	if lr.PromptTokens <= last.PromptTokens {
		t.Fatalf("the first prompt after the restart (%d tokens) does not hold the conversation (the last before: %d)", lr.PromptTokens, last.PromptTokens)
	}
	ratio := float64(lr.SavedTokens) / float64(lr.PromptTokens)
	if lr.SavedTokens != lr.CachedTokens || ratio < 0.9 {
		t.Errorf("after a restart %d of %d prompt tokens (%.1f %%) came from the saved state, %d from the cache; want >= 90 %% (daemon log:\n%s)",
			lr.SavedTokens, lr.PromptTokens, 100*ratio, lr.CachedTokens, out2)
	}
	// More than the system turn: the earlier turns came from the saved state too.
	if lr.SavedTokens <= first.PromptTokens {
		t.Errorf("after a restart %d tokens from the saved state, no more than the first turn's whole prompt (%d): the earlier turns were prefilled again",
			lr.SavedTokens, first.PromptTokens)
	}
	if want := fmt.Sprintf("local model, last reply: prompt %d tokens (%d cached, %d from the saved prefix)", lr.PromptTokens, lr.CachedTokens, lr.SavedTokens); !strings.Contains(text, want) {
		t.Errorf("status does not say %q:\n%s", want, text)
	}
}
