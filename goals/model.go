package goals

// This file: the two things a goal asks a model: write a plan, and judge how
// near the goal is. Both are constrained like tool calls are: the plan to the
// plan's tools in the command language, the judgement to one goal/score call.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/clawedge/clawedge/agent"
	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/llm"
	"github.com/clawedge/clawedge/tools"
)

// maxPromptSteps bounds the steps a plan's prompt shows.
const maxPromptSteps = 16

// modelTimeout bounds one model call of a goal.
const modelTimeout = 5 * time.Minute

// ask makes one constrained model call and returns the whole text the model
// wrote and the tokens it used; a reply that cannot be read is an
// *unreadableReply, with the tokens it used.
func ask(ctx context.Context, p llm.Provider, system, user string, spec grammar.Spec, maxTokens int) (string, int, error) {
	ctx, cancel := context.WithTimeout(ctx, modelTimeout)
	defer cancel()
	req := llm.Request{
		Messages:  []llm.Message{{Role: llm.RoleSystem, Content: system}, {Role: llm.RoleUser, Content: user}},
		MaxTokens: maxTokens,
		NoThink:   true,
	}
	if p.Caps().Grammar {
		req.Constraint = &spec
	}
	st, err := p.Chat(ctx, req)
	if err != nil {
		return "", 0, err
	}
	defer st.Close()
	var b strings.Builder
	for {
		c, err := st.Next()
		if err != nil {
			return "", 0, err
		}
		b.WriteString(c.Text)
		if f := c.Final; f != nil {
			text := b.String()
			if f.Raw != "" {
				text = f.Raw
			}
			in, out := f.Usage.PromptTokens, f.Usage.CompletionTokens
			if in == 0 {
				in = agent.EstimateTokens(req.Messages, nil)
			}
			if out == 0 {
				out = (len(text) + 2) / 3
			}
			if f.CallsErr != nil {
				return "", in + out, &unreadableReply{f.CallsErr}
			}
			if len(f.ToolCalls) > 0 {
				// Read by the provider (a constraint in wire names, or an
				// API's call fields): written back in the command language.
				var err error
				if text, err = callsText(f.ToolCalls, spec); err != nil {
					return "", in + out, &unreadableReply{err}
				}
			}
			return text, in + out, nil
		}
	}
}

// unreadableReply is a reply the model wrote that cannot be read as what was
// asked (a number past float64 in a JSON Schema's reply, which the schema
// cannot bound; a call it was not offered). Unlike a model that cannot be
// reached, it counts: a plan against MaxPlans, its tokens against the
// budget; and the next prompt says what was wrong with it, so a model whose
// sampling is seeded does not write it again.
type unreadableReply struct{ err error }

func (e *unreadableReply) Error() string { return e.err.Error() }
func (e *unreadableReply) Unwrap() error { return e.err }

// callsText writes parsed calls as a chain in the command language.
func callsText(calls []llm.ToolCall, spec grammar.Spec) (string, error) {
	parts := make([]string, 0, len(calls))
	for _, c := range calls {
		i := slices.IndexFunc(spec.Tools, func(t grammar.ToolSpec) bool { return t.Name == c.Name })
		if i < 0 {
			return "", fmt.Errorf("the model called %s, which it was not offered", c.Name)
		}
		params, err := spec.Tools[i].ParseJSONArgs(c.Arguments)
		if err != nil {
			return "", fmt.Errorf("%s: %w", c.Name, err)
		}
		parts = append(parts, tools.CommandText(c.Name, params))
	}
	return strings.Join(parts, " -> "), nil
}

const planSystem = `You plan how a small board reaches a goal. Write only the plan: commands in the form @ns/tool{key=value;...}, chained with -> (each runs after the one before). ` +
	`Besides the board's tools: @goal/wait{seconds=N} waits; @goal/until{read="...";cond="above";value=N;seconds=N} reads until the number is as asked; ` +
	`@goal/ask{question="..."} asks the owner; @goal/sub{objective="..."} pursues a sub-goal. At most 8 steps.`

