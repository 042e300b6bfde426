// Package agent is the loop between a person's free text and the board: per chat, a
// session whose state machine (state.go) is persisted in the store (every transition,
// those that precede an effect or end a turn committed at once, see turn.to); per turn, a
// compact prompt (context.go), a model call, the calls it proposes validated, checked
// against the policy (policy.go), approved by a person when the policy asks
// (approvals.go), run through the audited tools runner, and fed back, until the model
// answers or a limit stops the turn — and whatever stops it, the person gets an answer
// saying what was done and why it stopped.
//
// Audit before effects: each model step's input (a digest, its size and the messages
// new to that step) and raw output are committed to the store before any of that
// step's calls run, and each call's intent is committed (by tools.Runner) before its
// effect, its outcome after. After a crash, a session found mid-turn is never resumed
// past a started call: the person is told what had started, and nothing runs twice.
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/llm"
	"github.com/clawedge/clawedge/llm/router"
	"github.com/clawedge/clawedge/store"
	"github.com/clawedge/clawedge/tools"
)

// Limits bound one turn. Zero fields take the defaults (DefaultLimits).
type Limits struct {
	// MaxIterations is how many model steps of a turn may call tools.
	MaxIterations int
	// MaxTokens bounds the tokens of a turn, prompts and replies of every step summed.
	MaxTokens int
	// MaxTime bounds a turn's wall time, approvals included.
	MaxTime time.Duration
	// MaxCost bounds a turn's cost in the providers' currency units; 0: no bound.
	MaxCost float64
	// MaxRepeats is how many times one identical call (same tool, same arguments)
	// may run in a turn; the next one stops the turn.
	MaxRepeats int
	// ToolOutput caps a tool result fed back to the model, in bytes, by tool name or
	// pattern ("serial/read", "serial/*", "*").
	ToolOutput map[string]int
	// ReplyTokens bounds one model reply.
	ReplyTokens int
	// LocalTools is how many tools a local model is offered at most.
	LocalTools int
	// CallsPerOutput is how many tool calls one model output may hold (the
	// constraint's bound); 0 means grammar.DefaultMaxCalls.
	CallsPerOutput int
	// History is how many messages a session keeps before folding the oldest turns
	// into its summary.
	History int
	// ApprovalTimeout is how long an `ask` call waits for a person; then it is denied.
	ApprovalTimeout time.Duration
}

// DefaultLimits are the limits of a turn when the config sets none.
var DefaultLimits = Limits{
	MaxIterations:   10,
	MaxTokens:       48000,
	MaxTime:         3 * time.Minute,
	MaxRepeats:      2,
	ToolOutput:      map[string]int{"*": 1500},
	ReplyTokens:     512,
	LocalTools:      10,
	History:         24,
	ApprovalTimeout: 2 * time.Minute,
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	if l.MaxIterations > 0 {
		d.MaxIterations = l.MaxIterations
	}
	if l.MaxTokens > 0 {
		d.MaxTokens = l.MaxTokens
	}
	if l.MaxTime > 0 {
		d.MaxTime = l.MaxTime
	}
	if l.MaxCost > 0 {
		d.MaxCost = l.MaxCost
	}
	if l.MaxRepeats > 0 {
		d.MaxRepeats = l.MaxRepeats
	}
	if len(l.ToolOutput) > 0 {
		d.ToolOutput = l.ToolOutput
	}
	if l.ReplyTokens > 0 {
		d.ReplyTokens = l.ReplyTokens
	}
	if l.CallsPerOutput > 0 {
		d.CallsPerOutput = l.CallsPerOutput
	}
	if l.LocalTools > 0 {
		d.LocalTools = l.LocalTools
	}
	if l.History > 0 {
		d.History = l.History
	}
	if l.ApprovalTimeout > 0 {
		d.ApprovalTimeout = l.ApprovalTimeout
	}
	return d
}

