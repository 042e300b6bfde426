package localmodel

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/llm"
	"github.com/clawedge/clawedge/localmodel/gguf"
	"github.com/clawedge/clawedge/localmodel/synth"
)

// The runner and a tiny random-weight model are built once for the tests
// that run them. Without cgo (or without scripts/fetch-llama.sh) those tests
// skip, saying why; CLAWEDGE_REQUIRE_RUNNER=1 makes that a failure.
var (
	runnerPath string
	tinyModel  string
	runnerSkip string
)

const vocabPath = "../third_party/llama/models/ggml-vocab-qwen2.gguf"

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "localmodel-test")
	if err != nil {
		panic(err)
	}
	runnerSkip = buildRunnerAndModel(dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func buildRunnerAndModel(dir string) string {
	if out, _ := exec.Command("go", "env", "CGO_ENABLED").Output(); strings.TrimSpace(string(out)) != "1" {
		return "cgo is not available (go env CGO_ENABLED is not 1): the runner clawedge-llm cannot be built"
	}
	if _, err := os.Stat(vocabPath); err != nil {
		return "the llama.cpp libraries and vocabulary are missing: run scripts/fetch-llama.sh"
	}
	runnerPath = filepath.Join(dir, "clawedge-llm")
	build := exec.Command("go", "build", "-tags", "llamacpp", "-o", runnerPath, "../cmd/clawedge-llm")
	build.Env = append(os.Environ(), "CGO_ENABLED=1")
	if out, err := build.CombinedOutput(); err != nil {
		if _, lerr := exec.LookPath(os.Getenv("CC") + "gcc"); lerr != nil {
			return fmt.Sprintf("no C compiler to build the runner: %v", lerr)
		}
		fmt.Fprintf(os.Stderr, "building clawedge-llm: %v\n%s", err, out)
		os.Exit(1)
	}
	shape, _ := synth.LookupShape("tiny")
	model, err := synth.New(synth.Options{Shape: shape, Type: gguf.F16, Seed: 1, Vocab: vocabPath})
	if err != nil {
		fmt.Fprintln(os.Stderr, "synthesizing the tiny model:", err)
		os.Exit(1)
	}
	tinyModel = filepath.Join(dir, "tiny.gguf")
	if err := model.WriteFile(tinyModel); err != nil {
		fmt.Fprintln(os.Stderr, "synthesizing the tiny model:", err)
		os.Exit(1)
	}
	return ""
}

func needRunner(t *testing.T) {
	t.Helper()
	if runnerSkip == "" {
		return
	}
	if os.Getenv("CLAWEDGE_REQUIRE_RUNNER") != "" {
		t.Fatal(runnerSkip)
	}
	t.Skip(runnerSkip)
}

func newTestClient(t *testing.T, opts Options) *Client {
	t.Helper()
	needRunner(t)
	if opts.Model == "" {
		opts.Model = tinyModel
	}
	if opts.Runner == "" {
		opts.Runner = runnerPath
	}
	opts.Threads = 1 // ggml threads spin: 1 on the build machines
	if opts.Context == 0 {
		opts.Context = 512
	}
	if opts.Backoff == 0 {
		opts.Backoff = 20 * time.Millisecond
	}
	c, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

var greedy = &llm.Sampling{}

func hello(maxTokens int, s *llm.Sampling) llm.Request {
	return llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "Hello, who are you?"}}, MaxTokens: maxTokens, Sampling: s}
}

func TestGenerateStreams(t *testing.T) {
	c := newTestClient(t, Options{})
	if c.PID() != 0 || c.Starts() != 0 {
		t.Fatalf("runner started before the first request")
	}
	s, err := c.Chat(context.Background(), hello(8, greedy))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if c.PID() == 0 {
		t.Errorf("no runner while generating")
	}
	var chunks int
	var fin *llm.Final
	for {
		ch, err := s.Next()
		if err != nil {
			t.Fatal(err)
		}
		if ch.Final != nil {
			fin = ch.Final
			break
		}
		chunks++
	}
	if _, err := s.Next(); err != io.EOF {
		t.Errorf("Next after the final chunk = %v, want io.EOF", err)
	}
	if chunks != 8 || fin.Reason != llm.ReasonLength || fin.Usage.CompletionTokens != 8 || fin.Usage.PromptTokens < 10 {
		t.Errorf("%d chunks, final %+v; want 8 tokens ending on length", chunks, fin)
	}
	if fin.Timing.Prefill <= 0 || fin.Timing.FirstToken <= 0 {
		t.Errorf("timings missing: %+v", fin.Timing)
	}
	// The same prompt again reuses the KV cache.
	_, fin, err = llm.Collect(must(c.Chat(context.Background(), hello(2, greedy))))
	if err != nil || fin.Usage.CachedTokens == 0 {
		t.Errorf("second turn: %+v, %v; want cached prompt tokens", fin, err)
	}
	if c.Starts() != 1 {
		t.Errorf("%d runners started, want 1", c.Starts())
	}
}

