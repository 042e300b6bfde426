//go:build llamacpp

// Command maskbench measures the constraint engine's cost per generated token
// on a real vocabulary, and llama.cpp's own GBNF grammar sampler on the same
// grammar, side by side (scripts/bench/grammar.sh runs it):
//
//	maskbench -vocab ggml-vocab-qwen2.gguf -tools tools10.json [-form qwen -mode calls -steps 300 -reps 5]
//
// It walks a trajectory of tokens: by default the tokenization of a few
// realistic outputs (calls to the tools of tools10.json: pins, a serial line
// of text, I2C bytes, a PWM duty; or those of -outputs FILE; in mode any after
// a sentence of free text),
// each followed by end of generation; with -random, a walk that takes at each
// step the most likely token the constraint allows under pseudo-random
// logits. The logits of each step are pseudo-random, and the trajectory's
// tokens get the highest, so that every pick lands on the trajectory. Each
// step is timed as the runner does
// it: the allowed set of the state (cold: computed, warm: cached), the greedy
// pick among the allowed tokens, and the automaton's advance. llama.cpp's step
// is its grammar sampler applied to the full candidate array, the pick, and
// accepting the same token. Everything runs on one thread. It prints one
// JSON object.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"time"

	"github.com/clawedge/clawedge/cmd/clawedge-llm/internal/tokvocab"
	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/localmodel/llama"
	"github.com/clawedge/clawedge/localmodel/sampling"
	"github.com/clawedge/clawedge/tools"
)

type result struct {
	VocabTokens   int     `json:"vocab_tokens"`
	TrieNodes     int     `json:"trie_nodes"`
	VocabMiB      float64 `json:"vocab_mib"`
	VocabBuildMS  float64 `json:"vocab_build_ms"`
	Tools         int     `json:"tools"`
	Form          string  `json:"form"`
	Mode          string  `json:"mode"`
	States        int     `json:"states"`
	CompileMS     float64 `json:"compile_ms"`
	Steps         int     `json:"steps"`
	Outputs       int     `json:"outputs"` // ends of generation in the trajectory
	Sample        string  `json:"sample"`  // the trajectory's first output
	ColdP50US     float64 `json:"cold_p50_us"`
	ColdP99US     float64 `json:"cold_p99_us"`
	ColdSets      int     `json:"cold_sets"`        // states whose set one cold walk computed
	ColdSetMeanUS float64 `json:"cold_set_mean_us"` // mean time of a step that computed a set
	ColdSetMaxUS  float64 `json:"cold_set_max_us"`
	LargestSet    int     `json:"largest_set"` // tokens allowed in the widest state of the trajectory
	CacheMiB      float64 `json:"cache_mib"`
	WarmP50US     float64 `json:"warm_p50_us"`
	WarmP99US     float64 `json:"warm_p99_us"`
	WideSteps     int     `json:"wide_steps"`       // steps whose state allows more than half the vocabulary
	WarmWideP50US float64 `json:"warm_wide_p50_us"` // warm time of those steps
	WarmWideP99US float64 `json:"warm_wide_p99_us"`
	FreeP50US     float64 `json:"unconstrained_pick_p50_us"` // greedy pick over all logits, no constraint
	GBNFP50US     float64 `json:"gbnf_p50_us"`
	GBNFP99US     float64 `json:"gbnf_p99_us"`
	GBNFSteps     int     `json:"gbnf_steps"`
	SameSetSteps  int     `json:"same_set_steps"` // steps where llama.cpp allowed as many tokens as we did
	WarmSpeedup   float64 `json:"gbnf_over_warm_p50"`
	GBNFError     string  `json:"gbnf_error,omitempty"`
	FirstDiff     string  `json:"first_difference,omitempty"` // tokens only one side allows, at the first step where the sets differ
}