func (l Limits) toolOutput(tool string) int {
	if n, ok := match(l.ToolOutput, tool); ok && n > 0 {
		return n
	}
	return 1500
}

// Options build an Agent.
type Options struct {
	// Provider is the model: the router, or any one provider.
	Provider llm.Provider
	// Runner runs the calls (with its registry and its auditor); In.Runner overrides
	// it per message (Telegram ties each call to its inbox item).
	Runner *tools.Runner
	// Store keeps sessions and model steps; nil keeps sessions in memory only.
	Store  *store.Store
	Policy *Policy
	// Approvals is where `ask` calls wait; nil makes a private set.
	Approvals *Approvals
	// Askers ask on channels with their own way to ask (Telegram buttons), by channel
	// name or family.
	Askers map[string]Asker
	Limits Limits
	// System is added to the built-in system prompt.
	System string
	Log    *slog.Logger
	// Compact builds the local tier's prompt (at most Limits.LocalTools tools, short
	// documentation) even when the provider is not local itself: a router that tries
	// the local model first. Window, when set, is the context window the prompt is
	// fitted to (the local model's, under such a router). Without them the provider's
	// Caps decide.
	Compact bool
	Window  int
	// Redelivers names the channels with a durable inbox of their own (telegram): a
	// message they had not finished comes again after a restart, and one whose calls
	// had started is reported by the channel itself. Their sessions get no notice of
	// their own, so the person is not told twice.
	Redelivers []string
}

// Agent answers free text. It is safe for concurrent use; turns of one session run one
// at a time, turns of different sessions in parallel.
type Agent struct {
	opt    Options
	lim    Limits
	log    *slog.Logger
	appr   *Approvals
	now    func() time.Time
	mu     sync.Mutex
	byKey  map[string]*session
	totals *Totals
	// hook, in tests, runs at named points of a turn ("before-intent").
	hook func(point string)

	defsMu sync.Mutex
	defs   map[string]llm.ToolDef // by compact flag and spec, see toolDefs
}

// toolDefs converts specs for the model, once per spec: specs do not change after
// registration (a spec's JSON is the key, so one that did would be converted again).
func (a *Agent) toolDefs(specs []tools.Spec, compact bool) []llm.ToolDef {
	out := make([]llm.ToolDef, len(specs))
	a.defsMu.Lock()
	defer a.defsMu.Unlock()
	if a.defs == nil {
		a.defs = map[string]llm.ToolDef{}
	}
	for i, s := range specs {
		k := fmt.Sprintf("%t\x00%s\x00%d\x00%s", compact, s.Name, len(s.Params), s.Doc)
		d, ok := a.defs[k]
		if !ok {
			d = ToolDefs([]tools.Spec{s}, compact)[0]
			a.defs[k] = d
		}
		out[i] = d
	}
	return out
}

// New makes an agent. It does not touch the store; call Recover once at start.
func New(opt Options) (*Agent, error) {
	if opt.Provider == nil || opt.Runner == nil || opt.Runner.Registry == nil {
		return nil, errors.New("agent: a Provider and a Runner with a Registry are required")
	}
	a := &Agent{opt: opt, lim: opt.Limits.withDefaults(), log: opt.Log, appr: opt.Approvals,
		now: time.Now, byKey: map[string]*session{}, totals: newTotals()}
	if a.log == nil {
		a.log = slog.Default()
	}
	if a.appr == nil {
		a.appr = NewApprovals()
	}
	return a, nil
}

// Approvals is where this agent's calls wait for a person.
func (a *Agent) Approvals() *Approvals { return a.appr }

// In is one message for the agent.
type In struct {
	Channel, User, Text string
	// Runner, when set, runs this message's calls instead of Options.Runner.
	Runner *tools.Runner
	// Emit, when set, receives the answer as it is produced. Everything the answer
	// contains passes through it, so a channel that streams shows all of it.
	Emit func(string)
}

