package main

import (
	"strings"
	"testing"
)

// `config check` refuses what `run` refuses, with the same words: both go
// through config.Load's one validation. Before, a token with white space
// passed `config check` and stopped `run` only when Telegram started.
func TestConfigCheckRefusesWhatRunRefuses(t *testing.T) {
	for _, body := range []string{
		"telegram: {token: \"123456:ABC DEF-ghijklmnopqrstuvwxyz0123\"}\n",
		"models:\n  remote: [{name: c, kind: anthropic, model: m, api_key: \"sk\\0\"}]\n",
	} {
		cfgPath, _ := writeConfig(t, body)
		check := runCLI(t, 1, "", "config", "check", cfgPath)
		run := runCLI(t, 1, "", "run", "--config", cfgPath)
		if !strings.Contains(check, cfgPath+":") || strings.TrimSpace(check) != strings.TrimSpace(run) {
			t.Errorf("config check said:\n%s\nrun said:\n%s", check, run)
		}
		if strings.Contains(check, "ABC DEF") {
			t.Errorf("the token is shown:\n%s", check)
		}
	}
}
