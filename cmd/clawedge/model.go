package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/clawedge/clawedge/localmodel/gguf"
	"github.com/clawedge/clawedge/localmodel/modelfiles"
	"github.com/clawedge/clawedge/localmodel/synth"
	"github.com/spf13/cobra"
)

// newModelCmd is the `model` command group: local GGUF model files. Each
// subcommand has its own constructor, listed here.
func newModelCmd(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "model",
		Short: "Local model files: download, list, remove, inspect; synthesize random-weight test models",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(
		newModelPullCmd(g),
		newModelListCmd(g),
		newModelRmCmd(g),
		newModelInfoCmd(g),
		newModelSynthCmd(g),
	)
	return cmd
}

// modelsDir is --dir, else the models folder of data_dir.
func modelsDir(g *globalFlags, dir string) (string, error) {
	if dir != "" {
		return dir, nil
	}
	cfg, err := loadConfig(g)
	if err != nil {
		return "", err
	}
	return filepath.Join(cfg.DataDir, "models"), nil
}

func catalogHelp() string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, e := range modelfiles.Catalog() {
		fmt.Fprintf(tw, "  %s\t%s %s\t%s\n", e.Name, e.Model, e.Quant, modelfiles.FormatBytes(e.Size))
	}
	tw.Flush()
	return b.String()
}

// isTerminal reports whether w is a terminal (progress redraws in place).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && isTTY(f)
}

