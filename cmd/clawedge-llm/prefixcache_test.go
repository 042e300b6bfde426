//go:build llamacpp

package main

import (
	"encoding/binary"
	"encoding/json"
	"flag"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clawedge/clawedge/cmd/clawedge-llm/internal/driver"
	"github.com/clawedge/clawedge/localmodel/gguf"
	"github.com/clawedge/clawedge/localmodel/synth"
	"github.com/clawedge/clawedge/localmodel/wire"
)

// toolsSystem is a system turn of the size clawedge sends (ten tools, some
// thousand tokens): the fixed prefix whose state is saved.
func toolsSystem(t testing.TB) string {
	t.Helper()
	body, err := os.ReadFile("testdata/tools10.json")
	if err != nil {
		t.Fatal(err)
	}
	return "<|im_start|>system\nYou switch relays.\n\n# Tools\n\n<tools>\n" + string(body) + "</tools><|im_end|>\n"
}

func userTurn(text string) string {
	return "<|im_start|>user\n" + text + "<|im_end|>\n<|im_start|>assistant\n"
}

// withCache is a runner with the tiny model and the prefix cache pc.
func withCache(t *testing.T, model string, pc wire.PrefixCache) (*driver.Client, *wire.Model) {
	t.Helper()
	c, err := driver.Start([]string{runnerBin})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		select {
		case <-c.Ended(): // stopped by the test
		default:
			c.Close(20 * time.Second)
		}
	})
	m, err := c.Load(wire.Load{Path: model, Threads: 1, Context: 2048, PrefixCache: &pc})
	if err != nil {
		t.Fatal(err)
	}
	return c, m
}

func stop(t *testing.T, c *driver.Client) {
	t.Helper()
	if err := c.Close(20 * time.Second); err != nil || strings.Contains(c.Stderr(), "DATA RACE") {
		t.Fatalf("runner exit: %v\n%s", err, c.Stderr())
	}
}

