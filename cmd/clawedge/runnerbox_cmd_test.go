package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawedge/clawedge/daemon"
	"github.com/clawedge/clawedge/llm"
	"github.com/clawedge/clawedge/localmodel"
)

// The runner runs confined: it loads and generates from the model it is
// allowed, and a model outside its allowlist does not even open.
func TestRunnerConfined(t *testing.T) {
	// A copy away from the runner's directory, which the runner may read.
	model := filepath.Join(t.TempDir(), "tiny.gguf")
	data, err := os.ReadFile(needLocalModel(t))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(model, data, 0o600)
	runner := filepath.Join(filepath.Dir(binPath), "clawedge-llm")
	gen := func(allowed string) (string, error) {
		c, err := localmodel.New(localmodel.Options{Model: model, Runner: runner, Threads: 1, Context: 256,
			Command: daemon.ConfineRunner(allowed, "", nil)})
		if err != nil {
			return "", err
		}
		defer c.Close()
		s, err := c.Complete(context.Background(), localmodel.Completion{Prompt: "hello", MaxTokens: 2, Sampling: &llm.Sampling{Temperature: 0}})
		if err != nil {
			return "", err
		}
		text, _, err := llm.Collect(s)
		return text, err
	}
	if _, err := gen(model); err != nil {
		t.Fatalf("the confined runner with its model: %v", err)
	}
	other := filepath.Join(t.TempDir(), "other.gguf")
	os.WriteFile(other, []byte("x"), 0o600)
	_, err = gen(other)
	if err == nil || !strings.Contains(strings.ToLower(err.Error()), "permission denied") {
		t.Fatalf("a model outside the runner's allowlist: %v", err)
	}
}
