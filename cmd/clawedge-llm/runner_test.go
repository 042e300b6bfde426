//go:build llamacpp

package main

// These tests drive the real runner binary, built by TestMain, over the wire
// protocol, with a random-weight model in the tiny Qwen2 shape synthesized
// from the real vocabulary. ggml's threads busy-wait: one thread everywhere.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/clawedge/clawedge/cmd/clawedge-llm/internal/driver"
	"github.com/clawedge/clawedge/localmodel/gguf"
	"github.com/clawedge/clawedge/localmodel/synth"
	"github.com/clawedge/clawedge/localmodel/wire"
)

var (
	runnerBin string // the runner, built for this test run
	tinyModel string // tiny Qwen2 shape, Q8_0, seed 1
	testDir   string
)

const vocabFile = "../../third_party/llama/models/ggml-vocab-qwen2.gguf"

func TestMain(m *testing.M) { os.Exit(testMain(m)) }

func testMain(m *testing.M) int {
	if _, err := os.Stat(vocabFile); err != nil {
		fmt.Fprintf(os.Stderr, "%v: run scripts/fetch-llama.sh first\n", err)
		return 1
	}
	dir, err := os.MkdirTemp("", "clawedge-llm-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	testDir = dir
	runnerBin = filepath.Join(dir, "clawedge-llm")
	args := []string{"build", "-tags", "llamacpp", "-o", runnerBin}
	if raceEnabled {
		args = append(args, "-race") // the runner's goroutines get the race detector too
	}
	build := exec.Command(goTool(), append(args, ".")...)
	build.Env = append(os.Environ(), "CGO_ENABLED=1")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building the runner: %v\n%s", err, out)
		return 1
	}
	tinyModel = filepath.Join(dir, "tiny.gguf")
	if err := synthesize(tinyModel, "tiny", nil); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

func goTool() string {
	if p := filepath.Join(runtime.GOROOT(), "bin", "go"); fileExists(p) {
		return p
	}
	return "go"
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// synthesize writes a random-weight model of the shape, after edit (if any)
// has damaged its plan.
func synthesize(path, shapeName string, edit func(*synth.Model)) error {
	shape, err := synth.LookupShape(shapeName)
	if err != nil {
		return err
	}
	m, err := synth.New(synth.Options{Shape: shape, Type: gguf.Q8_0, Seed: 1, Vocab: vocabFile})
	if err != nil {
		return err
	}
	if edit != nil {
		edit(m)
	}
	return m.WriteFile(path)
}

// start runs a runner that the test's cleanup stops; it must exit cleanly
// when its stdin closes.
func start(t *testing.T) *driver.Client {
	t.Helper()
	c, err := driver.Start([]string{runnerBin})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Close(20 * time.Second); err != nil && !isKilled(err) {
			t.Errorf("runner exit: %v\nstderr:\n%s", err, c.Stderr())
		}
		if strings.Contains(c.Stderr(), "DATA RACE") {
			t.Errorf("runner stderr:\n%s", c.Stderr())
		}
	})
	return c
}

func isKilled(err error) bool {
	var ee *exec.ExitError
	return errors.As(err, &ee) && ee.ProcessState.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL
}

// loaded is a runner with the tiny model loaded in a context of ctx tokens.
func loaded(t *testing.T, ctx int) *driver.Client {
	t.Helper()
	c := start(t)
	if _, err := c.Load(wire.Load{Path: tinyModel, Threads: 1, Context: ctx}); err != nil {
		t.Fatal(err)
	}
	return c
}

func generate(t *testing.T, c *driver.Client, g wire.Generate) *driver.Result {
	t.Helper()
	r, err := c.Generate(g, nil)
	if err != nil {
		t.Fatalf("generate: %v", err)
	}
	return r
}

func alive(t *testing.T, c *driver.Client) *wire.Health {
	t.Helper()
	h, err := c.Health()
	if err != nil {
		t.Fatalf("runner not answering: %v\nstderr:\n%s", err, c.Stderr())
	}
	return h
}

const chat = "<|im_start|>system\nYou switch relays.<|im_end|>\n<|im_start|>user\nTurn the lamp on.<|im_end|>\n<|im_start|>assistant\n"