func main() {
	vocabPath := flag.String("vocab", "", "GGUF file whose vocabulary to use")
	toolsPath := flag.String("tools", "", "tools file: clawedge specs or MCP tool definitions")
	form := flag.String("form", "qwen", "output form: qwen, command, json")
	mode := flag.String("mode", "calls", "mode: calls, any, text")
	steps := flag.Int("steps", 300, "tokens in the trajectory")
	reps := flag.Int("reps", 5, "walks of the trajectory per measurement")
	gbnfReps := flag.Int("gbnf-reps", 2, "walks with llama.cpp's grammar sampler")
	random := flag.Bool("random", false, "a random walk instead of the realistic outputs")
	outputsPath := flag.String("outputs", "", "JSON array of the realistic outputs to walk, in place of the tools10.json ones")
	flag.Parse()
	if *outputsPath != "" {
		body, err := os.ReadFile(*outputsPath)
		if err == nil {
			err = json.Unmarshal(body, &outputs)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "maskbench:", err)
			os.Exit(2)
		}
	}
	if *vocabPath == "" || *toolsPath == "" {
		fmt.Fprintln(os.Stderr, "usage: maskbench -vocab FILE.gguf -tools FILE.json [flags]")
		os.Exit(2)
	}
	if err := run(*vocabPath, *toolsPath, grammar.Form(*form), grammar.Mode(*mode), *steps, max(*reps, 1), max(*gbnfReps, 1), *random); err != nil {
		fmt.Fprintln(os.Stderr, "maskbench:", err)
		os.Exit(1)
	}
}

// step is one token of the trajectory.
type step struct {
	state int32
	logit int // index of the logit vector
	tok   int32
}

// outputs are what a model that knows the tools would write (qwen form).
var outputs = []string{
	"<tool_call>\n{\"name\": \"gpio/write\", \"arguments\": {\"pin\": \"pump\", \"value\": true}}\n</tool_call>",
	"<tool_call>\n{\"name\": \"serial/write\", \"arguments\": {\"port\": \"arduino\", \"text\": \"SET LED 3 ON; report temperature every 30 s\", \"crlf\": true}}\n</tool_call>",
	"<tool_call>\n{\"name\": \"i2c/write\", \"arguments\": {\"bus\": \"i2c-1\", \"addr\": 118, \"register\": 244, \"bytes\": [39, 160]}}\n</tool_call>\n<tool_call>\n{\"name\": \"sensor/read\", \"arguments\": {\"sensor\": \"bme280_temperature\", \"unit\": \"si\"}}\n</tool_call>",
	"<tool_call>\n{\"name\": \"pwm/set\", \"arguments\": {\"channel\": \"fan_speed\", \"duty\": 62.5}}\n</tool_call>",
	"<tool_call>\n{\"name\": \"gpio/pulse\", \"arguments\": {\"pin\": \"door_lock\", \"ms\": 1500}}\n</tool_call>",
}

// freeText comes before the call in mode any.
const freeText = "Sure. I will switch the pump on first, then check that the soil moisture sensor reports a sensible value.\n"