func newModelPullCmd(g *globalFlags) *cobra.Command {
	var dir, sum string
	var force bool
	cmd := &cobra.Command{
		Use:   "pull NAME|URL",
		Short: "Download a model from the catalog or a URL, verified, into the models folder",
		Long: `Downloads a GGUF model into the models folder (data_dir/models, or --dir).

NAME is one of the catalog (official Qwen GGUF files on Hugging Face, each with
its size and sha256):
` + catalogHelp() + `
or an http(s) URL of a GGUF file, installed under the URL's file name. A URL
download is verified only if --sha256 is given (or the URL is a catalog one).

The file arrives as NAME.part and is installed only once its size, sha256 and
GGUF header check out. An interrupted download (network, timeout, Ctrl-C)
keeps the .part: the same command resumes it. A wrong sum or a file that is
not GGUF is discarded. HTTPS_PROXY / HTTP_PROXY / NO_PROXY are honoured.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := modelsDir(g, dir)
			if err != nil {
				return err
			}
			req, err := pullRequest(args[0], sum)
			if err != nil {
				return &exitError{code: 2, err: err}
			}
			req.Dir, req.Replace = dir, force
			req.UserAgent = "clawedge/" + version
			stderr := cmd.ErrOrStderr()
			if req.SHA256 == "" {
				fmt.Fprintf(stderr, "warning: no --sha256 given: %s will be checked for size and GGUF format, not verified\n", req.File)
			}
			bar := modelfiles.NewProgress(stderr, req.File, isTerminal(stderr))
			req.Progress = bar.Update
			req.Notify = func(msg string) { fmt.Fprintf(stderr, "%s: %s\n", req.File, msg) }

			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			res, err := modelfiles.Download(ctx, req)
			bar.Finish()
			if errors.Is(err, modelfiles.ErrExists) {
				fmt.Fprintf(cmd.OutOrStdout(), "%s is already installed in %s (pass --force to download it again)\n", req.File, dir)
				return nil
			}
			if err != nil {
				return err
			}
			check := "sha256 verified"
			if !res.Verified {
				check = "NOT verified: no sha256 to check against"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "installed %s: %s, sha256 %s (%s)\n", res.Path, modelfiles.FormatBytes(res.Size), res.SHA256, check)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&dir, "dir", "", "models folder (default: data_dir/models of the config)")
	f.StringVar(&sum, "sha256", "", "expected sha256 of a URL download")
	f.BoolVar(&force, "force", false, "download again even if installed (the new file replaces it once verified)")
	return cmd
}

// pullRequest turns a catalog name or a URL into a download request.
func pullRequest(arg, sum string) (modelfiles.Request, error) {
	if !strings.Contains(arg, "://") {
		e, ok := modelfiles.Lookup(arg)
		if !ok {
			return modelfiles.Request{}, fmt.Errorf("unknown model %q: pull one of %s, or an https:// URL of a GGUF file",
				arg, strings.Join(modelfiles.Names(), ", "))
		}
		if sum != "" {
			return modelfiles.Request{}, fmt.Errorf("--sha256 is for URL downloads: %s has its own", e.Name)
		}
		return entryRequest(e)
	}
	u, err := url.Parse(arg)
	if err != nil {
		return modelfiles.Request{}, err
	}
	if u.Scheme != "https" && u.Scheme != "http" || u.Host == "" {
		return modelfiles.Request{}, fmt.Errorf("%s: only http and https URLs can be pulled", arg)
	}
	if e, ok := modelfiles.LookupURL(arg); ok {
		if sum != "" && !strings.EqualFold(sum, e.SHA256) {
			return modelfiles.Request{}, fmt.Errorf("--sha256 %s: the catalog has %s for %s", sum, e.SHA256, arg)
		}
		return entryRequest(e)
	}
	name := path.Base(u.Path)
	if err := modelfiles.CheckFileName(name); err != nil || u.Path == "" || strings.HasSuffix(u.Path, "/") {
		return modelfiles.Request{}, fmt.Errorf("%s: the URL must end in a file name (%v)", arg, err)
	}
	if sum != "" {
		if sum, err = modelfiles.ParseSHA256(sum); err != nil {
			return modelfiles.Request{}, fmt.Errorf("--sha256: %w", err)
		}
	}
	return modelfiles.Request{URL: arg, File: name, SHA256: sum}, nil
}

func entryRequest(e modelfiles.Entry) (modelfiles.Request, error) {
	if e.SHA256 == "" || e.Size <= 0 {
		// Never pull a catalog model unverified: its point is that it is known.
		return modelfiles.Request{}, fmt.Errorf("%s: the catalog has no sha256 and size for it; pull it by URL with --sha256", e.Name)
	}
	return modelfiles.Request{URL: e.URL, File: e.File, Size: e.Size, SHA256: e.SHA256}, nil
}

func newModelListCmd(g *globalFlags) *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the models installed in the models folder, and the catalog",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := modelsDir(g, dir)
			if err != nil {
				return err
			}
			list, err := modelfiles.List(dir)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "installed in %s:\n", dir)
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			files := map[string]modelfiles.Installed{}
			n := 0
			for _, m := range list {
				files[m.File] = m
				if m.Partial {
					continue
				}
				n++
				switch {
				case m.Err != nil:
					fmt.Fprintf(tw, "  %s\t%s\tunreadable: %v\n", m.File, modelfiles.FormatBytes(m.Size), m.Err)
				default:
					from := ""
					if m.Catalog != nil {
						from = "= " + m.Catalog.Name
					}
					fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", m.File, modelfiles.FormatBytes(m.Size), orNone(m.Architecture), m.Quantization, from)
				}
			}
			if n == 0 {
				fmt.Fprintln(tw, "  (none)")
			}
			for _, m := range list {
				if m.Partial {
					fmt.Fprintf(tw, "  %s\t%s\tunfinished download: pull again to resume, or model rm it\n", m.File, modelfiles.FormatBytes(m.Size))
				}
			}
			tw.Flush()
			fmt.Fprintln(w, "catalog (clawedge model pull NAME):")
			for _, e := range modelfiles.Catalog() {
				state := "not installed"
				if m, ok := files[e.File]; ok && m.Catalog != nil {
					state = "installed"
				} else if ok {
					state = "a different file of that name is installed"
				} else if p, ok := files[e.File+modelfiles.PartSuffix]; ok {
					state = fmt.Sprintf("partly downloaded (%d%%)", p.Size*100/e.Size)
				}
				fmt.Fprintf(tw, "  %s\t%s %s\t%s\t%s\n", e.Name, e.Model, e.Quant, modelfiles.FormatBytes(e.Size), state)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "models folder (default: data_dir/models of the config)")
	return cmd
}

func newModelRmCmd(g *globalFlags) *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "rm NAME|FILE",
		Short: "Remove an installed model (and its unfinished download) from the models folder",
		Long: `Removes a model file from the models folder: by catalog name, by file name
(".gguf" may be left off), or by a path to a file in the models folder. Its
.part (an unfinished download) goes too. Nothing outside the folder is touched.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := modelsDir(g, dir)
			if err != nil {
				return err
			}
			removed, err := modelfiles.Remove(dir, args[0])
			for _, p := range removed {
				fmt.Fprintf(cmd.OutOrStdout(), "removed %s\n", p)
			}
			if errors.Is(err, modelfiles.ErrOutside) {
				return &exitError{code: 2, err: fmt.Errorf("refusing to remove %w", err)}
			}
			return err
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "models folder (default: data_dir/models of the config)")
	return cmd
}

// modelInfo is what `model info` reports; --json prints it as is.
type modelInfo struct {
	File          string     `json:"file"`
	Size          int64      `json:"size"`
	GGUFVersion   uint32     `json:"gguf_version"`
	Architecture  string     `json:"architecture"`
	Name          string     `json:"name,omitempty"`
	Parameters    uint64     `json:"parameters"`
	Quantization  string     `json:"quantization"`
	ContextLength uint64     `json:"context_length,omitempty"`
	ChatTemplate  string     `json:"chat_template,omitempty"` // its family ("chatml") or first line
	TemplateBytes int        `json:"chat_template_bytes,omitempty"`
	Tokens        int        `json:"tokens,omitempty"`
	Tokenizer     string     `json:"tokenizer,omitempty"`
	Tensors       int        `json:"tensors"`
	Synthetic     *synthInfo `json:"synthetic,omitempty"`

	file          *gguf.File
	templateKnown bool // ChatTemplate is a family name, not a line of the template
}