// planPrompt is what the planner is told: the tools it may use (a model
// without a constraint learns them only here), the objective, its check,
// what has happened, and why a new plan is wanted.
func planPrompt(g *Goal, pt PlanTools, why string) string {
	var b strings.Builder
	b.WriteString("Tools:\n")
	for _, t := range pt.Specs {
		fmt.Fprintf(&b, "- @%s{", t.Name)
		for i, p := range t.Params {
			if i > 0 {
				b.WriteByte(';')
			}
			kind := string(p.Type)
			if len(p.Enum) > 0 {
				kind = strings.Join(p.Enum, "|")
			}
			fmt.Fprintf(&b, "%s=%s", p.Name, kind)
		}
		fmt.Fprintf(&b, "} %s\n", oneLine(t.Doc, 100))
	}
	switch {
	case pt.subsBound && pt.subs == 0:
		fmt.Fprintf(&b, "No @goal/sub: %s.\n", pt.subsWhy)
	case pt.subsBound:
		fmt.Fprintf(&b, "At most %d @goal/sub at once.\n", pt.subs)
	}
	fmt.Fprintf(&b, "Goal: %s\n", g.Objective)
	switch {
	case g.Check != nil && g.Hold != nil:
		fmt.Fprintf(&b, "It must hold until the deadline: %s.\n", g.Check)
	case g.Check != nil:
		fmt.Fprintf(&b, "It is reached when %s.\n", g.Check)
	}
	if !g.Deadline.IsZero() {
		fmt.Fprintf(&b, "Deadline: %s.\n", g.Deadline.UTC().Format(time.RFC3339))
	}
	// What the check reads now: what the plans did so far is below, and a
	// plan written after a stall must answer both.
	if rd := g.Reading; rd != nil && g.Check != nil {
		if rd.Err != "" {
			fmt.Fprintf(&b, "The check's last read failed (%s): %s\n", rd.At.UTC().Format(time.RFC3339), oneLine(rd.Err, 120))
		} else {
			fmt.Fprintf(&b, "The check reads now: %s (%s, %s).\n", says(g.Check.Condition, rd.Value), rd.At.UTC().Format(time.RFC3339),
				map[bool]string{true: "it holds", false: "it does not hold"}[rd.Holds])
		}
	}
	if len(g.Steps) > 0 {
		b.WriteString("Done so far:\n")
		steps := g.Steps
		// A goal held through a night runs many plans: the newest steps
		// say what is being tried, and the prompt stays small.
		if n := len(steps); n > maxPromptSteps {
			fmt.Fprintf(&b, "- (%d earlier steps)\n", n-maxPromptSteps)
			steps = steps[n-maxPromptSteps:]
		}
		for _, s := range steps {
			fmt.Fprintf(&b, "- %s: %s", s.Command, s.State)
			if s.Result != "" {
				fmt.Fprintf(&b, " (%s)", oneLine(s.Result, 120))
			}
			b.WriteByte('\n')
		}
	}
	if n := len(g.Evaluations); n > 0 {
		e := g.Evaluations[n-1]
		fmt.Fprintf(&b, "Last evaluation: %.0f%% (%s)\n", e.Score*100, oneLine(e.Reason, 160))
	}
	if why != "" {
		fmt.Fprintf(&b, "Write a new plan: %s\n", why)
	} else {
		b.WriteString("Write the plan.\n")
	}
	return b.String()
}

// scoreSpec is the judgement's one call.
var scoreSpec = func() grammar.Spec {
	zero, ten := 0.0, 10.0
	return grammar.Spec{Form: grammar.FormCommand, Mode: grammar.ModeCalls, MaxCalls: 1, Tools: []grammar.ToolSpec{{
		Name: "goal/score", Doc: "How near the goal is: 0 not at all, 10 reached, and why.",
		Params: []grammar.ArgSpec{
			{Name: "score", Type: grammar.TypeInteger, Required: true, Min: &zero, Max: &ten},
			{Name: "reason", Type: grammar.TypeString, Required: true, MaxLen: 200},
		},
	}}}
}()

const judgeSystem = `You judge how near a goal is from what was done. Answer with one command: @goal/score{score=N;reason="..."}, N from 0 (not at all) to 10 (reached).`

// parseScore reads the judgement: one goal/score call.
func parseScore(text string) (float64, string, error) {
	cmd, err := grammar.Parse(strings.TrimSpace(text), grammar.ParseOptions{})
	if err != nil {
		return 0, "", fmt.Errorf("the judgement: %w", err)
	}
	if len(cmd.Stages) != 1 || len(cmd.Stages[0].Calls) != 1 || cmd.Stages[0].Calls[0].Tool() != "goal/score" {
		return 0, "", errors.New("the judgement is not one @goal/score{...} call")
	}
	a, err := scoreSpec.Tools[0].Validate(cmd.Stages[0].Calls[0].Params)
	if err != nil {
		return 0, "", fmt.Errorf("the judgement: %w", err)
	}
	return float64(a.Int("score")) / 10, a.String("reason"), nil
}

func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > max {
		return string(r[:max]) + "…"
	}
	return s
}
