package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// serverBench is bench against llama-server (scripts/bench/upstream.sh): the
// same filler prompt of p tokens (tokenized by the server), a different first
// token each run so that nothing is reused, g tokens greedily with the end of
// generation ignored, best of reps after a warm-up. Prefill and decode are
// measured at the client as bench does (request to first streamed token;
// tokens after the first over the time from the first to the last), and the
// server's own timings are reported beside them.
func serverBench(args []string) error {
	fs := flag.NewFlagSet("server", flag.ExitOnError)
	url := fs.String("url", "", "llama-server's base URL (http://127.0.0.1:PORT)")
	pid := fs.Int("pid", 0, "llama-server's process ID, for its peak RSS")
	threads := fs.Int("threads", 1, "threads the server was started with (reported)")
	p := fs.Int("prompt", 256, "prompt tokens")
	g := fs.Int("gen", 64, "tokens to generate")
	reps := fs.Int("reps", 3, "repetitions (the best is reported)")
	fs.Parse(args)
	if *url == "" {
		return fmt.Errorf("server: -url is required")
	}
	prompt, err := serverTokens(*url, *p)
	if err != nil {
		return err
	}
	res := serverResult{benchResult: benchResult{Engine: "llama-server", Threads: *threads, PromptTokens: *p, GenTokens: *g}}
	for rep := range *reps + 1 { // the first run warms up
		toks := append([]int{1000 + rep}, prompt[1:]...)
		r, err := serverRun(*url, toks, *g)
		if err != nil {
			return err
		}
		if r.tokens != *g || r.promptN != *p {
			return fmt.Errorf("run %d: %d tokens after a prompt of %d evaluated, want %d after %d", rep, r.tokens, r.promptN, *g, *p)
		}
		if rep == 0 {
			continue
		}
		res.PrefillTPS = max(res.PrefillTPS, float64(*p)/r.first.Seconds())
		res.DecodeTPS = max(res.DecodeTPS, float64(*g-1)/(r.last-r.first).Seconds())
		res.ServerPrefillTPS = max(res.ServerPrefillTPS, r.serverPrefill)
		res.ServerDecodeTPS = max(res.ServerDecodeTPS, r.serverDecode)
	}
	if *pid > 0 {
		if b, err := os.ReadFile("/proc/" + strconv.Itoa(*pid) + "/status"); err == nil {
			for line := range strings.SplitSeq(string(b), "\n") {
				if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
					kb, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
					res.PeakRSSMiB = kb / 1024
				}
			}
		}
	}
	return json.NewEncoder(os.Stdout).Encode(res)
}

type serverResult struct {
	benchResult
	ServerPrefillTPS float64 `json:"server_prefill_tps"` // the server's timings.prompt_per_second
	ServerDecodeTPS  float64 `json:"server_decode_tps"`  // timings.predicted_per_second
}

func serverTokens(url string, n int) ([]int, error) {
	text := filler
	for {
		body, _ := json.Marshal(map[string]any{"content": text, "add_special": false})
		resp, err := http.Post(url+"/tokenize", "application/json", bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		var r struct {
			Tokens []int `json:"tokens"`
		}
		err = json.NewDecoder(resp.Body).Decode(&r)
		resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("tokenize: %w", err)
		}
		if len(r.Tokens) >= n {
			return r.Tokens[:n], nil
		}
		text += filler
	}
}

type serverRunResult struct {
	first, last                 time.Duration // from the request
	tokens, promptN             int
	serverPrefill, serverDecode float64
}

// serverRun streams one /completion and times its tokens.
func serverRun(url string, prompt []int, g int) (serverRunResult, error) {
	body, _ := json.Marshal(map[string]any{"prompt": prompt, "n_predict": g, "temperature": 0, "top_k": 1,
		"ignore_eos": true, "cache_prompt": false, "stream": true})
	var res serverRunResult
	begin := time.Now()
	resp, err := http.Post(url+"/completion", "application/json", bytes.NewReader(body))
	if err != nil {
		return res, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return res, fmt.Errorf("completion: HTTP %d", resp.StatusCode)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Stop    bool `json:"stop"`
			Timings struct {
				PromptN   int     `json:"prompt_n"`
				Generated int     `json:"predicted_n"`
				PromptPS  float64 `json:"prompt_per_second"`
				Predicted float64 `json:"predicted_per_second"`
			} `json:"timings"`
		}
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			return res, fmt.Errorf("completion event %q: %w", data, err)
		}
		if !ev.Stop { // a token's event (one that completes no character may be held back and come with the next)
			now := time.Since(begin)
			if res.first == 0 {
				res.first = now
			}
			res.last = now
			continue
		}
		res.tokens, res.promptN = ev.Timings.Generated, ev.Timings.PromptN
		res.serverPrefill, res.serverDecode = ev.Timings.PromptPS, ev.Timings.Predicted
	}
	return res, sc.Err()
}
