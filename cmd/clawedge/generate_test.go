package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/clawedge/clawedge/channels"
	"github.com/clawedge/clawedge/localmodel/gguf"
	"github.com/clawedge/clawedge/localmodel/synth"
)

// The runner clawedge-llm is built beside the test binary of clawedge (where
// the core looks for it) and a tiny random-weight model is synthesized, once.
var (
	runnerOnce sync.Once
	runnerSkip string
	tinyModel  string
)

const vocabFile = "../../third_party/llama/models/ggml-vocab-qwen2.gguf"

func needLocalModel(t *testing.T) string {
	t.Helper()
	runnerOnce.Do(func() {
		if out, _ := exec.Command("go", "env", "CGO_ENABLED").Output(); strings.TrimSpace(string(out)) != "1" {
			runnerSkip = "cgo is not available (go env CGO_ENABLED is not 1): the runner clawedge-llm cannot be built"
			return
		}
		if _, err := os.Stat(vocabFile); err != nil {
			runnerSkip = "the llama.cpp libraries and vocabulary are missing: run scripts/fetch-llama.sh"
			return
		}
		dir := filepath.Dir(binPath)
		build := exec.Command("go", "build", "-tags", "llamacpp", "-o", filepath.Join(dir, "clawedge-llm"), "../clawedge-llm")
		build.Env = append(os.Environ(), "CGO_ENABLED=1")
		if out, err := build.CombinedOutput(); err != nil {
			runnerSkip = fmt.Sprintf("FAIL building clawedge-llm: %v\n%s", err, out)
			return
		}
		shape, _ := synth.LookupShape("tiny")
		m, err := synth.New(synth.Options{Shape: shape, Type: gguf.F16, Seed: 1, Vocab: vocabFile})
		if err == nil {
			tinyModel = filepath.Join(dir, "tiny.gguf")
			err = m.WriteFile(tinyModel)
		}
		if err != nil {
			runnerSkip = "FAIL synthesizing the tiny model: " + err.Error()
		}
	})
	if strings.HasPrefix(runnerSkip, "FAIL") || (runnerSkip != "" && os.Getenv("CLAWEDGE_REQUIRE_RUNNER") != "") {
		t.Fatal(runnerSkip)
	}
	if runnerSkip != "" {
		t.Skip(runnerSkip)
	}
	return tinyModel
}

func runCmd(t *testing.T, stdin string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := exec.Command(binPath, args...)
	cmd.Dir = t.TempDir()
	cmd.Stdin = strings.NewReader(stdin)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.String(), e.String(), err
}

func TestGenerateCLI(t *testing.T) {
	model := needLocalModel(t)
	args := []string{"generate", "--model", model, "--prompt", "Hello, board", "--max", "12", "--seed", "5", "--threads", "1", "--context", "256"}
	a, errA, err := runCmd(t, "", append(args, "--stats")...)
	if err != nil {
		t.Fatalf("%v\n%s", err, errA)
	}
	if strings.TrimSpace(a) == "" || !strings.HasSuffix(a, "\n") {
		t.Errorf("no completion printed: %q", a)
	}
	if !strings.Contains(errA, "length: prompt") || !strings.Contains(errA, "12 generated") {
		t.Errorf("--stats: %q", errA)
	}
	b, _, err := runCmd(t, "", args...)
	if err != nil || a != b {
		t.Errorf("same seed, different output (%v):\n%q\n%q", err, a, b)
	}
	raw, stderr, err := runCmd(t, "", "generate", "--model", model, "--prompt", "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n",
		"--raw", "--max", "4", "--temp", "0", "--threads", "1", "--context", "256")
	if err != nil || strings.TrimSpace(raw) == "" {
		t.Errorf("--raw: %q %v %s", raw, err, stderr)
	}

	_, stderr, err = runCmd(t, "", "generate", "--prompt", "x")
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(stderr, "no model: give --model FILE or set models.local.path") {
		t.Errorf("no model: %v %q", err, stderr)
	}
	_, stderr, err = runCmd(t, "", "generate", "--model", filepath.Join(t.TempDir(), "none.gguf"), "--prompt", "x")
	if err == nil || !strings.Contains(stderr, "none.gguf") {
		t.Errorf("missing model: %v %q", err, stderr)
	}
}

// With models.local configured, free text on the console goes to the model
// (here random weights: nonsense, but from the model), commands still run.
// agent.tool_choice required, with only gpio/write allowed, makes the first
// step a call whatever the weights: the pin reads back what the audited call
// wrote, an answer follows, and status shows the model's speed.
func TestChatWithLocalModel(t *testing.T) {
	model := needLocalModel(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "clawedge.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf("data_dir: %s\nmodels:\n  local: {path: %q, threads: 1, context: 2048}\n"+
		"policy: {default: deny, tools: {gpio/write: allow}}\nagent: {tool_choice: required, max_iterations: 1, calls_per_output: 1, reply_tokens: 128}\n",
		filepath.Join(dir, "data"), model)), 0o644)
	out, stderr, err := runCmd(t, "hello there\nstatus\n@gpio/read{pin=\"led\"}\n@gpio/read{pin=\"relay\"}\naudit\n", "chat", "--config", cfg, "--log-level", "info")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	m := regexp.MustCompile(`(?s)^(.+)\n\(no more tools were called[^\n]*\n.*\nlocal_model: tiny\.gguf, last reply: prompt \d+ tokens \(\d+ cached\) in \S+, \d+ generated in \S+ \([\d.]+ tokens/s\).*` +
		`\nled = ([01]) \(\w+\)\nrelay = ([01]) \(\w+\)\n.*@gpio/write\{pin="(led|relay)";value=([01])\} -> ok`).FindStringSubmatch(out)
	if m == nil || map[string]string{"led": m[2], "relay": m[3]}[m[4]] != m[5] {
		t.Fatalf("no answer, status line, read-back and audited write in order, or the pin does not read what the call wrote:\n%s", out)
	}
	if strings.TrimSpace(m[1]) == "" || strings.Contains(out, channels.NoModelReply) || strings.Contains(out, "error:") {
		t.Errorf("free text got no model reply:\n%q\nstderr:\n%s", out, stderr)
	}
	if !strings.Contains(stderr, "local model loaded") {
		t.Errorf("the runner was not used:\n%s", stderr)
	}

	// A model that cannot be used: commands still run, free text says why,
	// and piped input ends with exit 1 (a failed model turn).
	os.WriteFile(cfg, []byte(fmt.Sprintf("data_dir: %s\nmodels:\n  local: {path: %q}\n",
		filepath.Join(dir, "data"), filepath.Join(dir, "none.gguf"))), 0o644)
	out, _, err = runCmd(t, "hello\n@gpio/read{pin=\"led\"}\n", "chat", "--config", cfg)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(out, "error: the model cannot be used: models.local") || !strings.HasSuffix(out, "\nled = 0 (low)\n") {
		t.Errorf("broken model: %v\n%q", err, out)
	}
}
