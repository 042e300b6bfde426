package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const secretCanary = "canary-91b7-mqtt-password"

// A secret set through the CLI reaches the config, and its value is in no
// output, not in the store file's bytes, and not in a child's environment.
func TestSecretLifecycle(t *testing.T) {
	cfgPath, dataDir := writeConfig(t, `console: {stdin: false}
mqtt: {broker: "mqtt://127.0.0.1:1", username: u, password: "${secret:mqtt}"}
exec: {mode: full}
`)
	// Before it is set, the config says which secret is missing.
	if got := runCLI(t, 1, "", "config", "check", "--config", cfgPath); !strings.Contains(got, "${secret:mqtt}") {
		t.Errorf("config check with the secret unset: %s", got)
	}
	if got := runCLI(t, 0, secretCanary+"\n", "secret", "set", "mqtt", "--config", cfgPath); got != "secret mqtt set\n" {
		t.Errorf("secret set: %q", got)
	}
	runCLI(t, 0, "other-value\n", "secret", "set", "spare", "--config", cfgPath)
	var outputs []string
	list := runCLI(t, 0, "", "secret", "list", "--config", cfgPath)
	if !strings.Contains(list, "mqtt") || !strings.Contains(list, "spare") {
		t.Errorf("secret list:\n%s", list)
	}
	outputs = append(outputs, list,
		runCLI(t, 0, "", "config", "check", "--show", "--config", cfgPath),
		runCLI(t, 0, "", "config", "check", "--show", cfgPath),
		runCLI(t, 1, "", "exec", "--config", cfgPath, `@sys/exec{program="/usr/bin/env"}->@sys/exec{program="/nonexistent"}`),
		runCLI(t, 0, "", "audit", "--config", cfgPath))
	for _, out := range outputs {
		if strings.Contains(out, "canary-91b7") {
			t.Errorf("an output shows the secret:\n%s", out)
		}
	}
	raw, _ := os.ReadFile(filepath.Join(dataDir, "clawedge.db"))
	if len(raw) == 0 || bytes.Contains(raw, []byte("canary-91b7")) {
		t.Errorf("the store file holds the secret in the clear (%d bytes)", len(raw))
	}
	if fi, err := os.Stat(filepath.Join(dataDir, "secret.key")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("device key: %v %v", fi, err)
	}
	// Without the key file the store alone does not open.
	os.Rename(filepath.Join(dataDir, "secret.key"), filepath.Join(dataDir, "moved.key"))
	if got := runCLI(t, 1, "", "config", "check", "--config", cfgPath); !strings.Contains(got, "device key") {
		t.Errorf("without the key file: %s", got)
	}
	os.Rename(filepath.Join(dataDir, "moved.key"), filepath.Join(dataDir, "secret.key"))
	runCLI(t, 0, "", "secret", "rm", "spare", "--config", cfgPath)
	if got := runCLI(t, 0, "", "secret", "list", "--config", cfgPath); strings.Contains(got, "spare") {
		t.Errorf("after rm:\n%s", got)
	}
}

func TestSecretPassphrase(t *testing.T) {
	cfgPath, _ := writeConfig(t, `console: {stdin: false}
secrets: {key: passphrase}
mqtt: {broker: "mqtt://127.0.0.1:1", username: u, password: "${secret:mqtt}"}
exec: {mode: full}
`)
	t.Setenv(PassphraseEnv, "correct horse battery")
	runCLI(t, 0, secretCanary, "secret", "set", "mqtt", "--config", cfgPath)
	runCLI(t, 0, "", "config", "check", "--config", cfgPath)
	// The passphrase in the daemon's environment does not reach a child.
	if got := runCLI(t, 0, "", "exec", "--config", cfgPath, `@sys/exec{program="/usr/bin/env"}`); strings.Contains(got, "horse") {
		t.Errorf("a child sees the passphrase:\n%s", got)
	}
	t.Setenv(PassphraseEnv, "wrong horse")
	got := runCLI(t, 1, "", "secret", "list", "--config", cfgPath)
	if !strings.Contains(got, "wrong passphrase") {
		t.Errorf("wrong passphrase: %s", got)
	}
}

// While the daemon holds the store, the commands beside it still load a config
// that reads secrets (status used to fail: "store is in use"), and secret set
// says to stop the daemon.
func TestSecretsWhileTheDaemonRuns(t *testing.T) {
	cfgPath, dataDir := writeConfig(t, `console: {stdin: false}
models:
  remote: [{name: lan, kind: openai, base_url: "http://127.0.0.1:1/v1", model: m, api_key: "${secret:lan}"}]
`)
	runCLI(t, 0, secretCanary, "secret", "set", "lan", "--config", cfgPath)
	startDaemon(t, cfgPath, &lockedBuffer{})
	waitForSocket(t, filepath.Join(dataDir, "clawedge.sock"))
	if got := runCLI(t, 0, "", "status", "--config", cfgPath); strings.Contains(got, "canary-91b7") {
		t.Errorf("status shows the secret:\n%s", got)
	}
	runCLI(t, 0, "", "policy", "explain", "gpio/write", "--config", cfgPath)
	if got := runCLI(t, 1, "x", "secret", "set", "other", "--config", cfgPath); !strings.Contains(got, "stop the daemon") {
		t.Errorf("secret set beside the daemon: %s", got)
	}
}
