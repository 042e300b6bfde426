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

// The first local reply after a restart takes the system prompt and tools
// from the KV state the runner saved in data_dir: the daemon's status shows
// that at least 90 % of its prompt tokens came from the cache, from the saved
// prefix.
func TestPrefixCacheAfterRestart(t *testing.T) {
	model := needLocalModel(t)
	cfgPath, dataDir := writeConfig(t, fmt.Sprintf("console: {stdin: false}\nmodels:\n  local: {path: %q, threads: 1, context: 2048}\n"+
		"agent: {max_iterations: 1, reply_tokens: 16}\n", model))
	// The first boot: a chat without a daemon answers through its own runner,
	// which saves the prefix.
	runCLIAny(t, "hello there\n", "chat", "--config", cfgPath) // random weights: any reply, or none
	if fi, err := os.Stat(filepath.Join(dataDir, daemon.PromptCacheDir, "prefix.kv")); err != nil || fi.Size() == 0 {
		t.Fatalf("no prompt state saved in data_dir: %v", err)
	}
	// The daemon, started afterwards, starts its runner afresh.
	out := &lockedBuffer{}
	d := startDaemon(t, cfgPath, out)
	waitForSocket(t, filepath.Join(dataDir, "clawedge.sock"))
	runCLIAny(t, "and now the fan\n", "chat", "--config", cfgPath)
	var st daemon.StatusReport
	if err := json.Unmarshal([]byte(runCLI(t, 0, "", "status", "--json", "--config", cfgPath)), &st); err != nil {
		t.Fatal(err)
	}
	text := runCLI(t, 0, "", "status", "--config", cfgPath)
	if err := d.term(t); err != nil {
		t.Fatalf("daemon: %v\n%s", err, out)
	}
	lr := st.LocalReply
	if lr == nil {
		t.Fatalf("no local reply in status:\n%s", out)
	}
	saved := fmt.Sprintf("(%d cached, %d from the saved prefix)", lr.CachedTokens, lr.SavedTokens)
	if lr.SavedTokens != lr.CachedTokens || float64(lr.SavedTokens) < 0.9*float64(lr.PromptTokens) ||
		!strings.Contains(text, fmt.Sprintf("local model, last reply: prompt %d tokens %s", lr.PromptTokens, saved)) {
		t.Errorf("after a restart: %+v; want >= 90 %% of the prompt from the saved prefix, said by status:\n%s", lr, text)
	}
	t.Logf("after a restart: %s", lr.Line)
}