func TestHealthLoadTokenize(t *testing.T) {
	c := start(t)
	if h := alive(t, c); h.Loaded || h.Busy {
		t.Errorf("fresh runner health = %+v", h)
	}
	m, err := c.Load(wire.Load{Path: tinyModel, Threads: 1, Context: 512})
	if err != nil {
		t.Fatal(err)
	}
	if m.Arch != "qwen2" || m.Vocab != 151936 || m.Context != 512 || m.Path != tinyModel || m.Params == 0 || m.Bytes == 0 {
		t.Errorf("model = %+v", m)
	}
	if !strings.Contains(m.Template, "<|im_start|>") {
		t.Errorf("chat template from the vocabulary: %.80q", m.Template)
	}
	if h := alive(t, c); !h.Loaded || h.Model != tinyModel || h.Busy {
		t.Errorf("health after load = %+v", h)
	}
	special, err := c.Tokenize("<|im_start|>user\nhi<|im_end|>", true)
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := c.Tokenize("<|im_start|>user\nhi<|im_end|>", false)
	if len(special) != 5 || len(plain) <= len(special) {
		t.Errorf("tokens with special parsing %v, without %v", special, plain)
	}
	if toks, err := c.Tokenize("", false); err != nil || len(toks) != 0 {
		t.Errorf("empty text: %v, %v", toks, err)
	}
	st, err := c.Stats()
	if err != nil || st.Generations != 0 || st.KVTokens != 0 {
		t.Errorf("stats = %+v, %v", st, err)
	}
}

func TestErrorsBeforeLoad(t *testing.T) {
	c := start(t)
	for _, req := range []wire.Request{
		{Op: wire.OpGenerate, Generate: &wire.Generate{Prompt: "hi"}},
		{Op: wire.OpTokenize, Tokenize: &wire.Tokenize{Text: "hi"}},
		{Op: wire.OpStats},
	} {
		if _, err := c.Call(req); err == nil || !strings.Contains(err.Error(), "no model loaded") {
			t.Errorf("%s before load: %v", req.Op, err)
		}
	}
	for _, req := range []wire.Request{
		{Op: "dance"},
		{Op: wire.OpLoad},
		{Op: wire.OpCancel},
	} {
		if _, err := c.Call(req); err == nil {
			t.Errorf("%+v: no error", req)
		}
	}
	alive(t, c)
	// A load that fails leaves the runner empty but answering.
	if _, err := c.Load(wire.Load{Path: tinyModel, Threads: -1}); err == nil {
		t.Error("negative thread count accepted")
	}
	if _, err := c.Load(wire.Load{Path: tinyModel, Threads: 1, Context: 256}); err != nil {
		t.Fatal(err)
	}
	for _, g := range []wire.Generate{
		{},
		{Tokens: []int32{1, 151936}},
		{Prompt: "hi", MaxTokens: -1},
		{Prompt: "hi", Sampling: wire.Sampling{TopP: 2}},
		{Prompt: strings.Repeat("word ", 300)},
	} {
		if r, err := c.Generate(g, nil); err == nil {
			t.Errorf("generate %+v: done %+v", g, r.Done)
		}
	}
	generate(t, c, wire.Generate{Prompt: "hi", MaxTokens: 2})
}

// TestBadModels: each file fails to load with llama.cpp's reason in the error,
// and the runner stays alive and loads a good model afterwards.
func TestBadModels(t *testing.T) {
	dir := t.TempDir()
	good, err := os.ReadFile(tinyModel)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	synthBad := func(name string, edit func(*synth.Model)) string {
		p := filepath.Join(dir, name)
		if err := synthesize(p, "tiny", edit); err != nil {
			t.Fatal(err)
		}
		return p
	}
	corrupt := slices.Clone(good)
	copy(corrupt[8:24], []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f})
	for _, tc := range []struct {
		name, path, want string
	}{
		{"missing", filepath.Join(dir, "nope.gguf"), "no such file"},
		{"not GGUF", write("notes.gguf", []byte("# my notes\nnot a model\n")), "invalid magic characters"},
		{"empty", write("empty.gguf", nil), "failed to read magic"},
		{"truncated", write("truncated.gguf", good[:len(good)/2]), "data is not within the file bounds"},
		{"header cut", write("header.gguf", good[:100_000]), "failed to read"},
		{"corrupt counts", write("corrupt.gguf", corrupt), "number of tensors"},
		{"wrong architecture", synthBad("qwen9.gguf", func(m *synth.Model) {
			for i := range m.KV {
				if m.KV[i].Key == gguf.KeyArchitecture {
					m.KV[i].Value = gguf.String("qwen9")
				}
			}
		}), "unknown model architecture: 'qwen9'"},
		{"wrong tensor shape", synthBad("shape.gguf", func(m *synth.Model) {
			for i := range m.Tensors {
				if m.Tensors[i].Name == "blk.0.attn_k.weight" {
					m.Tensors[i].Dims = []uint64{64, 64}
				}
			}
		}), "tensor 'blk.0.attn_k.weight' has wrong shape"},
		{"vocabulary only", vocabFile, "tensor 'token_embd.weight' not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := start(t)
			_, err := c.Load(wire.Load{Path: tc.path, Threads: 1, Context: 256})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.path) {
				t.Errorf("load: %v\nwant the path and %q", err, tc.want)
			}
			if h := alive(t, c); h.Loaded {
				t.Errorf("health after a failed load = %+v", h)
			}
			if _, err := c.Load(wire.Load{Path: tinyModel, Threads: 1, Context: 256}); err != nil {
				t.Fatalf("good model after a bad one: %v", err)
			}
			generate(t, c, wire.Generate{Prompt: "hi", MaxTokens: 2})
		})
	}
}

