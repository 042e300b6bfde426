// Command llmdrive drives a clawedge-llm runner over the wire protocol, for
// scripts: the arm64 smoke test under QEMU (scripts/test-llm-arm64.sh) and the
// benchmark (scripts/bench/llm.sh). The runner command follows "--", so it can
// run behind an emulator:
//
//	llmdrive smoke -model tiny.gguf -n 8 -- qemu-aarch64-static -L /usr/aarch64-linux-gnu clawedge-llm
//	llmdrive bench -model m.gguf -threads 2 -prompt 256 -gen 64 -- bin/clawedge-llm
//	llmdrive ttft -model m.gguf -threads 2 -system 1000 -- bin/clawedge-llm
//	llmdrive constrained -model m.gguf -tools tools.json -gen 64 -- bin/clawedge-llm
//	llmdrive server -url http://127.0.0.1:8080 -pid PID -threads 1 -prompt 256 -gen 64
//
// bench, ttft, constrained and server (the same measurement as bench, of a
// running llama-server) print one JSON object on stdout.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/clawedge/clawedge/cmd/clawedge-llm/internal/driver"
	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/localmodel/wire"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	mode := os.Args[1]
	if mode == "server" { // llama-server over HTTP: no runner, no model file
		if err := serverBench(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "llmdrive:", err)
			os.Exit(1)
		}
		return
	}
	fs := flag.NewFlagSet(mode, flag.ExitOnError)
	model := fs.String("model", "", "GGUF model file")
	threads := fs.Int("threads", 1, "compute threads")
	ctxSize := fs.Int("context", 2048, "context size")
	n := fs.Int("n", 8, "smoke: tokens to generate")
	prompt := fs.Int("prompt", 256, "bench: prompt tokens")
	gen := fs.Int("gen", 64, "bench: tokens to generate")
	reps := fs.Int("reps", 3, "bench, ttft: repetitions (the best is reported)")
	system := fs.Int("system", 1000, "ttft: tokens of the fixed system prompt")
	tools := fs.String("tools", "", "constrained: tools JSON file (grammar.ToolSpec array)")
	form := fs.String("form", "qwen", "constrained: output form")
	gmode := fs.String("grammar-mode", "calls", "constrained: constraint mode")
	timeout := fs.Duration("timeout", 10*time.Minute, "give up after this long")
	fs.Parse(os.Args[2:])
	argv := fs.Args()
	if *model == "" || len(argv) == 0 {
		usage()
	}
	time.AfterFunc(*timeout, func() {
		fmt.Fprintf(os.Stderr, "llmdrive: timed out after %v\n", *timeout)
		os.Exit(3)
	})
	load := wire.Load{Path: *model, Threads: *threads, Context: *ctxSize}
	var err error
	switch mode {
	case "smoke":
		err = smoke(argv, load, *n)
	case "bench":
		err = bench(argv, load, *prompt, *gen, *reps)
	case "ttft":
		err = ttft(argv, load, *system, *reps)
	case "constrained":
		err = constrained(argv, load, *tools, grammar.Form(*form), grammar.Mode(*gmode), *gen, *reps)
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "llmdrive:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: llmdrive smoke|bench|ttft|constrained -model FILE [flags] -- RUNNER [ARGS...]\n       llmdrive server -url URL [-pid PID] [flags]")
	os.Exit(2)
}

func startLoaded(argv []string, load wire.Load) (*driver.Client, *wire.Model, error) {
	c, err := driver.Start(argv)
	if err != nil {
		return nil, nil, err
	}
	m, err := c.Load(load)
	if err != nil {
		c.Close(10 * time.Second)
		return nil, nil, fmt.Errorf("load: %v\n%s", err, c.Stderr())
	}
	return c, m, nil
}

const chat = "<|im_start|>system\nYou switch relays.<|im_end|>\n<|im_start|>user\nTurn the lamp on.<|im_end|>\n<|im_start|>assistant\n"

