package agent

// This file: one turn in progress: its state transitions and the loop of model steps.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/llm"
	"github.com/clawedge/clawedge/store"
	"github.com/clawedge/clawedge/tools"
)

// turn is one turn in progress.
type turn struct {
	a        *Agent
	s        *session
	in       In
	runner   *tools.Runner
	start    time.Time
	deadline time.Time

	msgs  []llm.Message // this turn's messages, from the user's
	reply strings.Builder
	shown string // the current step's text already streamed
	calls []CallInfo
	notes []string // what happened to calls that needed a person, told at the end

	tokens       int
	cost         float64
	toolSteps    int
	steps        int
	seen         map[string]int // call key -> times proposed (run or refused)
	lastErr      string
	repaired     bool
	invalid      int              // calls refused as invalid in this turn
	pendingSteps [][]byte         // model-step records not yet committed: the next durable transition writes them
	from         string           // the provider of the last reply, for escalations
	escalate     string           // why the router should go further up for the next step
	escalations  []llm.Escalation // sent with every later request of the turn
}

// escalateNow asks the router to pass over the provider of the last reply for the
// rest of the turn (other providers ignore it).
func (t *turn) escalateNow(why string) {
	t.escalations = append(t.escalations, llm.Escalation{From: t.from, Reason: why})
}

// to moves the session to state. A durable transition is committed before to
// returns, with whatever changed since the last one; the others are committed with the
// next durable one. The durable ones are those a restart must find: a turn started,
// a call about to run (before its audit intent) and its result, an approval asked, a
// turn ended. The ones between them (EXECUTING, REFLECTING, PLANNING again) precede
// no effect, so losing them in a crash changes nothing that recovery reports, and
// skipping their fsyncs halves a turn's writes. A failure to persist stops the turn
// before any further effect.
func (t *turn) to(state State, durable bool) error {
	from := t.s.rec.State
	if from != state && !CanTransition(from, state) {
		return &transitionError{from, state}
	}
	t.s.rec.State = state
	t.s.publish()
	if !durable {
		return nil
	}
	if err := t.a.saveSteps(t.s, false, t.pendingSteps); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	t.pendingSteps = nil
	return nil
}

func (t *turn) rec() *turnRecord { return t.s.rec.Turn }

func (t *turn) run(ctx context.Context) (Out, error) {
	s := t.s
	// A notice left by a restart, told before anything else. A turn interrupted before
	// any call started whose message comes again (Telegram redelivers the message it
	// had not finished) simply runs again: that is the resumption.
	if s.rec.Notice != "" {
		resumed := s.rec.Turn != nil && s.rec.Turn.Text == store.CapString(t.in.Text, maxTextField) && !startedAny(s.rec.Turn)
		if !resumed {
			t.sayLine(s.rec.Notice + "\n")
		}
		s.rec.Notice = ""
	}
	s.rec.Turns++
	s.rec.Turn = &turnRecord{N: s.rec.Turns, Text: store.CapString(t.in.Text, maxTextField), Started: t.start.UTC()}
	t.msgs = []llm.Message{{Role: llm.RoleUser, Content: t.in.Text}}
	if err := t.to(Planning, true); err != nil {
		s.rec.Turns--
		return Out{}, fmt.Errorf("agent: %w", err)
	}
	stop, final := t.loop(ctx)
	return t.finish(stop, final), nil
}

func startedAny(r *turnRecord) bool {
	for _, c := range r.Calls {
		switch c.Status {
		case callStarted, callOK, callFailed:
			return true
		}
	}
	return false
}