func TestDeterminism(t *testing.T) {
	c := loaded(t, 512)
	other := wire.Generate{Prompt: "Hello there", MaxTokens: 1}
	// cold generates with an empty cache: another prompt first, with a
	// different first token, so nothing of the last one is reused.
	cold := func(g wire.Generate) *driver.Result {
		t.Helper()
		generate(t, c, other)
		r := generate(t, c, g)
		if r.Done.ReusedTokens != 0 {
			t.Fatalf("reused %d tokens in a cold run", r.Done.ReusedTokens)
		}
		return r
	}
	greedy := wire.Generate{Prompt: chat, MaxTokens: 16}
	a, b := cold(greedy), cold(greedy)
	if len(a.Tokens) != 16 || !slices.Equal(a.IDs(), b.IDs()) {
		t.Fatalf("greedy twice:\n%v\n%v", a.IDs(), b.IDs())
	}
	// The same prompt again reuses all but its last token, which is then
	// evaluated alone instead of in a batch: the tokens must not change.
	if r := generate(t, c, greedy); !slices.Equal(r.IDs(), a.IDs()) || r.Done.EvaluatedTokens != 1 {
		t.Errorf("greedy with the prompt cached: %v, evaluated %d\nwant %v", r.IDs(), r.Done.EvaluatedTokens, a.IDs())
	}
	sampled := func(seed uint64) []int32 {
		return cold(wire.Generate{Prompt: chat, MaxTokens: 16,
			Sampling: wire.Sampling{Temperature: 1, TopK: 40, TopP: 0.95, MinP: 0.01, RepeatPenalty: 1.1, Seed: seed}}).IDs()
	}
	s1, s1again, s2 := sampled(1), sampled(1), sampled(2)
	if !slices.Equal(s1, s1again) {
		t.Errorf("seed 1 twice:\n%v\n%v", s1, s1again)
	}
	if slices.Equal(s1, s2) {
		t.Errorf("seeds 1 and 2 gave the same tokens %v", s1)
	}
	if slices.Equal(s1, a.IDs()) {
		t.Errorf("sampling at temperature 1 gave the greedy tokens")
	}
	for _, tok := range a.Tokens {
		if !utf8.ValidString(tok.Text) {
			t.Errorf("token %d text %q is not UTF-8", tok.ID, tok.Text)
		}
	}
}