// TestPrefixCache: the first turn saves the fixed prefix's state; a new
// runner loads it for a turn sharing that prefix, evaluates only the rest and
// answers as the runner that computed it did. A damaged file, one of another
// model, one cut short or one over the bound is not used, each with a note
// saying why; the runner answers all the same and a usable file replaces a
// damaged one. (One test: each runner start costs seconds under -race.)
func TestPrefixCache(t *testing.T) {
	sys := toolsSystem(t)
	dir := t.TempDir()
	pc := wire.PrefixCache{Path: filepath.Join(dir, "prefix.kv"), MaxBytes: 64 << 20}
	greedy := wire.Sampling{Temperature: 0}
	gen := wire.Generate{Prompt: sys + userTurn("Turn the lamp on."), Prefix: len(sys), MaxTokens: 2, Sampling: greedy}
	second := wire.Generate{Prompt: sys + userTurn("Open the door lock, please."), Prefix: len(sys), MaxTokens: 8, Sampling: greedy}

	c, m := withCache(t, tinyModel, pc)
	if m.PrefixNote != "" {
		t.Errorf("no file yet, but a note: %s", m.PrefixNote)
	}
	d := generate(t, c, gen).Done
	fixed, _ := c.Tokenize(sys, true)
	t.Logf("prefix of %d tokens, prompt of %d", len(fixed), d.PromptTokens)
	if d.PrefixSaved != len(fixed) || d.SavedTokens != 0 || d.ReusedTokens != 0 || d.PrefixNote != "" {
		t.Fatalf("first turn: %+v; want the %d tokens of the prefix saved", d, len(fixed))
	}
	// The same prefix again, computed in this runner: nothing more is written.
	want := generate(t, c, second)
	if d = want.Done; d.PrefixSaved != 0 || d.ReusedTokens < len(fixed) {
		t.Errorf("second turn: %+v", d)
	}
	stop(t, c)
	good, err := os.ReadFile(pc.Path)
	if err != nil {
		t.Fatal(err)
	}

	c, m = withCache(t, tinyModel, pc)
	if m.PrefixNote != "" {
		t.Errorf("the saved state was not taken: %s", m.PrefixNote)
	}
	r := generate(t, c, second)
	d = r.Done
	if d.SavedTokens != len(fixed) || d.ReusedTokens != len(fixed) || d.PrefixSaved != 0 || d.PrefixNote != "" {
		t.Fatalf("after a restart: %+v; want the %d prefix tokens from the saved state", d, len(fixed))
	}
	if float64(d.SavedTokens) < 0.9*float64(d.PromptTokens) {
		t.Errorf("after a restart %d of %d prompt tokens came from the saved state, want >= 90 %%", d.SavedTokens, d.PromptTokens)
	}
	// The loaded state is the computed one: the same answer.
	if !slices.Equal(r.IDs(), want.IDs()) {
		t.Errorf("from the saved state %v, computed %v", r.IDs(), want.IDs())
	}
	stop(t, c)

	// A flipped byte in the state: the header is fine, the CRC is not.
	bad := slices.Clone(good)
	bad[len(bad)-100] ^= 0x40
	os.WriteFile(pc.Path, bad, 0o600)
	c, m = withCache(t, tinyModel, pc)
	d = generate(t, c, gen).Done
	if m.PrefixNote != "" || d.SavedTokens != 0 || d.ReusedTokens != 0 || !strings.Contains(d.PrefixNote, "CRC") || d.PrefixSaved == 0 {
		t.Errorf("damaged state: load note %q, done %+v; want a CRC note and the prefix saved anew", m.PrefixNote, d)
	}
	stop(t, c)
	if now, _ := os.ReadFile(pc.Path); !slices.Equal(now, good) {
		t.Error("the damaged file was not replaced by a good one")
	}

	// A file cut short, one that is not a state, one of another model: each
	// is refused at load with a note saying why (the runner reads only the
	// header then; the state is read when a prompt shares its prefix).
	key := prefixKey{Model: fileID(tinyModel), Runner: "the test's runner"}
	hdr, _, _ := readPrefix(t, good)
	hdr.Key = key
	raw, _ := json.Marshal(hdr)
	rekeyed := slices.Concat([]byte(prefixMagic), binary.LittleEndian.AppendUint32(nil, uint32(len(raw))), raw, good[len(good)-int(hdr.State)-4*hdr.Tokens:])
	other := key
	other.Model = fileID(filepath.Join(dir, "other.gguf"))
	for _, tc := range []struct {
		name, note string
		file       []byte
		key        prefixKey
	}{
		{"whole", "", rekeyed, key},
		{"cut short", "damaged", rekeyed[:len(rekeyed)/2], key},
		{"not ours", "not a clawedge prompt state", []byte("GGUF and then some"), key},
		{"another model", "another model", rekeyed, other},
		{"tokens changed", "digest", slices.Concat(rekeyed[:len(rekeyed)-int(hdr.State)-1], []byte{1}, rekeyed[len(rekeyed)-int(hdr.State):]), key},
	} {
		os.WriteFile(pc.Path, tc.file, 0o600)
		p, note := openPrefixStore(pc, tc.key)
		if tc.note == "" && (note != "" || p.saved == nil || p.saved.hdr.Tokens != hdr.Tokens) ||
			tc.note != "" && (!strings.Contains(note, tc.note) || p.saved != nil) {
			t.Errorf("%s: note %q, saved %v; want %q", tc.name, note, p.saved != nil, tc.note)
		}
	}

	// A state whose header and CRC are right but whose bytes are not
	// llama.cpp's (a file written by hand): llama.cpp refuses it, the runner
	// says so and answers. With a bound below the real state's size, the
	// prefix is then not saved: said once, not tried again.
	garbage := make([]byte, 1000)
	for i := range garbage {
		garbage[i] = byte(i * 7)
	}
	ghdr, gtoks, _ := readPrefix(t, good)
	ghdr.State, ghdr.CRC = int64(len(garbage)), crc32.Checksum(garbage, crcTable)
	raw, _ = json.Marshal(ghdr)
	crafted := slices.Concat([]byte(prefixMagic), binary.LittleEndian.AppendUint32(nil, uint32(len(raw))), raw, gtoks, garbage)
	os.WriteFile(pc.Path, crafted, 0o600)
	small := pc
	small.MaxBytes = 4096
	c, m = withCache(t, tinyModel, small)
	d = generate(t, c, gen).Done
	if m.PrefixNote != "" || d.SavedTokens != 0 || d.PrefixSaved != 0 || !strings.Contains(d.PrefixNote, "does not fit this model") ||
		!strings.Contains(d.PrefixNote, "over the bound") {
		t.Errorf("a state llama.cpp refuses, then one over the bound: load note %q, done %+v", m.PrefixNote, d)
	}
	gen.Prompt = sys + userTurn("And the fan?")
	if d = generate(t, c, gen).Done; d.PrefixNote != "" || d.SavedTokens != 0 {
		t.Errorf("tried again: %+v", d)
	}
	stop(t, c)
	if now, _ := os.ReadFile(pc.Path); !slices.Equal(now, crafted) {
		t.Error("a state over the bound was written")
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".prefix.kv.*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// readPrefix splits a prefix cache file into its header, tokens and state.
func readPrefix(t *testing.T, file []byte) (prefixHeader, []byte, []byte) {
	t.Helper()
	n := int(binary.LittleEndian.Uint32(file[len(prefixMagic):]))
	var h prefixHeader
	if err := json.Unmarshal(file[len(prefixMagic)+4:len(prefixMagic)+4+n], &h); err != nil {
		t.Fatal(err)
	}
	rest := file[len(prefixMagic)+4+n:]
	return h, rest[:4*h.Tokens], rest[4*h.Tokens:]
}

// BenchmarkFirstTokenAfterRestart: the time to the first token of a runner's
// first generation (tokenizing, the saved state read and loaded if any, the
// prefill of the rest, the first sample), for a prompt of ten tools and a
// short user turn: with the fixed prefix's state saved by an earlier runner,
// and with none. The runner's start and model load are outside the timer.
//
// The model is a random-weight one of 12 layers, 384 wide (tied, Q8_0), where
// evaluating a token costs what it does in a real model relative to the fixed
// costs of a generation; the tiny test model's per-token cost is so small
// that the vocabulary-sized work of every generation dominates. The single
// pass of the test command (-benchtime 1x) uses the tiny model: it checks the
// benchmark runs, without synthesizing another model.
func BenchmarkFirstTokenAfterRestart(b *testing.B) {
	model := tinyModel
	if f := flag.Lookup("test.benchtime"); f == nil || f.Value.String() != "1x" {
		model = filepath.Join(testDir, "deep.gguf")
		if !fileExists(model) {
			shape := synth.Shape{Name: "deep", Arch: "qwen2", Layers: 12, Width: 384, Heads: 6, KVHeads: 2, FFN: 1536,
				Context: 4096, Tied: true, RopeBase: 1e6, RMSEps: 1e-6}
			m, err := synth.New(synth.Options{Shape: shape, Type: gguf.Q8_0, Seed: 1, Vocab: vocabFile})
			if err == nil {
				err = m.WriteFile(model)
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	sys := toolsSystem(b)
	path := filepath.Join(b.TempDir(), "prefix.kv")
	gen := wire.Generate{Prompt: sys + userTurn("Turn the lamp on."), Prefix: len(sys), MaxTokens: 1}
	first := func(b *testing.B, pc *wire.PrefixCache) *wire.Done {
		b.StopTimer()
		c, err := driver.Start([]string{runnerBin})
		if err != nil {
			b.Fatal(err)
		}
		defer func() {
			b.StopTimer()
			c.Close(20 * time.Second)
			b.StartTimer()
		}()
		if _, err := c.Load(wire.Load{Path: model, Threads: 1, Context: 2048, PrefixCache: pc}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		r, err := c.Generate(gen, nil)
		if err != nil {
			b.Fatal(err)
		}
		return r.Done
	}
	// The state an earlier run saved.
	if d := first(b, &wire.PrefixCache{Path: path}); d.PrefixSaved == 0 {
		b.Fatalf("nothing saved: %+v", d)
	}
	for _, tc := range []struct {
		name string
		pc   *wire.PrefixCache
	}{{"saved", &wire.PrefixCache{Path: path}}, {"none", nil}} {
		b.Run(tc.name, func(b *testing.B) {
			var ttft float64
			for range b.N {
				d := first(b, tc.pc)
				if (tc.pc != nil) != (d.SavedTokens > 0) {
					b.Fatalf("%s: %+v", tc.name, d)
				}
				ttft += d.FirstTokenMS
			}
			b.ReportMetric(ttft/float64(b.N), "first-token-ms")
		})
	}
}
