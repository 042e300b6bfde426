//go:build llamacpp

// Command maskbench measures the constraint engine's cost per generated token
// on a real vocabulary, and llama.cpp's own GBNF grammar sampler on the same
// grammar, side by side (scripts/bench/grammar.sh runs it):
//
//	maskbench -vocab ggml-vocab-qwen2.gguf -tools tools10.json [-form qwen -mode calls -steps 300 -reps 5]
//
// It walks a trajectory: a fixed sequence of pseudo-random logit vectors, and
// at each step the most likely token the constraint allows (after an end of
// generation the output starts over). Each step is timed as the runner does
// it: the allowed set of the state (cold: computed, warm: cached), the greedy
// pick among the allowed tokens, and the automaton's advance. llama.cpp's step
// is its grammar sampler applied to the full candidate array, the pick, and
// accepting the same token. Everything runs on one thread. It prints one
// JSON object.
package main

import (
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
	FreeP50US     float64 `json:"unconstrained_pick_p50_us"` // greedy pick over all logits, no constraint
	GBNFP50US     float64 `json:"gbnf_p50_us"`
	GBNFP99US     float64 `json:"gbnf_p99_us"`
	GBNFSteps     int     `json:"gbnf_steps"`
	SameSetSteps  int     `json:"same_set_steps"` // steps where llama.cpp allowed as many tokens as we did
	WarmSpeedup   float64 `json:"gbnf_over_warm_p50"`
	GBNFError     string  `json:"gbnf_error,omitempty"`
}

func main() {
	vocabPath := flag.String("vocab", "", "GGUF file whose vocabulary to use")
	toolsPath := flag.String("tools", "", "tools JSON file (grammar.ToolSpec array)")
	form := flag.String("form", "qwen", "output form: qwen, command, json")
	mode := flag.String("mode", "calls", "mode: calls, any, text")
	steps := flag.Int("steps", 300, "tokens in the trajectory")
	reps := flag.Int("reps", 5, "walks of the trajectory per measurement")
	gbnfReps := flag.Int("gbnf-reps", 2, "walks with llama.cpp's grammar sampler")
	flag.Parse()
	if *vocabPath == "" || *toolsPath == "" {
		fmt.Fprintln(os.Stderr, "usage: maskbench -vocab FILE.gguf -tools FILE.json [flags]")
		os.Exit(2)
	}
	if err := run(*vocabPath, *toolsPath, grammar.Form(*form), grammar.Mode(*mode), *steps, max(*reps, 1), max(*gbnfReps, 1)); err != nil {
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

func run(vocabPath, toolsPath string, form grammar.Form, mode grammar.Mode, nSteps, reps, gbnfReps int) error {
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
	spec := grammar.Spec{Form: form, Mode: mode}
	if err := json.Unmarshal(body, &spec.Tools); err != nil {
		return fmt.Errorf("%s: %w", toolsPath, err)
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

	// The trajectory, found by a first walk.
	sampler, _ := sampling.New(sampling.Params{})
	masks := grammar.NewMaskCache(c, v)
	traj := make([]step, 0, nSteps)
	var sample []byte
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
	r.Steps, r.Sample = len(traj), string(sample)

	// walk replays the trajectory as the runner would decode it, timing each step.
	walk := func(masks *grammar.MaskCache, times []float64, computed *[]float64) []float64 {
		for _, st := range traj {
			cached := masks.Cached(st.state)
			t := time.Now()
			set := masks.Allowed(st.state)
			tok, _ := sampler.Sample(logits[st.logit], set)
			if v.Kind(tok) != grammar.TokenEOG {
				masks.Advance(st.state, tok)
			}
			d := us(time.Since(t))
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
	r.ColdP50US, r.ColdP99US = quantile(cold, 0.5), quantile(cold, 0.99)
	r.WarmP50US, r.WarmP99US = quantile(warm, 0.5), quantile(warm, 0.99)
	var free []float64
	for range reps {
		for _, st := range traj {
			t := time.Now()
			sampler.Sample(logits[st.logit], nil)
			free = append(free, us(time.Since(t)))
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
			t := time.Now()
			_, n := g.Apply(logits[st.logit])
			ok := g.Allowed(st.tok)
			if ok && v.Kind(st.tok) != grammar.TokenEOG {
				g.Accept(st.tok)
			}
			gbnf = append(gbnf, us(time.Since(t)))
			if rep == 0 && n == masks.Allowed(st.state).Len() {
				r.SameSetSteps++
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