func must(s llm.Stream, err error) llm.Stream {
	if err != nil {
		panic(err)
	}
	return s
}

func TestDeterministicWithSeed(t *testing.T) {
	c := newTestClient(t, Options{})
	gen := func(seed uint64) string {
		text, fin, err := llm.Collect(must(c.Chat(context.Background(), hello(16, &llm.Sampling{Temperature: 1, Seed: seed}))))
		if err != nil || fin.Usage.CompletionTokens != 16 {
			t.Fatalf("%+v, %v", fin, err)
		}
		return text
	}
	a, b, other := gen(7), gen(7), gen(8)
	if a != b {
		t.Errorf("same seed, different text:\n%q\n%q", a, b)
	}
	if a == other {
		t.Logf("seeds 7 and 8 gave the same text (possible, unlikely): %q", a)
	}
}

func TestRunnerKilledMidGeneration(t *testing.T) {
	c := newTestClient(t, Options{})
	s, err := c.Chat(context.Background(), hello(-1, greedy)) // until the context is full
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Next(); err != nil {
		t.Fatal(err)
	}
	pid := c.PID()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for {
		ch, err := s.Next()
		if err == nil {
			if ch.Final != nil {
				t.Fatalf("generation finished (%+v) although the runner was killed", ch.Final)
			}
			continue
		}
		if !errors.Is(err, llm.ErrUnavailable) || !strings.Contains(err.Error(), "signal: killed") ||
			!strings.Contains(err.Error(), fmt.Sprint(pid)) {
			t.Errorf("error = %v; want ErrUnavailable naming the pid and the signal", err)
		}
		break
	}
	s.Close()
	text, fin, err := llm.Collect(must(c.Chat(context.Background(), hello(4, greedy))))
	if err != nil || fin.Usage.CompletionTokens != 4 {
		t.Fatalf("request after the crash: %q %+v %v", text, fin, err)
	}
	if c.Starts() != 2 || c.PID() == pid || c.PID() == 0 {
		t.Errorf("starts %d, pid %d (was %d): want a new runner", c.Starts(), c.PID(), pid)
	}
}

// TestIdleUnload: an idle runner is stopped and a request starts another;
// the new runner takes the system turn from the state the first one saved.
func TestIdleUnload(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "prefix.kv")
	c := newTestClient(t, Options{IdleUnload: 300 * time.Millisecond, PrefixCache: cache})
	if _, fin, err := llm.Collect(must(c.Chat(context.Background(), hello(2, greedy)))); err != nil || fin.Usage.SavedTokens != 0 {
		t.Fatalf("%+v, %v", fin, err)
	}
	pid := c.PID()
	if pid == 0 {
		t.Fatal("no runner after a request")
	}
	deadline := time.Now().Add(10 * time.Second)
	for c.PID() != 0 || syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("runner %d still there after the idle time", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Written in the background, on disk once the runner has exited.
	if _, err := os.Stat(cache); err != nil {
		t.Errorf("the system turn's state was not saved: %v", err)
	}
	_, fin, err := llm.Collect(must(c.Chat(context.Background(), hello(2, greedy))))
	if err != nil {
		t.Fatal(err)
	}
	if u := fin.Usage; u.SavedTokens == 0 || u.SavedTokens != u.CachedTokens {
		t.Errorf("after the restart: %+v; want the system turn from the saved state", u)
	}
	if c.Starts() != 2 || c.PID() == 0 {
		t.Errorf("starts %d, pid %d: want the runner started again", c.Starts(), c.PID())
	}
}