// smoke loads the model, generates n tokens greedily and checks that n came,
// then generates one constrained call and checks it.
func smoke(argv []string, load wire.Load, n int) error {
	begin := time.Now()
	load.Context = min(load.Context, 256)
	c, m, err := startLoaded(argv, load)
	if err != nil {
		return err
	}
	defer c.Close(30 * time.Second)
	fmt.Printf("loaded %s: %s, %d tokens of vocabulary, context %d, in %v\n", m.Path, m.Arch, m.Vocab, m.Context, time.Since(begin).Round(time.Millisecond))
	r, err := c.Generate(wire.Generate{Prompt: chat, MaxTokens: n}, nil)
	if err != nil {
		return fmt.Errorf("generate: %v\n%s", err, c.Stderr())
	}
	if len(r.Tokens) != n || r.Done.Generated != n || r.Done.Reason != "max_tokens" {
		return fmt.Errorf("wanted %d tokens, got %d: %+v", n, len(r.Tokens), r.Done)
	}
	fmt.Printf("generated %d tokens %v (%q) in %.0f ms after a prefill of %d tokens in %.0f ms\n",
		n, r.IDs(), r.Text(), r.Done.DecodeMS, r.Done.EvaluatedTokens, r.Done.PrefillMS)
	// Constrained: a JSON call to one tool, which must end (the language is
	// finite) with an output the constraint accepts.
	spec := grammar.Spec{Form: grammar.FormJSON, Mode: grammar.ModeCalls, Tools: []grammar.ToolSpec{{Name: "gpio/write",
		Params: []grammar.ArgSpec{{Name: "pin", Type: "string", Required: true, Enum: []string{"led", "relay"}}, {Name: "on", Type: "boolean", Required: true}}}}}
	r, err = c.Generate(wire.Generate{Prompt: chat, MaxTokens: 64, Constraint: &spec}, nil)
	if err != nil {
		return fmt.Errorf("constrained generate: %v\n%s", err, c.Stderr())
	}
	con, err := grammar.Compile(spec)
	if err != nil {
		return err
	}
	st := con.Start()
	for i := 0; i < len(r.Text()) && st != grammar.Dead; i++ {
		st = con.Next(st, r.Text()[i])
	}
	if r.Done.Reason != "eog" || r.Done.Incomplete || st == grammar.Dead || !con.Accepting(st) {
		return fmt.Errorf("constrained output %q (%s) is not a complete call", r.Text(), r.Done.Reason)
	}
	fmt.Printf("constrained: %q in %d tokens, first token after %.0f ms (vocabulary prepared, spec compiled), %.1f ms in masks (%d sets computed)\n",
		r.Text(), r.Done.Generated, r.Done.FirstTokenMS, r.Done.MaskMS, r.Done.MaskStates)
	// With CLAWEDGE_LLM_VERBOSE set, llama.cpp's log says which CPU variant ggml chose.
	for line := range strings.Lines(c.Stderr()) {
		if _, lib, ok := strings.Cut(line, "loaded CPU backend from "); ok {
			fmt.Printf("ggml CPU variant: %s", lib[strings.LastIndex(lib, "/")+1:])
		}
	}
	return nil
}

// filler is prompt text: its tokens are cut to the wanted count.
const filler = "The relay on pin 17 switches the lamp in the hall; the one on pin 27 the fan in the workshop. " +
	"Sensors report temperature and humidity every minute, and the agent answers questions about them. "

func tokens(c *driver.Client, n int) ([]int32, error) {
	text := filler
	for {
		toks, err := c.Tokenize(text, false)
		if err != nil {
			return nil, err
		}
		if len(toks) >= n {
			return toks[:n], nil
		}
		text += filler
	}
}

type benchResult struct {
	Engine       string  `json:"engine"`
	Threads      int     `json:"threads"`
	PromptTokens int     `json:"prompt_tokens"`
	GenTokens    int     `json:"gen_tokens"`
	PrefillTPS   float64 `json:"prefill_tps"`
	DecodeTPS    float64 `json:"decode_tps"`
	PeakRSSMiB   float64 `json:"peak_rss_mib"`
}

