package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The first local reply after a daemon restart takes the system prompt and
// tools from the KV state the runner saved in data_dir: status shows that at
// least 90 % of its prompt tokens came from the cache, from the saved prefix.
func TestPrefixCacheAfterRestart(t *testing.T) {
	model := needLocalModel(t)
	cfgPath, dataDir := writeConfig(t, fmt.Sprintf("console: {stdin: false}\nmodels:\n  local: {path: %q, threads: 1, context: 2048}\n"+
		"agent: {max_iterations: 1, reply_tokens: 16}\n", model))
	turn := func(text string) statusReport {
		t.Helper()
		out := &lockedBuffer{}
		d := startDaemon(t, cfgPath, out)
		waitForSocket(t, filepath.Join(dataDir, "clawedge.sock"))
		runCLIAny(t, text+"\n", "chat", "--config", cfgPath) // random weights: any reply, or none
		var st statusReport
		if err := json.Unmarshal([]byte(runCLI(t, 0, "", "status", "--json", "--config", cfgPath)), &st); err != nil {
			t.Fatal(err)
		}
		if err := d.term(t); err != nil {
			t.Fatalf("daemon: %v\n%s", err, out)
		}
		if st.LocalReply == nil {
			t.Fatalf("no local reply in status:\n%s", out)
		}
		return st
	}
	first := turn("hello there")
	if lr := first.LocalReply; lr.SavedTokens != 0 {
		t.Errorf("first boot: %+v; nothing was saved yet", lr)
	}
	if fi, err := os.Stat(filepath.Join(dataDir, promptCacheDir, "prefix.kv")); err != nil || fi.Size() == 0 {
		t.Fatalf("no prompt state saved in data_dir: %v", err)
	}
	second := turn("and now the fan")
	lr := second.LocalReply
	if lr.SavedTokens != lr.CachedTokens || float64(lr.SavedTokens) < 0.9*float64(lr.PromptTokens) ||
		!strings.Contains(lr.Line, fmt.Sprintf("(%d cached, %d from the saved prefix)", lr.CachedTokens, lr.SavedTokens)) {
		t.Errorf("after a restart: %+v; want >= 90 %% of the prompt from the saved prefix", lr)
	}
	t.Logf("first boot: %s; after a restart: %s", first.LocalReply.Line, lr.Line)
}