func TestCancelAndQueue(t *testing.T) {
	c := newTestClient(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	s, err := c.Chat(ctx, hello(-1, greedy))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Next(); err != nil {
		t.Fatal(err)
	}
	// A second caller queues behind the first and gives up at its deadline.
	short, cancelShort := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancelShort()
	if _, err := c.Chat(short, hello(2, greedy)); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("queued caller: %v, want its deadline", err)
	}
	// A third waits and gets its turn when the first is cancelled.
	var wg sync.WaitGroup
	var queued error
	wg.Go(func() {
		_, fin, err := llm.Collect(must(c.Chat(context.Background(), hello(3, greedy))))
		if err == nil && fin.Usage.CompletionTokens != 3 {
			err = fmt.Errorf("final %+v", fin)
		}
		queued = err
	})
	time.Sleep(50 * time.Millisecond)
	cancel()
	for {
		if _, err := s.Next(); err != nil {
			if !errors.Is(err, context.Canceled) {
				t.Errorf("cancelled stream: %v", err)
			}
			break
		}
	}
	wg.Wait()
	if queued != nil {
		t.Errorf("queued request: %v", queued)
	}
	if c.Starts() != 1 {
		t.Errorf("%d runners started, want 1", c.Starts())
	}
}

func TestMemoryRefusal(t *testing.T) {
	model := tinyModel
	if model == "" { // no runner needed: the check comes before starting it
		model = writeHeaderOnlyModel(t)
	}
	hdr, err := gguf.Open(model)
	if err != nil {
		t.Fatal(err)
	}
	need, err := EstimateMemory(hdr, 4096)
	if err != nil {
		t.Fatal(err)
	}
	// Half of what the model needs, whichever model it is: a fixed figure
	// was above the header-only model's need (about 1 MiB), so on a machine
	// without the runner the check passed and the missing runner was started.
	availKB := max(need.Total()/2/1024, 1)
	meminfo := filepath.Join(t.TempDir(), "meminfo")
	os.WriteFile(meminfo, fmt.Appendf(nil, "MemTotal:        1024000 kB\nMemFree:          1 kB\nMemAvailable:       %d kB\n", availKB), 0o644)
	c, err := New(Options{Model: model, Runner: "/nonexistent/clawedge-llm", Context: 4096, MemInfo: meminfo})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.Chat(context.Background(), hello(2, greedy))
	var me *MemoryError
	if !errors.Is(err, llm.ErrCapacity) || !errors.As(err, &me) {
		t.Fatalf("error = %v, want a MemoryError wrapping llm.ErrCapacity", err)
	}
	for _, s := range []string{bytesString(need.Total()), bytesString(availKB * 1024), "MemAvailable", filepath.Base(model), "4096 tokens"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not contain %q", err, s)
		}
	}
	if me.Available != availKB*1024 || me.Need != need {
		t.Errorf("MemoryError = %+v", me)
	}
	if c.Starts() != 0 {
		t.Errorf("a runner was started")
	}
}