type synthInfo struct {
	Shape string `json:"shape"`
	Seed  uint64 `json:"seed"`
}

func readModelInfo(path string) (*modelInfo, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return nil, err
	}
	info := &modelInfo{
		File: path, Size: f.Size, GGUFVersion: f.Version, Architecture: f.Architecture(), Name: f.Name(),
		Parameters: f.ParameterCount(), Quantization: f.Quantization(), Tensors: len(f.Tensors), file: f,
	}
	info.ContextLength, _ = f.ContextLength()
	if tmpl, ok := f.ChatTemplate(); ok {
		info.TemplateBytes = len(tmpl)
		info.ChatTemplate = gguf.TemplateFamily(tmpl)
		info.templateKnown = info.ChatTemplate != ""
		if !info.templateKnown {
			line, _, _ := strings.Cut(strings.TrimSpace(tmpl), "\n")
			if len(line) > 60 {
				line = line[:60] + "..."
			}
			info.ChatTemplate = line
		}
	}
	if v, ok := f.Get(gguf.KeyTokens); ok {
		info.Tokens = v.Len()
	}
	if v, ok := f.Get(gguf.KeyTokenizer); ok {
		info.Tokenizer, _ = v.AsString()
		if v, ok := f.Get(gguf.KeyPreTokenizer); ok {
			if pre, _ := v.AsString(); pre != "" {
				info.Tokenizer += "/" + pre
			}
		}
	}
	if v, _ := f.Get(synth.KeySynthetic); v.Any() == true {
		s := &synthInfo{}
		sv, _ := f.Get(synth.KeyShape)
		s.Shape, _ = sv.AsString()
		seed, _ := f.Get(synth.KeySeed)
		s.Seed, _ = seed.AsUint()
		info.Synthetic = s
	}
	return info, nil
}

func (m *modelInfo) print(w io.Writer) {
	row := func(k, format string, args ...any) { fmt.Fprintf(w, "%-14s %s\n", k, fmt.Sprintf(format, args...)) }
	row("file", "%s", m.File)
	row("size", "%s (%s bytes)", sizeString(m.Size), digits(uint64(m.Size)))
	row("architecture", "%s", orNone(m.Architecture))
	if m.Name != "" {
		row("name", "%s", m.Name)
	}
	row("parameters", "%s (%s)", countString(m.Parameters), digits(m.Parameters))
	row("quantization", "%s", m.Quantization)
	if m.ContextLength > 0 {
		row("context", "%d tokens", m.ContextLength)
	} else {
		row("context", "not stated")
	}
	switch {
	case m.TemplateBytes == 0:
		row("chat template", "none")
	case !m.templateKnown:
		row("chat template", "%q (%d bytes)", m.ChatTemplate, m.TemplateBytes)
	default:
		row("chat template", "%s (%d bytes)", m.ChatTemplate, m.TemplateBytes)
	}
	if m.Tokens > 0 {
		row("vocabulary", "%d tokens (%s)", m.Tokens, orNone(m.Tokenizer))
	}
	if m.Tensors == 0 {
		row("tensors", "none: a vocabulary-only file")
	} else {
		row("tensors", "%d", m.Tensors)
	}
	row("gguf", "version %d, alignment %d, data at byte %d", m.GGUFVersion, m.file.Alignment, m.file.DataOffset)
	if s := m.Synthetic; s != nil {
		row("synthetic", "RANDOM WEIGHTS (clawedge model synth --shape %s --seed %d): for tests and benchmarks only", s.Shape, s.Seed)
	}
}

func newModelInfoCmd(_ *globalFlags) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "info FILE",
		Short: "Show a GGUF model's architecture, parameters, quantization, context length, chat template and tensors",
		Long: `Reads the header of a GGUF model file (not the weights) and shows what it is.
A damaged or foreign file is an error that says what is wrong and where.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			info, err := readModelInfo(args[0])
			if err != nil {
				return err
			}
			if asJSON {
				out, err := json.MarshalIndent(info, "", "  ")
				if err != nil {
					return err
				}
				fmt.Fprintln(cmd.OutOrStdout(), string(out))
				return nil
			}
			info.print(cmd.OutOrStdout())
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the information as a JSON object")
	return cmd
}

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
				out, shape.Name, shape.Arch, typ, countString(params), sizeString(st.Size()), seed,
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

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// sizeString renders a byte count in binary units: "19.8 MiB".
func sizeString(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// countString renders a parameter count the way models are named: "494M", "1.5B".
func countString(n uint64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.2fB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1fK", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}

// digits groups thousands: 494,032,768.
func digits(n uint64) string {
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
