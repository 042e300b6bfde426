package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/clawedge/clawedge/agent"
	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/llm"
	"github.com/clawedge/clawedge/localmodel"
	"github.com/clawedge/clawedge/tools"
)

func readToolsFile(path string) ([]grammar.ToolSpec, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	specs, err := tools.ReadSpecs(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return specs, nil
}

type constrainedRun struct {
	specs     []grammar.ToolSpec
	form      grammar.Form
	mode      grammar.Mode
	prompt    string
	maxTokens int
	sampling  llm.Sampling
	n         int
	maxCalls  int // 0: grammar.DefaultMaxCalls
}

// generateConstrained prints each output and whether it parsed and validated.
func generateConstrained(ctx context.Context, c *localmodel.Client, r constrainedRun) error {
	spec := grammar.Spec{Form: r.form, Mode: r.mode, Tools: r.specs, MaxCalls: r.maxCalls}
	if err := spec.Check(); err != nil {
		return &exitError{2, err}
	}
	if _, err := grammar.Compile(spec); err != nil { // say it here rather than from the runner
		return &exitError{2, err}
	}
	defs := agent.ToolDefs(r.specs, true) // the prompt the agent builds for the local model
	failed := 0
	for i := 0; i < max(r.n, 1); i++ {
		sampling := r.sampling
		sampling.Seed = r.sampling.Seed + uint64(i)
		text, fin, err := llm.Collect(mustStream(c.Chat(ctx, llm.Request{
			Messages:  []llm.Message{{Role: llm.RoleUser, Content: r.prompt}},
			Tools:     defs,
			MaxTokens: r.maxTokens, Sampling: &sampling, NoThink: true, Constraint: &spec,
		})))
		text = rawText(text, fin)
		fmt.Printf("--- %d (seed %d)\n%s\n", i+1, sampling.Seed, text)
		verdict := checkGenerated(spec, r.specs, text, fin, err)
		if !strings.HasPrefix(verdict, "ok") {
			failed++
		}
		fmt.Printf("=> %s\n", verdict)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	if failed > 0 {
		return &exitError{1, fmt.Errorf("%d of %d outputs did not parse and validate", failed, max(r.n, 1))}
	}
	return nil
}

// mustStream turns a failed start into a stream that reports the error.
func mustStream(s llm.Stream, err error) llm.Stream {
	if err != nil {
		return errStream{err}
	}
	return s
}

type errStream struct{ err error }

func (e errStream) Next() (llm.Chunk, error) { return llm.Chunk{}, e.err }
func (e errStream) Close() error             { return nil }

// rawText is the output as the model wrote it, calls and all: the provider's
// chunks carry only the text before the calls.
func rawText(text string, fin *llm.Final) string {
	if fin != nil && fin.Raw != "" {
		return fin.Raw
	}
	return text
}

// checkGenerated says whether an output parsed and its calls validated.
func checkGenerated(spec grammar.Spec, specs []grammar.ToolSpec, text string, fin *llm.Final, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	text = rawText(text, fin)
	out, perr := grammar.ParseOutput(spec, text)
	if perr != nil {
		return "does not parse: " + perr.Error() + reasonNote(fin)
	}
	if spec.Mode == grammar.ModeCalls && len(out.Calls) == 0 {
		return "no call, in mode calls" + reasonNote(fin)
	}
	if spec.MaxCalls > 0 && len(out.Calls) > spec.MaxCalls {
		return fmt.Sprintf("%d calls, above max_calls %d", len(out.Calls), spec.MaxCalls)
	}
	var calls []string
	for _, call := range out.Calls {
		s, ok := findSpec(specs, call.Name)
		if !ok {
			return fmt.Sprintf("calls %s, which is not allowed", call.Name)
		}
		if out.Command == nil { // a command is validated as a person's command is, below
			if _, err := s.ValidateJSON(call.Arguments); err != nil {
				return "invalid: " + err.Error()
			}
		}
		calls = append(calls, call.Name+" "+string(call.Arguments))
	}
	if out.Command != nil {
		for _, st := range out.Command.Stages {
			for _, inv := range st.Calls {
				s, _ := findSpec(specs, inv.Tool())
				if err := s.Precheck(inv.Params); err != nil {
					return "invalid: " + err.Error()
				}
			}
		}
	}
	if len(calls) == 0 {
		if spec.Mode == grammar.ModeCalls {
			return "does not parse: no call" + reasonNote(fin)
		}
		return "ok: text" + reasonNote(fin)
	}
	return fmt.Sprintf("ok: %d call(s): %s", len(calls), strings.Join(calls, "; "))
}

func reasonNote(fin *llm.Final) string {
	if fin != nil && fin.Reason != llm.ReasonStop {
		return " (ended: " + string(fin.Reason) + ")"
	}
	return ""
}

func findSpec(specs []grammar.ToolSpec, name string) (grammar.ToolSpec, bool) {
	for _, s := range specs {
		if s.Name == name {
			return s, true
		}
	}
	return grammar.ToolSpec{}, false
}
