package agent

// This file: one model call of a turn: streamed under the turn's deadline, counted
// against the budgets, and its reply read (the calls the provider parsed).

import (
	"context"
	"strings"
	"time"

	"github.com/clawedge/clawedge/llm"
)

// call runs one model call under the turn's deadline and streams the text that is
// certainly not a tool call.
func (t *turn) call(ctx context.Context, req llm.Request) (string, *llm.Final, error) {
	cctx, cancel := context.WithDeadline(ctx, t.deadline)
	defer cancel()
	begin := time.Now()
	st, err := t.a.opt.Provider.Chat(cctx, req)
	if err != nil {
		t.a.totals.fail(t.a.opt.Provider.Name())
		return "", nil, err
	}
	defer st.Close()
	var b strings.Builder
	for {
		c, err := st.Next()
		if err != nil {
			t.a.totals.fail(t.a.opt.Provider.Name())
			return b.String(), nil, err
		}
		b.WriteString(c.Text)
		if req.ToolChoice != llm.ToolChoiceRequired {
			// A step that must call is not streamed: text without a call
			// there is a server ignoring the requirement, never an answer.
			t.stream(b.String())
		}
		if c.Final != nil {
			t.a.totals.add(t.a.opt.Provider.Name(), c.Final, time.Since(begin))
			return b.String(), c.Final, nil
		}
	}
}

// count adds a step's tokens and cost to the turn's. A provider that reports no usage
// is counted by estimate, so that the token budget still holds.
func (t *turn) count(req llm.Request, text string, fin *llm.Final) {
	if fin == nil {
		return
	}
	in, out := fin.Usage.PromptTokens, fin.Usage.CompletionTokens
	if in == 0 {
		in = EstimateTokens(req.Messages, req.Tools)
	}
	if out == 0 {
		out = (len(text) + 2) / 3
	}
	t.tokens += in + out
	t.cost += fin.Cost
	t.from = fin.Provider
}

// reply is a model step's output as the turn uses it.
type reply struct {
	say   string         // the text the person may see
	raw   string         // the raw output, as the audit keeps it
	calls []llm.ToolCall // the calls, parsed by the provider whatever the model's syntax
	err   error          // why calls the model wrote could not be read
	cut   bool           // the reply stopped at its token bound
}

// readReply takes the calls the provider parsed from a step's output.
func readReply(text string, fin *llm.Final) reply {
	r := reply{say: strings.TrimSpace(text), raw: text}
	if fin != nil {
		r.calls = fin.ToolCalls
		r.cut = fin.Reason == llm.ReasonLength
		if fin.Raw != "" {
			r.raw = fin.Raw
		}
		if fin.CallsErr != nil { // a nil *CallsError is no error
			r.err = fin.CallsErr
		}
	}
	return r
}