// bench measures prefill of a cold prompt of p tokens and greedy decoding of
// g tokens, best of reps. Prefill is request to first token; decode the
// tokens after the first over the time between the first and the last.
func bench(argv []string, load wire.Load, p, g, reps int) error {
	c, _, err := startLoaded(argv, load)
	if err != nil {
		return err
	}
	defer c.Close(30 * time.Second)
	prompt, err := tokens(c, p)
	if err != nil {
		return err
	}
	res := benchResult{Engine: "clawedge-llm", Threads: load.Threads, PromptTokens: p, GenTokens: g}
	for rep := range reps + 1 { // the first run warms up
		toks := slices.Clone(prompt)
		toks[0] = int32(1000 + rep) // a different first token: nothing is reused
		var first, last time.Time
		n := 0
		begin := time.Now()
		r, err := c.Generate(wire.Generate{Tokens: toks, MaxTokens: g}, func(uint64, wire.Token) {
			last = time.Now()
			if n == 0 {
				first = last
			}
			n++
		})
		if err != nil {
			return err
		}
		if r.Done.ReusedTokens != 0 || n != g {
			return fmt.Errorf("run %d: %d tokens, %+v", rep, n, r.Done)
		}
		if rep == 0 {
			continue
		}
		res.PrefillTPS = max(res.PrefillTPS, float64(p)/first.Sub(begin).Seconds())
		res.DecodeTPS = max(res.DecodeTPS, float64(g-1)/last.Sub(first).Seconds())
	}
	rss, err := c.PeakRSS()
	if err != nil {
		return err
	}
	res.PeakRSSMiB = float64(rss) / (1 << 20)
	return json.NewEncoder(os.Stdout).Encode(res)
}

type ttftResult struct {
	Engine       string  `json:"engine"`
	Threads      int     `json:"threads"`
	SystemTokens int     `json:"system_tokens"`
	PromptTokens int     `json:"prompt_tokens"` // of the second turn
	ColdMS       float64 `json:"cold_ms"`
	ReuseMS      float64 `json:"reuse_ms"`
	Evaluated    int     `json:"evaluated_tokens"` // with reuse
	Speedup      float64 `json:"speedup"`
}

// ttft times the first token of a second turn after a fixed system prompt of
// about sys tokens: cold (a fresh context: reload) and with the first turn's
// KV cache kept, measured at the client from sending to the first token.
func ttft(argv []string, load wire.Load, sys, reps int) error {
	c, _, err := startLoaded(argv, load)
	if err != nil {
		return err
	}
	defer c.Close(30 * time.Second)
	systemToks, err := tokens(c, sys)
	if err != nil {
		return err
	}
	systemText, err := detok(c, systemToks)
	if err != nil {
		return err
	}
	turn1 := "<|im_start|>system\n" + systemText + "<|im_end|>\n<|im_start|>user\nIs the lamp in the hall on?<|im_end|>\n<|im_start|>assistant\n"
	first := func(prompt string) (float64, *driver.Result, error) {
		begin := time.Now()
		var at time.Duration
		r, err := c.Generate(wire.Generate{Prompt: prompt, MaxTokens: 16}, func(uint64, wire.Token) {
			if at == 0 {
				at = time.Since(begin)
			}
		})
		return float64(at.Microseconds()) / 1000, r, err
	}
	res := ttftResult{Engine: "ttft", Threads: load.Threads, SystemTokens: sys}
	for range reps {
		if _, err := c.Load(load); err != nil { // a fresh, empty context
			return err
		}
		_, r1, err := first(turn1)
		if err != nil {
			return err
		}
		turn2 := turn1 + r1.Text() + "<|im_end|>\n<|im_start|>user\nThen switch on the fan in the workshop, please.<|im_end|>\n<|im_start|>assistant\n"
		reuse, r2, err := first(turn2)
		if err != nil {
			return err
		}
		if _, err := c.Load(load); err != nil {
			return err
		}
		cold, r3, err := first(turn2)
		if err != nil {
			return err
		}
		if r3.Done.ReusedTokens != 0 || r2.Done.ReusedTokens < sys {
			return fmt.Errorf("cold run reused %d, warm run %d", r3.Done.ReusedTokens, r2.Done.ReusedTokens)
		}
		if res.ColdMS == 0 || cold < res.ColdMS {
			res.ColdMS = cold
		}
		if res.ReuseMS == 0 || reuse < res.ReuseMS {
			res.ReuseMS, res.Evaluated = reuse, r2.Done.EvaluatedTokens
		}
		res.PromptTokens = r2.Done.PromptTokens
	}
	res.Speedup = res.ColdMS / res.ReuseMS
	return json.NewEncoder(os.Stdout).Encode(res)
}