func run(vocabPath, toolsPath string, form grammar.Form, mode grammar.Mode, nSteps, reps, gbnfReps int, random bool) error {
	runtime.GOMAXPROCS(1)
	llama.Init("", false)
	m, err := llama.LoadModel(vocabPath, llama.LoadOptions{VocabOnly: true})
	if err != nil {
		return err
	}
	defer m.Close()
	var r result
	t0 := time.Now()
	v, err := tokvocab.Build(m)
	if err != nil {
		return err
	}
	r.VocabBuildMS = ms(time.Since(t0))
	r.VocabTokens, r.TrieNodes, r.VocabMiB = v.Len(), v.Nodes(), float64(v.MemoryBytes())/(1<<20)

	body, err := os.ReadFile(toolsPath)
	if err != nil {
		return err
	}
	// A tools file: clawedge specs or MCP tool definitions (nested schemas
	// become their Shape), as `clawedge tools check` reads it.
	fts, err := tools.ReadToolsFile(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%s: %w", toolsPath, err)
	}
	spec := grammar.Spec{Form: form, Mode: mode}
	for _, ft := range fts {
		spec.Tools = append(spec.Tools, ft.Spec)
	}
	r.Tools, r.Form, r.Mode = len(spec.Tools), string(form), string(mode)
	t0 = time.Now()
	c, err := grammar.Compile(spec)
	if err != nil {
		return err
	}
	r.CompileMS = ms(time.Since(t0))
	r.States = c.NumStates()

	// Logit vectors: normal noise, the same every run.
	rng := rand.New(rand.NewPCG(1, 2))
	logits := make([][]float32, 16)
	for i := range logits {
		logits[i] = make([]float32, v.Len())
		for j := range logits[i] {
			logits[i][j] = float32(rng.NormFloat64() * 2)
		}
	}

	sampler, _ := sampling.New(sampling.Params{})
	masks := grammar.NewMaskCache(c, v)
	var traj []step
	var sample []byte
	eog := v.EOG()[0]
	if random {
		// A walk: the most likely allowed token each step.
		state := c.Start()
		for i := range nSteps {
			lg := i % len(logits)
			tok, err := sampler.Sample(logits[lg], masks.Allowed(state))
			if err != nil {
				return fmt.Errorf("step %d: state %d: %w", i, state, err)
			}
			traj = append(traj, step{state: state, logit: lg, tok: tok})
			if v.Kind(tok) == grammar.TokenEOG {
				r.Outputs++
				state = c.Start()
				continue
			}
			if r.Outputs == 0 {
				sample = append(sample, v.Bytes(tok)...)
			}
			state = masks.Advance(state, tok)
		}
	} else {
		// The realistic outputs, tokenized as the model's tokenizer does,
		// each ended by EOG; each step's logit vector gets a copy in which
		// the trajectory's token is the most likely.
		logits = logits[:0]
		for r.Outputs = 0; len(traj) < nSteps; r.Outputs++ {
			text := outputs[r.Outputs%len(outputs)]
			if mode == grammar.ModeAny {
				text = freeText + text
			}
			toks, err := m.Tokenize(text, false, false)
			if err != nil {
				return err
			}
			state := c.Start()
			for _, tok := range append(toks, eog) {
				if !masks.Allowed(state).Allowed(tok) {
					return fmt.Errorf("output %d: the constraint refuses token %d %q after %q", r.Outputs, tok, v.Bytes(tok), sample)
				}
				if len(logits) < 64 {
					lg := make([]float32, v.Len())
					for j := range lg {
						lg[j] = float32(rng.NormFloat64() * 2)
					}
					logits = append(logits, lg)
				}
				traj = append(traj, step{state: state, logit: len(traj) % 64, tok: tok})
				if r.Outputs == 0 && tok != eog {
					sample = append(sample, v.Bytes(tok)...)
				}
				state = masks.Advance(state, tok)
			}
		}
	}
	// boost makes the step's token the most likely in its logit vector
	// (shared by several steps) until the returned undo runs; it is not timed.
	boost := func(st step) func() {
		lg := logits[st.logit]
		old := lg[st.tok]
		lg[st.tok] = 100
		return func() { lg[st.tok] = old }
	}
	var mismatch error
	r.Steps, r.Sample = len(traj), string(sample)

	// walk replays the trajectory as the runner would decode it, timing each step.
	walk := func(masks *grammar.MaskCache, times []float64, computed *[]float64) []float64 {
		for i, st := range traj {
			undo := boost(st)
			cached := masks.Cached(st.state)
			t := time.Now()
			set := masks.Allowed(st.state)
			tok, _ := sampler.Sample(logits[st.logit], set)
			if v.Kind(tok) != grammar.TokenEOG {
				masks.Advance(st.state, tok)
			}
			d := us(time.Since(t))
			undo()
			if tok != st.tok && mismatch == nil {
				mismatch = fmt.Errorf("step %d: picked %d, the trajectory has %d", i, tok, st.tok)
			}
			times = append(times, d)
			if !cached && computed != nil {
				*computed = append(*computed, d)
			}
		}
		return times
	}
	var cold, warm, computed []float64
	var warmCache *grammar.MaskCache
	for range reps {
		warmCache = grammar.NewMaskCache(c, v)
		computed = computed[:0]
		cold = walk(warmCache, cold, &computed)
	}
	r.ColdSets = len(computed)
	r.ColdSetMeanUS = mean(computed)
	r.ColdSetMaxUS = slices.Max(append(computed, 0))
	for _, st := range traj {
		r.LargestSet = max(r.LargestSet, warmCache.Allowed(st.state).Len())
	}
	_, mem := warmCache.Stats()
	r.CacheMiB = float64(mem) / (1 << 20)
	for range reps {
		warm = walk(warmCache, warm, nil)
	}
	if mismatch != nil {
		return mismatch
	}
	r.ColdP50US, r.ColdP99US = quantile(cold, 0.5), quantile(cold, 0.99)
	r.WarmP50US, r.WarmP99US = quantile(warm, 0.5), quantile(warm, 0.99)
	var wide []float64
	for i, d := range warm {
		if warmCache.Allowed(traj[i%len(traj)].state).Len() > v.Len()/2 {
			wide = append(wide, d)
		}
	}
	r.WideSteps = len(wide) / reps
	r.WarmWideP50US, r.WarmWideP99US = quantile(wide, 0.5), quantile(wide, 0.99)
	var free []float64
	for range reps {
		for _, st := range traj {
			undo := boost(st)
			t := time.Now()
			sampler.Sample(logits[st.logit], nil)
			free = append(free, us(time.Since(t)))
			undo()
		}
	}
	r.FreeP50US = quantile(free, 0.5)

	// llama.cpp's grammar sampler on the GBNF of the same constraint.
	g, err := m.NewGrammarSampler(c.GBNF(), "root")
	if err != nil {
		r.GBNFError = err.Error()
		out, _ := json.Marshal(r)
		fmt.Println(string(out))
		return nil
	}
	defer g.Close()
	var gbnf []float64
	for rep := range gbnfReps {
		g.Reset()
		for i, st := range traj {
			undo := boost(st)
			t := time.Now()
			best, n := g.Apply(logits[st.logit])
			ok := g.Allowed(st.tok)
			if ok && v.Kind(st.tok) != grammar.TokenEOG {
				g.Accept(st.tok)
			}
			gbnf = append(gbnf, us(time.Since(t)))
			undo()
			if ok && best != st.tok {
				return fmt.Errorf("step %d: llama.cpp picked %d, the trajectory has %d", i, best, st.tok)
			}
			if set := masks.Allowed(st.state); rep == 0 && n == set.Len() {
				r.SameSetSteps++
			} else if rep == 0 && r.FirstDiff == "" {
				var ours, theirs []string
				for tok := range int32(v.Len()) {
					if a, b := set.Allowed(tok), g.Allowed(tok); a && !b && len(ours) < 8 {
						ours = append(ours, fmt.Sprintf("%d %q", tok, v.Bytes(tok)))
					} else if b && !a && len(theirs) < 8 {
						theirs = append(theirs, fmt.Sprintf("%d %q", tok, v.Bytes(tok)))
					}
				}
				r.FirstDiff = fmt.Sprintf("step %d (%d vs %d allowed): only ours %v; only llama.cpp %v", i, set.Len(), n, ours, theirs)
			}
			if !ok {
				// The grammars disagree; accepting would abort llama.cpp.
				return fmt.Errorf("step %d: llama.cpp's grammar refuses token %d %q that the constraint allows after %q",
					i, st.tok, v.Bytes(st.tok), sample)
			}
			if v.Kind(st.tok) == grammar.TokenEOG {
				g.Reset()
			}
		}
	}
	r.GBNFSteps = len(traj)
	r.GBNFP50US, r.GBNFP99US = quantile(gbnf, 0.5), quantile(gbnf, 0.99)
	if r.WarmP50US > 0 {
		r.WarmSpeedup = r.GBNFP50US / r.WarmP50US
	}
	out, _ := json.Marshal(r)
	fmt.Println(string(out))
	return nil
}

func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[min(len(s)-1, int(math.Ceil(q*float64(len(s))))-1)]
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }
func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