// loop runs model steps until an answer or a stop. It returns why it stopped and the
// state the turn ends in.
func (t *turn) loop(ctx context.Context) (string, State) {
	a := t.a
	caps := a.opt.Provider.Caps()
	local := caps.Local || a.opt.Compact
	window := caps.Context
	if a.opt.Window > 0 {
		window = a.opt.Window
	}
	if window <= 0 {
		window = 8192
	}
	all := t.runner.Registry.Specs()
	allowed := func(name string) bool { return a.opt.Policy.AllowedFor(t.in.Channel, t.in.User, name) }
	maxTools := 0
	if local {
		maxTools = a.lim.LocalTools
	}
	offered := selectTools(all, allowed, t.recentText(), maxTools)
	defs := a.toolDefs(offered, local)
	if !local && !caps.Grammar {
		defs = ownSchemas(defs, offered) // ownschema.go
	}
	byName := map[string]tools.Spec{}
	for _, sp := range offered {
		byName[sp.Name] = sp
	}
	lastCall := false // the step after the tool-iteration limit: answer only

	for {
		// Budgets, checked before each model call: what has been spent is spent.
		switch {
		case a.now().After(t.deadline):
			return "time", Timeout
		case t.tokens >= a.lim.MaxTokens:
			return "tokens", Halted
		case a.lim.MaxCost > 0 && t.cost >= a.lim.MaxCost:
			return "cost", Halted
		case t.toolSteps >= a.lim.MaxIterations && !lastCall:
			lastCall = true
			t.msgs = append(t.msgs, llm.Message{Role: llm.RoleUser,
				Content: fmt.Sprintf("(clawedge: the limit of %d tool steps for one message is reached. Do not call tools; answer now with what you have.)", a.lim.MaxIterations)})
		}
		if s := t.rec(); s != nil && t.s.rec.State != Planning {
			if err := t.to(Planning, false); err != nil {
				return "store", Error
			}
		}
		t.steps++
		t.rec().Step = t.steps

		// The prompt: system, history, this turn; fitted to the window.
		hist := t.s.h.Messages
		msgs := make([]llm.Message, 0, 1+len(hist)+len(t.msgs))
		msgs = append(msgs, llm.Message{Role: llm.RoleSystem, Content: systemPrompt(a.opt.System, t.s.h.Summary)})
		msgs = append(msgs, hist...)
		msgs = append(msgs, t.msgs...)
		reply := a.lim.ReplyTokens
		fitted, folded := fit(msgs, defs, 1+len(hist), window-reply)
		if len(folded) > 0 {
			t.s.h.Summary = summarize(t.s.h.Summary, folded, min(1500, window))
			t.s.h.Messages = t.s.h.Messages[len(folded):]
			fitted[0].Content = systemPrompt(a.opt.System, t.s.h.Summary)
		}
		if left := a.lim.MaxTokens - t.tokens - EstimateTokens(fitted, defs); left < reply {
			// The budget bounds the reply too: stop mid-stream rather than overspend.
			reply = max(left, 16)
		}
		req := llm.Request{Messages: fitted, Tools: defs, MaxTokens: reply, NoThink: true, Escalations: t.escalations, ToolChoice: t.toolChoice(lastCall)}
		if caps.Grammar && len(offered) > 0 {
			mode := grammar.ModeAny
			switch req.ToolChoice {
			case llm.ToolChoiceRequired:
				mode = grammar.ModeCalls
			case llm.ToolChoiceNone:
				mode = grammar.ModeText
			}
			req.Constraint = &grammar.Spec{Form: grammar.FormQwen, Mode: mode, Tools: offered, MaxCalls: a.lim.CallsPerOutput}
		}

		text, fin, err := t.call(ctx, req)
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) && a.now().After(t.deadline) {
				return "time", Timeout
			}
			if ctx.Err() != nil {
				return "cancelled", Halted
			}
			t.sayLine("I could not get an answer from the model: " + err.Error())
			return "model", Error
		}
		if fin != nil {
			// A provider that reports no usage is counted by estimate, so that the
			// token budget still holds.
			in, out := fin.Usage.PromptTokens, fin.Usage.CompletionTokens
			if in == 0 {
				in = EstimateTokens(fitted, defs)
			}
			if out == 0 {
				out = (len(text) + 2) / 3
			}
			t.tokens += in + out
			t.cost += fin.Cost
			t.from = fin.Provider
		}

		// The model's calls, parsed by the provider whatever the model's syntax: the
		// text is what the person may see, the raw output what the audit keeps.
		say, raw, calls := strings.TrimSpace(text), text, []llm.ToolCall(nil)
		var perr error
		if fin != nil {
			calls = fin.ToolCalls
			if fin.Raw != "" {
				raw = fin.Raw
			}
			if fin.CallsErr != nil {
				perr = fin.CallsErr
			}
		}
		if err := t.recordStep(req, fitted, raw, fin); err != nil {
			t.sayLine("Nothing was run: the audit trail could not record the model's answer (" + err.Error() + ").")
			return "store", Error
		}
		t.flushText(say)

		if perr != nil {
			// One repair attempt: tell the model what was wrong.
			t.msgs = append(t.msgs, llm.Message{Role: llm.RoleAssistant, Content: raw},
				llm.Message{Role: llm.RoleUser, Content: "(clawedge: " + perr.Error() + ".)"})
			if t.repaired {
				t.escalateNow("a tool call still unreadable after a repair attempt")
			}
			t.repaired = true
			t.toolSteps++
			continue
		}
		if len(calls) > 0 && req.ToolChoice == llm.ToolChoiceNone && !lastCall {
			// agent.tool_choice none: a provider that ignored it is not obeyed.
			t.notes = append(t.notes, "the model's tool calls were not run: agent.tool_choice is none")
			calls = nil
		}
		if len(calls) == 0 || lastCall {
			if lastCall && len(calls) > 0 {
				return "iterations", Halted
			}
			if lastCall {
				t.notes = append(t.notes, "no more tools were called: "+stopReason("iterations", a.lim))
			}
			if say == "" {
				t.sayLine("(The model gave no answer.)")
			}
			if strings.HasSuffix(strings.TrimSpace(say), "?") {
				return "question", WaitingInput
			}
			return "answered", Idle
		}

		// Execute: each call checked, approved if need be, run, and its result noted.
		t.toolSteps++
		if err := t.to(Executing, false); err != nil {
			return "store", Error
		}
		asst := llm.Message{Role: llm.RoleAssistant, Content: say, ToolCalls: calls}
		t.msgs = append(t.msgs, asst)
		stopRepeat := false
		for i, c := range calls {
			if c.ID == "" {
				calls[i].ID = fmt.Sprintf("call_%d_%d", t.steps, i+1)
				c.ID = calls[i].ID
			}
			result, st, err := t.execute(ctx, c, byName)
			if t.escalate != "" {
				t.escalateNow(t.escalate)
				t.escalate = ""
			}
			if err != nil {
				return "store", Error
			}
			if st == "repeat" {
				stopRepeat = true
			}
			t.msgs = append(t.msgs, llm.Message{Role: llm.RoleTool, ToolCallID: c.ID, Name: c.Name, Content: result})
		}
		if err := t.to(Reflecting, false); err != nil {
			return "store", Error
		}
		if stopRepeat {
			return "repeat", Halted
		}
	}
}

// toolChoice is the step's: agent.tool_choice "required" holds the turn's
// first step to a call (later steps decide, so that the turn can answer),
// "none" every step; past the tool-step limit the answer cannot call,
// whatever the model wants.
func (t *turn) toolChoice(lastCall bool) llm.ToolChoice {
	switch c := t.a.lim.ToolChoice; {
	case lastCall || c == llm.ToolChoiceNone:
		return llm.ToolChoiceNone
	case c == llm.ToolChoiceRequired && t.toolSteps == 0:
		return llm.ToolChoiceRequired
	}
	return llm.ToolChoiceAuto
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
		t.stream(b.String())
		if c.Final != nil {
			t.a.totals.add(t.a.opt.Provider.Name(), c.Final, time.Since(begin))
			return b.String(), c.Final, nil
		}
	}
}