// detok turns tokens back into text by generating nothing: the runner has no
// detokenize op, so the text is rebuilt from the filler it came from.
func detok(c *driver.Client, toks []int32) (string, error) {
	text := ""
	for len(text) < 64*len(toks) {
		text += filler
		got, err := c.Tokenize(text, false)
		if err != nil {
			return "", err
		}
		if len(got) >= len(toks) {
			// The longest whole-sentence prefix with about len(toks) tokens.
			best := ""
			for _, s := range strings.SplitAfter(text, ". ") {
				next := best + s
				n, err := c.Tokenize(next, false)
				if err != nil {
					return "", err
				}
				if len(n) > len(toks) {
					break
				}
				best = next
			}
			return best, nil
		}
	}
	return "", errors.New("cannot build the system prompt")
}

type constrainedResult struct {
	Engine         string  `json:"engine"`
	Threads        int     `json:"threads"`
	Tools          int     `json:"tools"`
	Form           string  `json:"form"`
	Mode           string  `json:"mode"`
	GenTokens      int     `json:"gen_tokens"`
	FreeTPS        float64 `json:"unconstrained_tps"`
	ColdTPS        float64 `json:"constrained_cold_tps"` // the first constrained run: sets computed on the way
	WarmTPS        float64 `json:"constrained_tps"`      // the same request again: every set cached
	Ratio          float64 `json:"ratio"`                // constrained_tps / unconstrained_tps
	ConstrainedN   int     `json:"constrained_tokens"`
	ColdMaskMS     float64 `json:"cold_mask_ms"` // time in masks during the cold run
	ColdSets       int     `json:"cold_sets"`
	WarmMaskUSTok  float64 `json:"warm_mask_us_per_token"`
	FirstTokenCold float64 `json:"cold_first_token_ms"` // includes preparing the vocabulary and compiling
	Output         string  `json:"output"`
}

// constrained compares greedy decoding with and without a constraint on the
// same prompt: tokens per second over the tokens after the first (each
// token's own time: decode, mask and pick), best of reps; the first
// constrained run, which prepares the vocabulary, compiles the spec and fills
// the mask cache, is reported on its own.
func constrained(argv []string, load wire.Load, toolsPath string, form grammar.Form, mode grammar.Mode, g, reps int) error {
	body, err := os.ReadFile(toolsPath)
	if err != nil {
		return err
	}
	spec := &grammar.Spec{Form: form, Mode: mode}
	if err := json.Unmarshal(body, &spec.Tools); err != nil {
		return fmt.Errorf("%s: %w", toolsPath, err)
	}
	c, _, err := startLoaded(argv, load)
	if err != nil {
		return err
	}
	defer c.Close(30 * time.Second)
	tps := func(r *driver.Result) float64 {
		var sum float64
		for _, t := range r.Tokens[1:] {
			sum += t.MS
		}
		return float64(len(r.Tokens)-1) / (sum / 1000)
	}
	run := func(con *grammar.Spec) (*driver.Result, error) {
		r, err := c.Generate(wire.Generate{Prompt: chat, MaxTokens: g, Constraint: con}, nil)
		if err != nil {
			return nil, err
		}
		if len(r.Tokens) < 8 {
			return nil, fmt.Errorf("only %d tokens (%s): %q", len(r.Tokens), r.Done.Reason, r.Text())
		}
		return r, nil
	}
	res := constrainedResult{Engine: "constrained", Threads: load.Threads, Tools: len(spec.Tools), Form: string(form), Mode: string(mode), GenTokens: g}
	if _, err := run(nil); err != nil { // warm up
		return err
	}
	cold, err := run(spec)
	if err != nil {
		return fmt.Errorf("constrained: %w", err)
	}
	res.ColdTPS, res.ColdMaskMS, res.ColdSets, res.FirstTokenCold = tps(cold), cold.Done.MaskMS, cold.Done.MaskStates, cold.Done.FirstTokenMS
	res.Output, res.ConstrainedN = cold.Text(), len(cold.Tokens)
	for range reps {
		free, err := run(nil)
		if err != nil {
			return err
		}
		res.FreeTPS = max(res.FreeTPS, tps(free))
		warm, err := run(spec)
		if err != nil {
			return err
		}
		if t := tps(warm); t > res.WarmTPS {
			res.WarmTPS = t
			res.WarmMaskUSTok = warm.Done.MaskMS * 1000 / float64(warm.Done.Generated)
		}
	}
	res.Ratio = res.WarmTPS / res.FreeTPS
	return json.NewEncoder(os.Stdout).Encode(res)
}
