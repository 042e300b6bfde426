package main

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/llm"
	"github.com/clawedge/clawedge/localmodel"
)

func newGenerateCmd(g *globalFlags) *cobra.Command {
	var (
		model, prompt, template string
		maxTokens, threads, ctx int
		seed                    uint64
		temp                    float32
		raw, stats              bool
		toolsFile, form, mode   string
		count, maxCalls         int
	)
	cmd := &cobra.Command{
		Use:   "generate --model FILE --prompt TEXT [--tools FILE.json --form qwen|command|json --mode any|calls|text --n N]",
		Short: "Print a completion of the local model, streamed, or constrained to tool calls (for tests and benchmarks)",
		Long: `generate runs a GGUF model in the runner clawedge-llm and prints what it writes.
The prompt is a user message in the model's chat template, or with --raw the exact text to continue.
Without --model, models.local of the config is used.

With --tools (a JSON array of tool specs in the shape "clawedge tools --json" prints), decoding
is constrained to the calls those tools allow, in the output --form, and --mode says whether
the output may (any), must (calls) or must not (text) call them. Each of the --n outputs
(seeds --seed, --seed+1, ...) is printed with whether it parsed and validated; the exit
status is 1 when one did not.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(g)
			if err != nil {
				return err
			}
			opts := localmodel.Options{Model: model, Threads: threads, Context: ctx, Template: template,
				Log: newLogger(g, slog.LevelWarn)}
			if l := cfg.Models.Local; l != nil {
				opts.Model = cmp.Or(opts.Model, l.Path)
				opts.Template = cmp.Or(opts.Template, l.Template)
				if !cmd.Flags().Changed("threads") {
					opts.Threads = l.Threads
				}
				if !cmd.Flags().Changed("context") {
					opts.Context = l.Context
				}
			}
			if opts.Model == "" {
				return &exitError{2, fmt.Errorf("no model: give --model FILE or set models.local.path")}
			}
			if opts.Threads <= 0 {
				opts.Threads = runtime.NumCPU()
			}
			c, err := localmodel.New(opts)
			if err != nil {
				return err
			}
			defer c.Close()
			sctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
			defer stop()

			sampling := &llm.Sampling{Temperature: temp, TopK: 20, TopP: 0.8, RepeatPenalty: 1.05, Seed: seed}
			if toolsFile != "" {
				specs, err := readToolsFile(toolsFile)
				if err != nil {
					return &exitError{2, err}
				}
				return generateConstrained(sctx, c, constrainedRun{
					specs: specs, form: grammar.Form(form), mode: grammar.Mode(mode),
					prompt: prompt, maxTokens: maxTokens, sampling: *sampling, n: count, maxCalls: maxCalls,
				})
			}
			var s llm.Stream
			if raw {
				s, err = c.Complete(sctx, localmodel.Completion{Prompt: prompt, MaxTokens: maxTokens, Sampling: sampling})
			} else {
				s, err = c.Chat(sctx, llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: prompt}},
					MaxTokens: maxTokens, Sampling: sampling, NoThink: true})
			}
			if err != nil {
				return err
			}
			return printStream(sctx, s, stats)
		},
	}
	f := cmd.Flags()
	f.StringVar(&model, "model", "", "GGUF model file (default: models.local.path)")
	f.StringVar(&prompt, "prompt", "", "the user message (with --raw: the text to continue)")
	f.IntVar(&maxTokens, "max", 128, "most tokens to generate (-1: until the model stops)")
	f.Uint64Var(&seed, "seed", 0, "sampling seed: the same seed gives the same text")
	f.Float32Var(&temp, "temp", 0.7, "temperature (0: greedy)")
	f.IntVar(&threads, "threads", 0, "CPU threads (default: models.local.threads, else every CPU)")
	f.IntVar(&ctx, "context", 0, "context window in tokens (default: models.local.context, else 4096)")
	f.StringVar(&template, "template", "", "chat template qwen2|qwen2.5|qwen3 (default: what the model file says)")
	f.BoolVar(&raw, "raw", false, "continue the prompt as it is, without the chat template")
	f.BoolVar(&stats, "stats", false, "print token counts and speeds on stderr at the end")
	f.StringVar(&toolsFile, "tools", "", "constrain the output to calls of these tools (a JSON array of tool specs)")
	f.StringVar(&form, "form", "qwen", "with --tools: the output form qwen|command|json")
	f.StringVar(&mode, "mode", "any", "with --tools: any (text or calls) | calls | text")
	f.IntVar(&count, "n", 1, "with --tools: how many outputs, with seeds --seed, --seed+1, ...")
	f.IntVar(&maxCalls, "max-calls", 0, "with --tools: calls one output may hold, 1 to 64 (default 4)")
	cmd.MarkFlagRequired("prompt")
	return cmd
}

// printStream prints the chunks as they come, then a newline.
func printStream(ctx context.Context, s llm.Stream, stats bool) error {
	defer s.Close()
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for {
		c, err := s.Next()
		if err != nil {
			out.WriteString("\n")
			return err
		}
		out.WriteString(c.Text)
		out.Flush()
		if f := c.Final; f != nil {
			out.WriteString("\n")
			out.Flush()
			if stats {
				fmt.Fprintf(os.Stderr, "%s: %s\n", f.Reason, f.Speed())
			}
			return nil
		}
	}
}
