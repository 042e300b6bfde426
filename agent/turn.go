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
	asked        error          // the session could not record an approval's progress: the turn fails
	lastErr      string
	repaired     bool
	invalid      int              // calls refused as invalid in this turn
	pendingSteps [][]byte         // model-step records not yet committed: the next durable transition writes them
	from         string           // the provider of the last reply, for escalations
	escalate     string           // why the router should go further up for the next step
	escalations  []llm.Escalation // sent with every later request of the turn
	answerOnly   bool             // past the tool-step limit: the next step may only answer
	madeCall     bool             // a call reached the call path (run, or refused there): agent.tool_choice required is met
	missed       string           // how a step that had to call first missed it
	toldRequired bool             // the model was told once that its step had to call
	held         string           // a required step's text, shown once one of its calls reaches the call path
	refusedWhy   string           // why the step's last call was refused before the call path (unknown, invalid)
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
	o := t.offer() // request.go
	// Built here, not in offer: a map that stays in this frame is not allocated on the
	// heap (BenchmarkTurn).
	byName := make(map[string]grammar.ToolSpec, len(o.specs))
	for _, sp := range o.specs {
		byName[sp.Name] = sp
	}
	for {
		if why, final, stop := t.overBudget(); stop {
			return why, final
		}
		if err := t.plan(); err != nil {
			return "store", Error
		}
		req := t.request(o) // request.go
		text, fin, err := t.call(ctx, req)
		if err != nil {
			return t.modelFailed(ctx, err)
		}
		t.count(req, text, fin) // model.go
		r := readReply(text, fin)
		if err := t.recordStep(req, req.Messages, r.raw, fin); err != nil {
			t.sayLine("Nothing was run: the audit trail could not record the model's answer (" + err.Error() + ").")
			return "store", Error
		}
		// A step that had to call shows its text only with a call that
		// reaches the call path (proposal.run): text without one is a server
		// that did not comply, never an answer.
		required := req.ToolChoice == llm.ToolChoiceRequired
		t.held = ""
		if !required {
			t.flushText(r.say)
		} else {
			t.shown, t.held = "", r.say
		}
		switch {
		case required && (r.err != nil || len(r.calls) == 0):
			if why, final, stop := t.requiredMissed(r, missedHow(r)); stop {
				return why, final
			}
		case r.err != nil:
			t.repair(r)
		case len(r.calls) > 0 && req.ToolChoice == llm.ToolChoiceNone && !t.answerOnly:
			// agent.tool_choice none: a provider that ignored it is not obeyed.
			t.notes = append(t.notes, "the model's tool calls were not run: agent.tool_choice is none")
			r.calls = nil
			return t.answered(r)
		case len(r.calls) == 0 || t.answerOnly:
			return t.answered(r)
		default:
			if why, final, stop := t.runCalls(ctx, r, byName, required); stop {
				return why, final
			}
			if required && !t.madeCall {
				// Every call was refused before the call path (a tool not
				// offered, invalid arguments): the errors went back to the
				// model as the calls' results, which is its repair attempt.
				if why, final, stop := t.requiredMissed(reply{}, t.refusedWhy); stop {
					return why, final
				}
			}
		}
	}
}

// overBudget checks the budgets before each model call (what has been spent is
// spent) and says whether the turn stops. Past the tool-step limit the model gets
// one more step, to answer only.
func (t *turn) overBudget() (string, State, bool) {
	a := t.a
	switch {
	case a.now().After(t.deadline):
		return "time", Timeout, true
	case t.tokens >= a.lim.MaxTokens:
		return "tokens", Halted, true
	case a.lim.MaxCost > 0 && t.cost >= a.lim.MaxCost:
		return "cost", Halted, true
	case t.toolSteps >= a.lim.MaxIterations && !t.answerOnly:
		t.answerOnly = true
		t.msgs = append(t.msgs, llm.Message{Role: llm.RoleUser,
			Content: fmt.Sprintf("(clawedge: the limit of %d tool steps for one message is reached. Do not call tools; answer now with what you have.)", a.lim.MaxIterations)})
	}
	return "", "", false
}

// plan starts a model step: the session says PLANNING, the turn record the step.
func (t *turn) plan() error {
	if s := t.rec(); s != nil && t.s.rec.State != Planning {
		if err := t.to(Planning, false); err != nil {
			return err
		}
	}
	t.steps++
	t.rec().Step = t.steps
	return nil
}

// modelFailed is how a turn ends when the model gave no reply.
func (t *turn) modelFailed(ctx context.Context, err error) (string, State) {
	if errors.Is(err, context.DeadlineExceeded) && t.a.now().After(t.deadline) {
		return "time", Timeout
	}
	if ctx.Err() != nil {
		return "cancelled", Halted
	}
	t.sayLine("I could not get an answer from the model: " + err.Error())
	return "model", Error
}

// repair gives the model one chance to rewrite calls that could not be read: it is
// told what was wrong. Unreadable again, the router should try a better model.
// The model reads its text back without its reasoning, as a thinking model's
// template shows earlier turns, and the history keeps none.
func (t *turn) repair(r reply) {
	t.tellRepair(r, "")
	if t.repaired {
		t.escalateNow("a tool call still unreadable after a repair attempt")
	}
	t.repaired = true
	t.toolSteps++
}