// TestPrefixReuse: a prompt that extends the previous one evaluates only
// what follows the longest common prefix with the KV cache.
func TestPrefixReuse(t *testing.T) {
	c := loaded(t, 512)
	first, err := c.Tokenize(chat, true)
	if err != nil {
		t.Fatal(err)
	}
	r1 := generate(t, c, wire.Generate{Tokens: first, MaxTokens: 4})
	d := r1.Done
	if d.Reason != "max_tokens" || d.PromptTokens != len(first) || d.ReusedTokens != 0 || d.EvaluatedTokens != len(first) || d.Generated != 4 {
		t.Fatalf("first turn: %+v", d)
	}
	// The KV cache holds the prompt and the first 3 generated tokens: the 4th
	// was sampled but never evaluated.
	st, _ := c.Stats()
	if st.KVTokens != len(first)+3 {
		t.Errorf("KV tokens after the first turn = %d, want %d", st.KVTokens, len(first)+3)
	}
	turn, _ := c.Tokenize("<|im_end|>\n<|im_start|>user\nAnd the fan?<|im_end|>\n<|im_start|>assistant\n", true)
	second := slices.Concat(first, r1.IDs(), turn)
	d = generate(t, c, wire.Generate{Tokens: second, MaxTokens: 2}).Done
	if d.ReusedTokens != len(first)+3 || d.EvaluatedTokens != 1+len(turn) || d.PromptTokens != len(second) {
		t.Errorf("second turn: %+v; want reused %d, evaluated %d", d, len(first)+3, 1+len(turn))
	}
	// A prompt that departs from the cache halfway reuses only the shared part.
	third := slices.Concat(first[:10], []int32{9707, 11, 1879})
	d = generate(t, c, wire.Generate{Tokens: third, MaxTokens: 1}).Done
	if d.ReusedTokens != 10 || d.EvaluatedTokens != 3 {
		t.Errorf("diverging prompt: %+v; want reused 10, evaluated 3", d)
	}
	// Text prompts: the counts follow the tokens the runner tokenizes.
	pa, _ := c.Tokenize(chat, true)
	generate(t, c, wire.Generate{Prompt: chat, MaxTokens: 1})
	more := chat + "The lamp is on.<|im_end|>\n"
	pb, _ := c.Tokenize(more, true)
	want := 0
	for want < len(pa) && pa[want] == pb[want] {
		want++
	}
	d = generate(t, c, wire.Generate{Prompt: more, MaxTokens: 1}).Done
	if want < len(pa)-1 || d.ReusedTokens != want || d.EvaluatedTokens != len(pb)-want {
		t.Errorf("text prompt: %+v; want reused %d of %d, evaluated %d", d, want, len(pb), len(pb)-want)
	}
	st, _ = c.Stats()
	if st.Generations != 5 || st.TokensReused == 0 || st.TokensOut != 4+2+1+1+1 {
		t.Errorf("stats = %+v", st)
	}
}

func TestMaxTokensStopAndContextFull(t *testing.T) {
	c := loaded(t, 256) // llama.cpp rounds a context up to a multiple of 256
	full := generate(t, c, wire.Generate{Prompt: chat, MaxTokens: 32})
	if full.Done.Reason != "max_tokens" || len(full.Tokens) != 32 || full.Done.Generated != 32 {
		t.Fatalf("max_tokens 32: %d tokens, %+v", len(full.Tokens), full.Done)
	}
	text := full.Text()
	// A stop string from the middle of what greedy decoding says: the output
	// ends right before its first occurrence, and no part of it is sent.
	var stop string
	for k := len(text) / 2; k < len(text)-4; k++ {
		if utf8.RuneStart(text[k]) && utf8.ValidString(text[k:k+4]) && strings.TrimSpace(text[k:k+4]) == text[k:k+4] {
			stop = text[k : k+4]
			break
		}
	}
	if stop == "" {
		t.Fatalf("no stop string found in %q", text)
	}
	want := text[:strings.Index(text, stop)]
	r := generate(t, c, wire.Generate{Prompt: chat, MaxTokens: 32, Stop: []string{"never appears", stop}})
	if r.Done.Reason != "stop" || r.Text() != want {
		t.Errorf("stop %q: %q, %+v\nwant %q", stop, r.Text(), r.Done, want)
	}
	for i, tok := range r.Tokens {
		if tok.ID != full.Tokens[i].ID {
			t.Errorf("token %d is %d with a stop string, %d without", i, tok.ID, full.Tokens[i].ID)
		}
	}
	// Without a match, stop strings change nothing.
	if r := generate(t, c, wire.Generate{Prompt: chat, MaxTokens: 32, Stop: []string{"never appears"}}); r.Text() != text || r.Done.Reason != "max_tokens" {
		t.Errorf("non-matching stop: %q, %+v", r.Text(), r.Done)
	}
	// Unbounded, the context fills: prompt + generated = 256.
	r = generate(t, c, wire.Generate{Prompt: chat})
	if r.Done.Reason != "context_full" || r.Done.PromptTokens+r.Done.Generated != 256 {
		t.Errorf("unbounded in a context of 256: %+v", r.Done)
	}
	// And the next request still works.
	if r := generate(t, c, wire.Generate{Prompt: chat, MaxTokens: 32}); r.Text() != text {
		t.Errorf("after a full context: %q, want %q", r.Text(), text)
	}
}

// longRun is a generation that runs until cancelled: a context of 4096 takes
// seconds to fill even for the tiny model.
var longRun = wire.Generate{Prompt: chat, Sampling: wire.Sampling{Temperature: 1, Seed: 7}}

