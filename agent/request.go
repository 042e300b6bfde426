package agent

// This file: what each model step of a turn asks: the tools offered (chosen once per
// turn), the prompt fitted to the window, the reply's budget, the constraint.

import (
	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/llm"
	"github.com/clawedge/clawedge/tools"
)

// offering is what a turn offers the model, the same at every step.
type offering struct {
	caps   llm.Caps
	window int                // the context window the prompt is fitted to
	specs  []grammar.ToolSpec // the tools offered
	defs   []llm.ToolDef      // and their definitions for the model
	prefix string             // the persona and user files (memory.go)
	recall string             // the entries recalled for this message
}

// offer chooses the tools of the turn: those the policy allows this caller, at most
// Limits.LocalTools for a local model (the ones the message's words point at first).
func (t *turn) offer() offering {
	a := t.a
	o := offering{caps: a.opt.Provider.Caps()}
	local := o.caps.Local || a.opt.Compact
	o.window = o.caps.Context
	if a.opt.Window > 0 {
		o.window = a.opt.Window
	}
	if o.window <= 0 {
		o.window = 8192
	}
	caller := t.caller()
	allowed := func(name string) bool {
		// A tool that changes who may act on the board is never a model's
		// to call (the authorizer refuses it whatever the rules say), so
		// it is not offered: its definition would only spend the window.
		if tl, err := t.runner.Registry.Lookup(name); err == nil {
			if _, boardOnly := tl.(tools.BoardOnly); boardOnly {
				return false
			}
		}
		return a.opt.Policy.Offered(caller, name)
	}
	maxTools := 0
	if local {
		maxTools = a.lim.LocalTools
	}
	o.specs = selectTools(t.runner.Registry.Specs(), allowed, t.recentText(), maxTools)
	o.defs = a.toolDefs(o.specs, local)
	if !local && !o.caps.Grammar {
		o.defs = ownSchemas(o.defs, o.specs) // ownschema.go
	}
	if a.opt.Memory != nil {
		o.prefix = a.opt.Memory.Prefix(local)
		o.recall = t.recall(local)
	}
	return o
}

// recentText is what tool selection reads: this message and the previous user message.
func (t *turn) recentText() string {
	text := t.in.Text
	for i := len(t.s.h.Messages) - 1; i >= 0; i-- {
		if t.s.h.Messages[i].Role == llm.RoleUser {
			return text + " " + t.s.h.Messages[i].Content
		}
	}
	return text
}

// request is the next step's request: system, history and this turn fitted to the
// window (the oldest history folded into the summary when it does not fit), the
// reply bounded by what is left of the token budget, and the constraint when the
// provider can enforce one.
func (t *turn) request(o offering) llm.Request {
	a := t.a
	hist := t.s.h.Messages
	msgs := make([]llm.Message, 0, 1+len(hist)+len(t.msgs))
	// The layout (docs/prompt-layout.md): what every message of every session shares
	// first (the system prompt, and the tools the template puts with it), then this
	// session's earlier turns, then this message: what the runner's KV cache and its
	// saved state keep from one message to the next, and after a restart, is the
	// prompt's start.
	msgs = append(msgs, llm.Message{Role: llm.RoleSystem, Content: systemPrompt(o.prefix, a.opt.System)})
	msgs = append(msgs, hist...)
	msgs = append(msgs, withRecall(t.msgs[0], o.recall))
	msgs = append(msgs, t.msgs[1:]...)
	reply := a.lim.ReplyTokens
	fitted, folded := fit(msgs, o.defs, 1+len(hist), o.window-reply-summaryTokens(t.s.h.Summary))
	if len(folded) > 0 {
		t.s.h.Summary = summarize(t.s.h.Summary, folded, min(1500, o.window))
		t.s.h.Messages = t.s.h.Messages[len(folded):]
		t.remember(folded) // memory.go
	}
	fitted = withSummary(fitted, t.s.h.Summary)
	if left := a.lim.MaxTokens - t.tokens - EstimateTokens(fitted, o.defs); left < reply {
		// The budget bounds the reply too: stop mid-stream rather than overspend.
		reply = max(left, 16)
	}
	req := llm.Request{Messages: fitted, Tools: o.defs, MaxTokens: reply, NoThink: !a.opt.Think, Escalations: t.escalations, ToolChoice: t.toolChoice()}
	if o.caps.Grammar && len(o.specs) > 0 {
		mode := grammar.ModeAny
		switch req.ToolChoice {
		case llm.ToolChoiceRequired:
			mode = grammar.ModeCalls
		case llm.ToolChoiceNone:
			mode = grammar.ModeText
		}
		req.Constraint = &grammar.Spec{Form: llm.TextForm, Mode: mode, Tools: o.specs, MaxCalls: a.lim.CallsPerOutput}
	}
	return req
}

// toolChoice is the step's: agent.tool_choice "required" holds the turn's
// steps to a call until one is made (an unreadable call repaired, or text told
// to call, stays required; later steps decide, so that the turn can answer),
// "none" every step; past the tool-step limit the answer cannot call,
// whatever the model wants.
func (t *turn) toolChoice() llm.ToolChoice {
	switch c := t.a.lim.ToolChoice; {
	case t.answerOnly || c == llm.ToolChoiceNone:
		return llm.ToolChoiceNone
	case c == llm.ToolChoiceRequired && !t.madeCall:
		return llm.ToolChoiceRequired
	}
	return llm.ToolChoiceAuto
}