// Out is how a turn ended.
type Out struct {
	Text  string
	State State  // the state the turn ended in
	Stop  string // why: "answered", "question", "iterations", "tokens", "time", "cost", "repeat", "model", "store"
	Calls []CallInfo
}

// CallInfo is one call of a turn.
type CallInfo struct {
	Call   string // command-language form
	Status string // ok, failed, refused, denied, expired, started
	Result string // one line
}

// session returns the session for key, loading it from the store the first time.
//
// The caller must call release when done with it: a session in use is never evicted.
func (a *Agent) session(key string) (*session, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if s, ok := a.byKey[key]; ok {
		s.users++
		return s, nil
	}
	a.evict()
	s := &session{key: key}
	if a.opt.Store != nil {
		st, h, found, err := a.opt.Store.LoadSession(key)
		if err != nil {
			return nil, err
		}
		if found {
			if s, err = decodeSession(key, st, h); err != nil {
				return nil, err
			}
		}
	}
	if s.rec.State == "" {
		s.rec.State = Idle
	}
	s.users++
	a.byKey[key] = s
	return s, nil
}

func (a *Agent) release(s *session) {
	a.mu.Lock()
	s.users--
	a.mu.Unlock()
}

// MaxLiveSessions bounds the sessions kept in memory; beyond it, those not in use are
// dropped (they are in the store, and are loaded again on their next message).
var MaxLiveSessions = 256

// evict drops sessions not in use when there are too many. Called with a.mu held.
func (a *Agent) evict() {
	if a.opt.Store == nil || len(a.byKey) < MaxLiveSessions {
		return
	}
	for k, s := range a.byKey {
		if s.users == 0 {
			delete(a.byKey, k)
		}
	}
}

// save persists the session's state record (and its history when withHistory).
func (a *Agent) save(s *session, withHistory bool) error {
	return a.saveSteps(s, withHistory, nil)
}

// saveSteps is save with model-step records committed in the same transaction.
func (a *Agent) saveSteps(s *session, withHistory bool, steps [][]byte) error {
	s.rec.Updated = a.now().UTC()
	if a.opt.Store == nil {
		return nil
	}
	st, err := s.encode()
	if err != nil {
		return err
	}
	var h []byte
	if withHistory {
		if h, err = s.encodeHistory(); err != nil {
			return err
		}
	}
	_, err = a.opt.Store.SaveSessionSteps(s.key, st, h, steps)
	return err
}

// Turn answers one message. The error is non-nil only when the message could not be
// taken at all (the store failed before anything happened); every other failure is
// reported in Out.Text.
func (a *Agent) Turn(ctx context.Context, in In) (Out, error) {
	s, err := a.session(Key(in.Channel, in.User))
	if err != nil {
		return Out{}, fmt.Errorf("agent: %w", err)
	}
	defer a.release(s)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rec.Channel == "" {
		s.rec.Channel, s.rec.User = in.Channel, in.User
	}
	t := &turn{a: a, s: s, in: in, start: a.now(), seen: map[string]int{}}
	t.deadline = t.start.Add(a.lim.MaxTime)
	t.runner = a.opt.Runner
	if in.Runner != nil {
		t.runner = in.Runner
	}
	return t.run(ctx)
}

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
	invalid      int      // calls refused as invalid in this turn
	pendingSteps [][]byte // model-step records not yet committed: the next durable transition writes them
	from         string   // the provider of the last reply, for escalations
	escalate     string   // why the router should go further up for the next step
}

// say adds text to the answer and passes it on to a streaming channel.
func (t *turn) say(s string) {
	if s == "" {
		return
	}
	t.reply.WriteString(s)
	if t.in.Emit != nil {
		t.in.Emit(s)
	}
}