// writeHeaderOnlyModel writes a qwen2 GGUF with the metadata the memory
// estimate reads and no tensors.
func writeHeaderOnlyModel(t *testing.T) string {
	path := filepath.Join(t.TempDir(), "m.gguf")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	u32 := func(n uint32) gguf.Value { return gguf.Uint32(n) }
	w, err := gguf.NewWriter(f, []gguf.KV{
		{Key: "general.architecture", Value: gguf.String("qwen2")},
		{Key: "qwen2.block_count", Value: u32(2)},
		{Key: "qwen2.embedding_length", Value: u32(64)},
		{Key: "qwen2.attention.head_count", Value: u32(4)},
		{Key: "qwen2.attention.head_count_kv", Value: u32(2)},
		{Key: gguf.KeyChatTemplate, Value: gguf.String("<|im_start|>")},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestEstimateMemory(t *testing.T) {
	f, err := gguf.Open(writeHeaderOnlyModel(t))
	if err != nil {
		t.Fatal(err)
	}
	m, err := EstimateMemory(f, 4096)
	// 2 layers × 4096 tokens × 2 KV heads × (16 + 16) × 2 bytes
	if err != nil || m.KV != 2*4096*2*32*2 || m.File != uint64(f.Size) {
		t.Errorf("EstimateMemory = %+v, %v", m, err)
	}
}

func TestMemAvailable(t *testing.T) {
	dir := t.TempDir()
	write := func(s string) string {
		p := filepath.Join(dir, fmt.Sprint(len(s)))
		os.WriteFile(p, []byte(s), 0o644)
		return p
	}
	if n, err := MemAvailable(write("MemTotal: 1 kB\nMemAvailable:   123456 kB\n")); err != nil || n != 123456*1024 {
		t.Errorf("MemAvailable = %d, %v", n, err)
	}
	for _, bad := range []string{"MemTotal: 1 kB\n", "MemAvailable: many kB\n", "MemAvailable: 12\n"} {
		if _, err := MemAvailable(write(bad)); err == nil {
			t.Errorf("MemAvailable(%q) accepted", bad)
		}
	}
	if _, err := MemAvailable(filepath.Join(dir, "none")); err == nil {
		t.Error("missing file accepted")
	}
	if n, err := MemAvailable("/proc/meminfo"); err != nil || n == 0 {
		t.Errorf("/proc/meminfo: %d, %v", n, err)
	}
}

func TestBytesString(t *testing.T) {
	for b, want := range map[uint64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 3000 * 1024: "2.9 MiB",
		40 << 20: "40 MiB", 1536 << 20: "1.5 GiB"} {
		if got := bytesString(b); got != want {
			t.Errorf("bytesString(%d) = %q, want %q", b, got, want)
		}
	}
}

func TestRunnerMissingAndBadModel(t *testing.T) {
	if _, err := New(Options{Model: filepath.Join(t.TempDir(), "none.gguf")}); err == nil || !strings.Contains(err.Error(), "none.gguf") {
		t.Errorf("missing model: %v", err)
	}
	model := writeHeaderOnlyModel(t)
	c, err := New(Options{Model: model, Runner: "/nonexistent/clawedge-llm", MemInfo: "/nonexistent"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Chat(context.Background(), hello(2, greedy)); err == nil || !strings.Contains(err.Error(), "/nonexistent/clawedge-llm") {
		t.Errorf("missing runner: %v", err)
	}
	// A template that is not Qwen's is refused unless one is named.
	bad := filepath.Join(t.TempDir(), "llama.gguf")
	f, _ := os.Create(bad)
	w, _ := gguf.NewWriter(f, []gguf.KV{{Key: "general.architecture", Value: gguf.String("llama")},
		{Key: gguf.KeyChatTemplate, Value: gguf.String("<|start_header_id|>")}}, nil)
	w.Close()
	f.Close()
	if _, err := New(Options{Model: bad}); err == nil || !strings.Contains(err.Error(), "models.local.template") {
		t.Errorf("llama template: %v", err)
	}
	if c, err := New(Options{Model: bad, Template: "qwen2.5"}); err != nil || c.Template().Family != "qwen2.5" {
		t.Errorf("named template: %v", err)
	}
}

// A runner that loads the model but then fails to start generating (a bad
// model file for llama.cpp) reports llama.cpp's refusal, not a crash.
func TestLoadFailure(t *testing.T) {
	needRunner(t)
	model := writeHeaderOnlyModel(t) // metadata only: llama.cpp refuses it
	c := newTestClient(t, Options{Model: model})
	_, err := c.Chat(context.Background(), hello(2, greedy))
	if err == nil || !strings.Contains(err.Error(), "loading m.gguf") {
		t.Fatalf("error = %v, want the load failure", err)
	}
	if c.PID() != 0 {
		t.Errorf("runner left running after a failed load")
	}
}

// TestChatConstrained: the request's constraint reaches the runner, whose
// output the constraint's automaton accepts.
func TestChatConstrained(t *testing.T) {
	c := newTestClient(t, Options{})
	spec := &grammar.Spec{Form: grammar.FormJSON, Mode: grammar.ModeCalls, Tools: []grammar.ToolSpec{{
		Name: "gpio.write", Params: []grammar.ArgSpec{
			{Name: "pin", Type: "string", Required: true, Enum: []string{"led", "relay"}},
			{Name: "on", Type: "boolean", Required: true}}}}}
	req := hello(100, greedy)
	req.Constraint = spec
	text, fin, err := llm.Collect(must(c.Chat(context.Background(), req)))
	if err != nil {
		t.Fatal(err)
	}
	// The call comes back parsed; the text as written is in Raw.
	if text != "" || len(fin.ToolCalls) != 1 || fin.ToolCalls[0].Name != "gpio.write" || fin.CallsErr != nil {
		t.Errorf("text %q, final %+v", text, fin)
	}
	text = fin.Raw
	con, err := grammar.Compile(*spec)
	if err != nil {
		t.Fatal(err)
	}
	s := con.Start()
	for i := 0; i < len(text) && s != grammar.Dead; i++ {
		s = con.Next(s, text[i])
	}
	if s == grammar.Dead || !con.Accepting(s) || fin.Reason != llm.ReasonStop {
		t.Errorf("constrained reply %q (%s) is not accepted by the constraint", text, fin.Reason)
	}
}
