package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/clawedge/clawedge/localmodel/gguf"
	"github.com/clawedge/clawedge/localmodel/modelfiles"
	"github.com/clawedge/clawedge/localmodel/synth"
)

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
	row("size", "%s (%s bytes)", modelfiles.FormatBytes(m.Size), digits(uint64(m.Size)))
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

// newModelInfoCmd is `model info FILE`: what a GGUF file says of itself.
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
