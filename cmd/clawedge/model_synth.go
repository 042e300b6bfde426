package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/clawedge/clawedge/localmodel/gguf"
	"github.com/clawedge/clawedge/localmodel/modelfiles"
	"github.com/clawedge/clawedge/localmodel/synth"
)

// vocabName is the Qwen2 vocabulary file scripts/fetch-llama.sh provides.
const vocabName = "ggml-vocab-qwen2.gguf"

// findVocab looks for the Qwen2 vocabulary where it is in a source checkout
// (third_party/llama/models/ in dir or a folder above it, then in the
// executable's folder or one above it: bin/clawedge of `make` finds the tree
// it was built in from anywhere) and where it is in an installed layout
// (../share/clawedge/ from the executable's folder). It returns the path
// found, or every place it looked.
func findVocab(dir, exe string) (string, []string) {
	var tried []string
	found := func(p string) bool {
		tried = append(tried, p)
		st, err := os.Stat(p)
		return err == nil && st.Mode().IsRegular()
	}
	starts := []string{dir}
	if exe != "" {
		starts = append(starts, filepath.Dir(exe))
	}
	for _, d := range starts {
		for d != "" {
			if p := filepath.Join(d, "third_party", "llama", "models", vocabName); found(p) {
				return p, nil
			}
			up := filepath.Dir(d)
			if up == d {
				break
			}
			d = up
		}
	}
	if exe != "" {
		if p := filepath.Clean(filepath.Join(filepath.Dir(exe), "..", "share", "clawedge", vocabName)); found(p) {
			return p, nil
		}
	}
	return "", tried
}

// newModelSynthCmd is `model synth`: write a random-weight model of a known shape, for tests.
func newModelSynthCmd(_ *globalFlags) *cobra.Command {
	var shapeName, typeName, out, vocab string
	var seed uint64
	var force bool
	cmd := &cobra.Command{
		Use:   "synth --shape SHAPE --type f16|q8_0 --out FILE",
		Short: "Write a random-weight Qwen-shaped model with the real Qwen2 vocabulary (for tests and benchmarks)",
		Long: `Writes a GGUF model that llama.cpp loads and runs at the speed of the real
thing, but whose weights are random (seeded: the same options give the same
bytes): its answers are noise. It stands in for trained weights where none can
be downloaded, in tests and speed benchmarks.

Shapes: ` + strings.Join(synth.ShapeNames(), ", ") + `
  tiny          qwen2, 2 layers, 64 wide (~20 MB at q8_0: the vocabulary dominates)
  qwen3-tiny    qwen3, 2 layers, 64 wide, q/k norms, tied output
  qwen2.5-0.5b  the shape of Qwen2.5-0.5B-Instruct: 24 layers, 896 wide, 494M parameters

The vocabulary (tokens, merges, special tokens, chat template) is copied from
--vocab; by default from third_party/llama/models/` + vocabName + ` in the
current folder or one above it (a source checkout, after scripts/fetch-llama.sh),
else ../share/clawedge/` + vocabName + ` beside the executable's folder
(an installed layout).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			shape, err := synth.LookupShape(shapeName)
			if err != nil {
				return &exitError{code: 2, err: fmt.Errorf("--shape: %w", err)}
			}
			typ, ok := gguf.ParseTensorType(typeName)
			if !ok || (typ != gguf.F16 && typ != gguf.Q8_0) {
				return &exitError{code: 2, err: fmt.Errorf("--type %q: want f16 or q8_0", typeName)}
			}
			if vocab == "" {
				cwd, _ := os.Getwd()
				exe, _ := os.Executable()
				if exe != "" {
					if real, err := filepath.EvalSymlinks(exe); err == nil {
						exe = real
					}
				}
				found, tried := findVocab(cwd, exe)
				if found == "" {
					return fmt.Errorf("no Qwen2 vocabulary found (looked for %s); run scripts/fetch-llama.sh in the source tree or pass --vocab FILE",
						strings.Join(tried, ", "))
				}
				vocab = found
			}
			if _, err := os.Stat(out); err == nil && !force {
				return fmt.Errorf("%s exists: pass --force to overwrite it", out)
			} else if err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
			start := time.Now()
			m, err := synth.New(synth.Options{Shape: shape, Type: typ, Seed: seed, Vocab: vocab})
			if err != nil {
				return err
			}
			if err := m.WriteFile(out); err != nil {
				return err
			}
			st, err := os.Stat(out)
			if err != nil {
				return err
			}
			var params uint64
			for _, t := range m.Tensors {
				params += t.Elements()
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: %s (%s) %s, %s parameters, %s, seed %d, in %s\n",
				out, shape.Name, shape.Arch, typ, countString(params), modelfiles.FormatBytes(st.Size()), seed,
				time.Since(start).Round(10*time.Millisecond))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&shapeName, "shape", "", "model shape: "+strings.Join(synth.ShapeNames(), ", "))
	f.StringVar(&typeName, "type", "", "weight type: f16 or q8_0")
	f.StringVar(&out, "out", "", "the GGUF file to write")
	f.Uint64Var(&seed, "seed", 1, "random seed: the same seed gives the same file")
	f.StringVar(&vocab, "vocab", "", "GGUF file to copy the vocabulary from (default: see above)")
	f.BoolVar(&force, "force", false, "overwrite --out if it exists")
	for _, name := range []string{"shape", "type", "out"} {
		cmd.MarkFlagRequired(name)
	}
	return cmd
}