// sayLine starts s on a line of its own.
func (t *turn) sayLine(s string) {
	t.sep()
	t.say(s)
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
		req := llm.Request{Messages: fitted, Tools: defs, MaxTokens: reply, NoThink: true}
		if caps.Grammar && len(offered) > 0 {
			mode := grammar.ModeAny
			if lastCall { // past the tool-step limit the answer cannot call, whatever the model wants
				mode = grammar.ModeText
			}
			req.Constraint = &grammar.Spec{Form: grammar.FormQwen, Mode: mode, Tools: tools.GrammarSpecs(offered), MaxCalls: a.lim.CallsPerOutput}
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
				ctx = router.Escalate(ctx, t.from, "a tool call still unreadable after a repair attempt")
			}
			t.repaired = true
			t.toolSteps++
			continue
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
				ctx = router.Escalate(ctx, t.from, t.escalate)
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

// stream passes on the model's text as it comes: the provider sends only text that
// is certainly not a tool call. What is shown is also in the answer.
func (t *turn) stream(all string) {
	if t.in.Emit == nil {
		return
	}
	vis := strings.TrimSpace(all)
	if len(vis) > len(t.shown) && strings.HasPrefix(vis, t.shown) {
		if t.shown == "" {
			t.sep()
		}
		t.say(vis[len(t.shown):])
		t.shown = vis
	}
}

// sep starts a new line in the answer if it has text that does not end one.
func (t *turn) sep() {
	if r := t.reply.String(); r != "" && !strings.HasSuffix(r, "\n") {
		t.say("\n")
	}
}

// flushText completes the answer with a step's text; the part already streamed is
// not repeated.
func (t *turn) flushText(say string) {
	shown := t.shown
	t.shown = ""
	if say == "" {
		return
	}
	if shown != "" && strings.HasPrefix(say, shown) {
		t.say(say[len(shown):])
		return
	}
	t.sep()
	t.say(say)
}

// execute handles one proposed call and returns the result fed back to the model.
// status "repeat" asks the loop to stop after this step.
func (t *turn) execute(ctx context.Context, c llm.ToolCall, byName map[string]tools.Spec) (string, string, error) {
	a := t.a
	cr := callRecord{Call: store.CapString(c.Name+" "+string(c.Arguments), 512)}
	add := func(status, result string) {
		cr.Status, cr.Result = status, oneLine(result, 200)
		t.calls = append(t.calls, CallInfo{Call: cr.Call, Status: status, Result: cr.Result})
	}
	// refuse records a call that is not run; stop says the turn ends after this step.
	refuse := func(msg string, stop bool) (string, string, error) {
		add(callRefused, msg)
		t.rec().Calls = append(t.rec().Calls, cr)
		if stop {
			return msg, "repeat", nil
		}
		return msg, "", nil
	}
	spec, ok := byName[c.Name]
	if !ok {
		if msg, stop := t.repeated(cr.Call, c.Name); stop {
			return refuse(msg, true)
		}
		msg := fmt.Sprintf("error: there is no tool %q here; the tools are: %s", c.Name, names(byName))
		if _, err := t.runner.Registry.Lookup(c.Name); err == nil {
			if act, why := a.opt.Policy.Check(t.in.Channel, t.in.User, c.Name); act == Deny {
				msg = fmt.Sprintf("error: %s is not allowed on this channel (%s); it was not run", c.Name, why)
				shown := cr.Call
				if params, err := grammar.ParamsFromJSON(c.Arguments); err == nil {
					_, shown = invocation(c.Name, params)
				}
				t.note(fmt.Sprintf("%s was refused: the policy does not allow it on this channel (%s), so it was not run.", oneLine(shown, 160), why))
			}
		}
		return refuse(msg, false)
	}
	rawArgs := c.Arguments
	if len(strings.TrimSpace(string(rawArgs))) == 0 || strings.TrimSpace(string(rawArgs)) == "null" {
		rawArgs = json.RawMessage("{}")
	}
	params, err := grammar.ParamsFromJSON(spec.AsJSONParam(rawArgs))
	if err == nil {
		_, err = spec.Validate(params)
	} else {
		err = &tools.ArgError{Tool: spec.Name, Msg: err.Error()}
	}
	inv, command := invocation(spec.Name, params)
	if err == nil {
		cr.Call = store.CapString(command, 512)
	}
	if err != nil {
		if msg, stop := t.repeated(cr.Call, spec.Name); stop {
			return refuse(msg, true)
		}
		msg := "error: " + err.Error() + " (not run; fix the arguments and call again)"
		refuse(msg, false)
		t.sameError(msg)
		// The error told the model how to repair the call; invalid again, the router
		// should try a better model.
		if t.invalid++; t.invalid >= 2 && t.escalate == "" {
			t.escalate = "a tool call still invalid after a repair attempt"
		}
		return msg, "", nil
	}

	// An identical call that already ran, or was refused, MaxRepeats times is not run again.
	if msg, stop := t.repeated(command, command); stop {
		return refuse(msg, true)
	}

	// The policy, and a person when it says ask.
	act, why := a.opt.Policy.Check(t.in.Channel, t.in.User, spec.Name)
	switch act {
	case Deny:
		msg := fmt.Sprintf("error: %s is denied by the policy on this channel (%s); it was not run", command, why)
		cr.Status = callDenied
		t.rec().Calls = append(t.rec().Calls, cr)
		if err := t.to(Denied, false); err != nil {
			return "", "", err
		}
		add(callDenied, msg)
		t.note(fmt.Sprintf("%s was refused: the policy does not allow it on this channel (%s), so it was not run.", command, why))
		return msg, "", t.to(Executing, false)
	case Ask:
		d, err := t.approve(ctx, command, &cr)
		if err != nil {
			return "", "", err
		}
		switch d {
		case Approved:
			t.notes = append(t.notes, command+" was approved.")
		case Rejected:
			msg := "error: the user denied " + command + "; it was not run. Do not try it again."
			add(callDenied, msg)
			t.note(command + " was denied, so it was not run.")
			return msg, "", t.to(Executing, false)
		default:
			msg := "error: nobody approved " + command + " in time; it was not run."
			add(callExpired, msg)
			t.note(fmt.Sprintf("%s was not approved within %s, so it was not run.", command, a.lim.ApprovalTimeout))
			return msg, "", t.to(Executing, false)
		}
	}

	// Run: the session says WAITING_TOOL with the call before the runner records the
	// intent; the runner commits the intent before the effect.
	cr.Status = callStarted
	cr.Approval = ""
	t.rec().Calls = append(t.rec().Calls, cr)
	idx := len(t.rec().Calls) - 1
	if err := t.to(WaitingTool, true); err != nil {
		return "", "", err
	}
	r := *t.runner
	var auditID uint64
	r.Audit = idAuditor{Auditor: t.runner.Audit, id: &auditID, hook: a.hook}
	cmd := &grammar.Command{Stages: []grammar.Stage{{Calls: []grammar.Invoke{inv}}}}
	tctx, cancel := context.WithDeadline(ctx, t.deadline)
	rep, rerr := r.Run(tctx, tools.Caller{Channel: t.in.Channel, User: t.in.User}, cmd)
	cancel()
	var res tools.Result
	if rep != nil && len(rep.Stages) > 0 && len(rep.Stages[0].Calls) > 0 {
		res = rep.Stages[0].Calls[0].Result
	}
	out := "ok: " + res.Text
	status := callOK
	if rerr != nil {
		out, status = "error: "+rerr.Error(), callFailed
		t.sameError(out)
	}
	out = store.CapString(out, a.lim.toolOutput(spec.Name))
	rc := &t.rec().Calls[idx]
	rc.Status, rc.Result, rc.Audit = status, oneLine(out, 200), auditID
	t.calls = append(t.calls, CallInfo{Call: command, Status: status, Result: rc.Result})
	return out, "", t.to(Executing, true)
}

// invocation is the call of tool with params, and its command-language form.
func invocation(tool string, params []grammar.Param) (grammar.Invoke, string) {
	inv := grammar.Invoke{Params: params}
	inv.Namespace, inv.Name, _ = strings.Cut(tool, "/")
	if !strings.Contains(tool, "/") {
		inv.Namespace, inv.Name = "", tool
	}
	return inv, (&grammar.Command{Stages: []grammar.Stage{{Calls: []grammar.Invoke{inv}}}}).String()
}

// repeated counts one more proposal of the call key (shown as shown), run or refused
// alike: a model that keeps proposing a call the policy refuses is stopped by
// max_repeats like one that keeps running it. Past the limit it returns the refusal
// and stop.
func (t *turn) repeated(key, shown string) (string, bool) {
	if n := t.seen[key]; n >= t.a.lim.MaxRepeats {
		return fmt.Sprintf("error: %s already ran or was refused %d times in this turn; it was not run again. Answer the user now.", shown, n), true
	}
	t.seen[key]++
	return "", false
}

// note adds a line told at the end of the answer, once however often it comes up.
func (t *turn) note(n string) {
	if !slices.Contains(t.notes, n) {
		t.notes = append(t.notes, n)
	}
}

// sameError asks the router to go further up when one error comes back twice in a row
// (a router.Escalate hint on the rest of the turn; other providers ignore it).
func (t *turn) sameError(msg string) {
	if msg == t.lastErr {
		t.escalate = "the same tool error repeated: " + oneLine(msg, 120)
	}
	t.lastErr = msg
}

// approve asks a person about command. The request is persisted (NEEDS_APPROVAL, with
// its id) before anyone can answer it.
func (t *turn) approve(ctx context.Context, command string, cr *callRecord) (Decision, error) {
	a := t.a
	now := a.now()
	deadline := now.Add(a.lim.ApprovalTimeout)
	if deadline.After(t.deadline) {
		deadline = t.deadline
	}
	p := &Pending{Session: printableKey(t.s.key), Channel: t.in.Channel, User: t.in.User, Call: command, Asked: now, Deadline: deadline}
	var asker Asker
	if as := a.opt.Askers; as != nil {
		if asker = as[t.in.Channel]; asker == nil {
			asker = as[family(t.in.Channel)]
		}
	}
	cr.Status = callAsking
	t.rec().Calls = append(t.rec().Calls, *cr)
	idx := len(t.rec().Calls) - 1
	record := func(p Pending) error {
		t.rec().Calls[idx].Approval = p.ID
		return t.to(NeedsApproval, true)
	}
	show := func(p Pending) {
		if t.in.Emit != nil {
			t.sayLine(fmt.Sprintf("Approval needed [%s]: %s\nType: approve %s  or  deny %s  (within %s)\n",
				p.ID, command, p.ID, p.ID, deadline.Sub(now).Round(time.Second)))
		}
	}
	d, perr := a.appr.wait(ctx, p, asker, record, show)
	// The call's record is replaced by the outcome (the caller appends it again when
	// it runs), so a restart never finds a stale "asking".
	t.rec().Calls = t.rec().Calls[:idx]
	if perr != nil {
		return Rejected, perr
	}
	if a.now().After(t.deadline) && d == Expired {
		cr.Status = callExpired
	}
	switch d {
	case Approved:
		return d, t.to(WaitingTool, false)
	case Rejected:
		cr.Status = callDenied
		t.rec().Calls = append(t.rec().Calls, *cr)
		return d, t.to(Denied, false)
	}
	cr.Status = callExpired
	t.rec().Calls = append(t.rec().Calls, *cr)
	return Expired, t.to(Timeout, false)
}

func names(m map[string]tools.Spec) string {
	var out []string
	for n := range m {
		out = append(out, n)
	}
	if len(out) == 0 {
		return "(none)"
	}
	sortStrings(out)
	return strings.Join(out, ", ")
}

// idAuditor passes intents and outcomes on, noting the intent's id.
type idAuditor struct {
	tools.Auditor
	id   *uint64
	hook func(string)
}

func (a idAuditor) Intent(who, channel, command string) (uint64, error) {
	if a.hook != nil {
		a.hook("before-intent")
	}
	id, err := a.Auditor.Intent(who, channel, command)
	*a.id = id
	if err == nil && a.hook != nil {
		a.hook("after-intent")
	}
	return id, err
}

// stepRecord is the audit of one model step, written before any of its calls run.
// The input is recorded as a SHA-256 digest of the whole request and its size, plus
// the messages new to this step in full (capped): together they let the conversation
// be reconstructed without storing the growing prompt again at every step, which on an
// SD card would be most of the writes.
type stepRecord struct {
	Time     time.Time       `json:"t"`
	Session  string          `json:"session"`
	Turn     int             `json:"turn"`
	Step     int             `json:"step"`
	Provider string          `json:"provider,omitempty"`
	Model    string          `json:"model,omitempty"`
	Route    string          `json:"route,omitempty"`
	InSHA256 string          `json:"in_sha256"`
	InBytes  int             `json:"in_bytes"`
	InNew    []llm.Message   `json:"in_new,omitempty"`
	Out      string          `json:"out"`
	Calls    []llm.ToolCall  `json:"calls,omitempty"`
	Usage    *llm.Usage      `json:"usage,omitempty"`
	Cost     float64         `json:"cost,omitempty"`
	Reason   llm.Reason      `json:"reason,omitempty"`
	Tools    json.RawMessage `json:"tools,omitempty"` // names offered
}

const maxStepOut = 16 << 10

// maxHistoryMessage caps one message kept in a session's history.
const maxHistoryMessage = 4 << 10

func (t *turn) recordStep(req llm.Request, sent []llm.Message, out string, fin *llm.Final) error {
	a := t.a
	if a.opt.Store == nil {
		return nil
	}
	// The digest is of the whole request: as it went on the wire when the provider
	// says (a remote API's body, the constraint in the server's form), else of
	// everything the provider was given (messages, tools, constraint, sampling).
	var in *llm.Sent
	if fin != nil {
		in = fin.Sent
	}
	if in == nil {
		req.Messages = sent
		full, _ := json.Marshal(req)
		in = llm.SentOf(full)
	}
	rec := stepRecord{Time: a.now().UTC(), Session: printableKey(t.s.key), Turn: t.rec().N, Step: t.steps,
		InSHA256: in.SHA256, InBytes: in.Bytes, Out: store.CapString(out, maxStepOut)}
	// New to this step: the user's message on the first, the last step's results after.
	newFrom := len(t.msgs)
	for newFrom > 0 && t.msgs[newFrom-1].Role != llm.RoleAssistant {
		newFrom--
	}
	budget := maxStepOut
	for _, m := range t.msgs[newFrom:] {
		m.Content = store.CapString(m.Content, max(budget, 64))
		budget -= len(m.Content)
		rec.InNew = append(rec.InNew, m)
	}
	names := make([]string, len(req.Tools))
	for i, d := range req.Tools {
		names[i] = d.Name
	}
	rec.Tools, _ = json.Marshal(names)
	if fin != nil {
		rec.Provider, rec.Model, rec.Route, rec.Cost, rec.Reason = fin.Provider, fin.Model, fin.Route, fin.Cost, fin.Reason
		u := fin.Usage
		rec.Usage = &u
		rec.Calls = fin.ToolCalls
	}
	if rec.Provider == "" {
		rec.Provider = a.opt.Provider.Name()
	}
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	if len(data) > store.MaxStepRecord {
		rec.InNew = nil
		data, _ = json.Marshal(rec)
	}
	// Committed with the next durable transition, which always comes before any call
	// of this step runs (WAITING_TOOL, NEEDS_APPROVAL) or ends the turn.
	t.pendingSteps = append(t.pendingSteps, data)
	return nil
}

// finish writes the answer's end, the history and the final state.
func (t *turn) finish(stop string, final State) Out {
	a := t.a
	r := t.rec()
	switch stop {
	case "answered", "question":
	case "model", "store":
		if stop == "store" && !strings.Contains(t.reply.String(), "audit trail") {
			t.sayLine("I had to stop: the store on this board failed, so nothing more was run.")
		}
	default:
		t.sayLine("I stopped before finishing: " + stopReason(stop, a.lim) + ".")
	}
	if stop != "answered" && stop != "question" {
		if done := t.summaryOfCalls(); done != "" {
			t.sayLine(done)
		} else {
			t.sayLine("Nothing was run.")
		}
	}
	for _, n := range t.notes {
		t.sayLine("(" + n + ")")
	}
	r.Stop = stop
	t.s.rec.Tokens += t.tokens
	t.s.rec.Cost += t.cost
	text := strings.TrimSpace(t.reply.String())

	// History: the turn's messages, with the tool results reduced to a line (the model
	// has read them), and the answer as the person saw it.
	h := &t.s.h
	for _, m := range t.msgs {
		if m.Role == llm.RoleTool {
			m.Content = consumedLine(m)
		}
		if m.Role == llm.RoleUser && strings.HasPrefix(m.Content, "(clawedge: ") {
			continue
		}
		// A message is capped in the history: one pasted log must not fill the
		// session's record (the store caps it at 256 KiB) or the next prompts.
		m.Content = store.CapString(m.Content, maxHistoryMessage)
		h.Messages = append(h.Messages, m)
	}
	h.Messages = append(h.Messages, llm.Message{Role: llm.RoleAssistant, Content: store.CapString(text, 2000)})
	// Keep alternation valid for remote APIs: an assistant message with calls whose
	// results are in is fine; a dangling one (a repair) is fine as text.
	if n := len(h.Messages) - a.lim.History; n > 0 {
		cut := n
		for cut < len(h.Messages) && h.Messages[cut].Role != llm.RoleUser {
			cut++
		}
		h.Summary = summarize(h.Summary, h.Messages[:cut], 1500)
		h.Messages = append([]llm.Message(nil), h.Messages[cut:]...)
	}
	if !CanTransition(t.s.rec.State, final) {
		final = Halted
	}
	t.s.rec.State = final
	t.s.publish()
	if err := a.saveSteps(t.s, true, t.pendingSteps); err != nil {
		a.log.Error("agent: saving the session at the end of a turn", "session", printableKey(t.s.key), "err", err)
	}
	return Out{Text: text, State: final, Stop: stop, Calls: t.calls}
}

func stopReason(stop string, l Limits) string {
	switch stop {
	case "iterations":
		return fmt.Sprintf("the limit of %d tool steps per message was reached", l.MaxIterations)
	case "tokens":
		return fmt.Sprintf("the token budget of %d per message was used up", l.MaxTokens)
	case "time":
		return fmt.Sprintf("the time limit of %s per message ran out", l.MaxTime)
	case "cost":
		return fmt.Sprintf("the cost budget of %g per message was used up", l.MaxCost)
	case "repeat":
		return "the model kept repeating the same call"
	case "cancelled":
		return "the request was cancelled"
	}
	return stop
}

// summaryOfCalls says what was done, one line per call.
func (t *turn) summaryOfCalls() string {
	if len(t.calls) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("What was done:")
	for _, c := range t.calls {
		fmt.Fprintf(&b, "\n- %s: %s", c.Call, c.Status)
		if c.Result != "" && (c.Status == callOK || c.Status == callFailed) {
			b.WriteString(" (" + strings.TrimPrefix(strings.TrimPrefix(c.Result, "ok: "), "error: ") + ")")
		}
	}
	return b.String()
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