// tellRepair shows the model its unreadable reply and what was wrong with it.
// The model reads its text back without its reasoning, as a thinking model's
// template shows earlier turns.
func (t *turn) tellRepair(r reply, more string) {
	t.msgs = append(t.msgs, llm.Message{Role: llm.RoleAssistant, Content: grammar.StripThink(r.raw)},
		llm.Message{Role: llm.RoleUser, Content: "(clawedge: " + r.err.Error() + "." + more + ")"})
}

// requiredMissed handles a step that had to call (agent.tool_choice required)
// and made no call that reached the call path: a server that ignored the
// requirement (a constraint it did not apply, a tool_choice it does not
// enforce, a random model's output that the constraint did not hold). how says
// what the step did instead (missedHow, or why its calls were refused). The
// step's text is never shown as the answer, and the turn cannot pass to a step
// that may answer: the model is told once what was wrong (its repair attempt,
// still required, not counted as a tool step), and a second miss fails the
// turn, saying what happened.
func (t *turn) requiredMissed(r reply, how string) (string, State, bool) {
	if how == "" {
		how = "made no call that could run"
	}
	if !t.toldRequired {
		t.toldRequired, t.missed = true, how
		switch {
		case r.err != nil:
			t.tellRepair(r, " This step requires a tool call (agent.tool_choice: required).")
		case len(r.calls) == 0:
			t.msgs = append(t.msgs, llm.Message{Role: llm.RoleAssistant, Content: grammar.StripThink(r.raw)},
				llm.Message{Role: llm.RoleUser, Content: "(clawedge: this step requires a tool call (agent.tool_choice: required), and the reply had none. Answer with a call of one of the offered tools, not with text.)"})
		}
		// Calls refused before the call path: their errors are their results.
		return "", "", false
	}
	t.escalateNow("the model made no valid tool call where one was required")
	t.sayLine("Nothing was run: the model server ignored tool_choice required (the reply " + t.missed +
		"; told so, the repair attempt " + how + ").")
	return "model", Error, true
}

// missedHow says what a reply without a readable call was, for the error a
// turn that had to call ends with; never the model's text itself.
func missedHow(r reply) string {
	switch {
	case r.err != nil && r.cut:
		return "was cut at the reply's token bound before its tool call closed"
	case r.err != nil:
		return "held no tool call that could be read"
	case r.cut:
		return "was text, cut at the reply's token bound, not a tool call"
	case strings.TrimSpace(grammar.StripThink(r.raw)) == "":
		return "was empty"
	}
	return "was text, not a tool call"
}

// answered ends the turn on a reply without calls (or past the tool-step limit,
// whatever it holds): an answer, or a question for the person.
func (t *turn) answered(r reply) (string, State) {
	if t.answerOnly && len(r.calls) > 0 {
		return "iterations", Halted
	}
	if t.answerOnly {
		t.notes = append(t.notes, "no more tools were called: "+stopReason("iterations", t.a.lim))
	}
	if r.say == "" {
		t.sayLine("(The model gave no answer.)")
	}
	if strings.HasSuffix(strings.TrimSpace(r.say), "?") {
		return "question", WaitingInput
	}
	return "answered", Idle
}

// runCalls executes a step's calls in order, each checked, approved if need be, run,
// and its result noted for the model; it says whether the turn stops.
// Under required (a step that had to call), a step none of whose calls reached
// the call path is no tool step: the turn's requiredMissed bounds it.
func (t *turn) runCalls(ctx context.Context, r reply, byName map[string]grammar.ToolSpec, required bool) (string, State, bool) {
	t.refusedWhy = ""
	if err := t.to(Executing, false); err != nil {
		return "store", Error, true
	}
	calls := r.calls
	t.msgs = append(t.msgs, llm.Message{Role: llm.RoleAssistant, Content: r.say, ToolCalls: calls})
	stopRepeat := false
	for i, c := range calls {
		if c.ID == "" {
			calls[i].ID = fmt.Sprintf("call_%d_%d", t.steps, i+1)
			c.ID = calls[i].ID
		}
		result, st, err := t.execute(ctx, c, byName) // execute.go
		if t.escalate != "" {
			t.escalateNow(t.escalate)
			t.escalate = ""
		}
		if err != nil {
			return "store", Error, true
		}
		if st == "repeat" {
			stopRepeat = true
		}
		t.msgs = append(t.msgs, llm.Message{Role: llm.RoleTool, ToolCallID: c.ID, Name: c.Name, Content: result})
	}
	if !required || t.madeCall {
		t.toolSteps++
	}
	if err := t.to(Reflecting, false); err != nil {
		return "store", Error, true
	}
	if stopRepeat {
		return "repeat", Halted, true
	}
	return "", "", false
}

// caller is who the model acts for in this turn: the call path's caller for
// its calls, and what the tools it is offered are decided for.
func (t *turn) caller() tools.Caller {
	return tools.Caller{Channel: t.in.Channel, User: t.in.User, Actor: tools.Model, Creator: t.in.Creator}
}