func TestCancel(t *testing.T) {
	c := loaded(t, 4096)
	prompt, _ := c.Tokenize(chat, true)
	var asked bool
	var cancelErr error
	r, err := c.Generate(longRun, func(id uint64, tok wire.Token) {
		if !asked {
			asked = true
			if h := alive(t, c); !h.Busy {
				t.Errorf("health during generation = %+v", h)
			}
			if _, err := c.Call(wire.Request{Op: wire.OpGenerate, Generate: &wire.Generate{Prompt: "hi"}}); err == nil || !strings.Contains(err.Error(), "busy") {
				t.Errorf("second generate while one runs: %v", err)
			}
			if _, err := c.Load(wire.Load{Path: tinyModel}); err == nil || !strings.Contains(err.Error(), "busy") {
				t.Errorf("load while generating: %v", err)
			}
			c.Cancel(id + 1000) // not running: ignored
			cancelErr = c.Cancel(id)
		}
	})
	if err != nil || cancelErr != nil {
		t.Fatal(err, cancelErr)
	}
	if r.Done.Reason != "cancelled" || r.Done.Generated < 1 || r.Done.Generated > 1000 || len(r.Tokens) != r.Done.Generated {
		t.Fatalf("cancelled generation: %d tokens, %+v", len(r.Tokens), r.Done)
	}
	// The cache still holds the prompt: the next turn reuses it.
	d := generate(t, c, wire.Generate{Tokens: prompt, MaxTokens: 3}).Done
	if d.Reason != "max_tokens" || d.Generated != 3 || d.ReusedTokens != len(prompt)-1 {
		t.Errorf("after cancel: %+v", d)
	}

	// Cancel and at once ask again, without waiting for "done": the new
	// generation waits for the old one to wind down, and the answers of
	// both arrive in order.
	id, ch, err := c.Send(wire.Request{Op: wire.OpGenerate, Generate: &longRun})
	if err != nil {
		t.Fatal(err)
	}
	if first := <-ch; first.Type != wire.TypeToken {
		t.Fatalf("first response %+v", first)
	}
	if err := c.Cancel(id); err != nil {
		t.Fatal(err)
	}
	next, err := c.Generate(wire.Generate{Tokens: prompt, MaxTokens: 3}, nil)
	var last wire.Response
	for resp := range ch {
		last = resp
	}
	if last.Type != wire.TypeDone || last.Done.Reason != "cancelled" {
		t.Errorf("old generation ended with %+v", last)
	}
	if err != nil || next.Done.Generated != 3 {
		t.Errorf("generation right after cancel: %v, %+v", err, next)
	}
}

// TestKill: a runner killed mid-generation is seen by the reader as the end
// of its output (io.EOF), not as a malformed frame.
func TestKill(t *testing.T) {
	c := loaded(t, 4096)
	var killed bool
	_, err := c.Generate(longRun, func(_ uint64, _ wire.Token) {
		if !killed {
			killed = true
			syscall.Kill(c.Pid(), syscall.SIGKILL)
		}
	})
	if err == nil || !killed {
		t.Fatalf("generation survived the kill: %v", err)
	}
	<-c.Ended()
	if err := c.ReadErr(); !errors.Is(err, io.EOF) {
		t.Errorf("reader ended with %v, want io.EOF", err)
	}
	if _, err := c.Health(); err == nil {
		t.Error("a killed runner answered")
	}
}

// TestStdinClosed: closing the runner's stdin mid-generation (the core's way
// of stopping it) ends the generation as cancelled and the process cleanly.
func TestStdinClosed(t *testing.T) {
	c, err := driver.Start([]string{runnerBin})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Load(wire.Load{Path: tinyModel, Threads: 1, Context: 4096}); err != nil {
		t.Fatal(err)
	}
	_, ch, err := c.Send(wire.Request{Op: wire.OpGenerate, Generate: &longRun})
	if err != nil {
		t.Fatal(err)
	}
	<-ch
	begin := time.Now()
	exited := make(chan error, 1)
	go func() { exited <- c.Close(20 * time.Second) }()
	var last wire.Response
	for resp := range ch {
		last = resp
	}
	if err := <-exited; err != nil {
		t.Errorf("runner exit: %v\n%s", err, c.Stderr())
	}
	if last.Type != wire.TypeDone || last.Done.Reason != "cancelled" {
		t.Errorf("generation ended with %+v", last)
	}
	if d := time.Since(begin); d > 5*time.Second {
		t.Errorf("runner took %v to exit", d)
	}
}
