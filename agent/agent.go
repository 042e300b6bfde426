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
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/llm"
	"github.com/clawedge/clawedge/policy"
	"github.com/clawedge/clawedge/store"
	"github.com/clawedge/clawedge/tools"
)

// Options build an Agent.
type Options struct {
	// Provider is the model: the router, or any one provider.
	Provider llm.Provider
	// Runner runs the calls (with its registry and its auditor); In.Audit overrides
	// the auditor per message (Telegram ties each call to its inbox item).
	Runner *tools.Runner
	// Store keeps sessions and model steps; nil keeps sessions in memory only.
	Store *store.Store
	// Policy says which tools to offer the model (those the call path would
	// not deny it); the call path's authorizer decides, and asks.
	Policy *policy.Policy
	// Approvals are the calls waiting for a person, for Status; nil: none.
	Approvals *policy.Approvals
	Limits    Limits
	// System is added to the built-in system prompt.
	System string
	// Memory, when set, puts the persona and user files in the fixed system
	// prompt and the entries relevant to each message before it, within
	// RecallTokens (LocalRecallTokens for the local tier; 0: the defaults),
	// and keeps the summary of a compacted session as an entry (memory.go).
	Memory                          Memory
	RecallTokens, LocalRecallTokens int
	// Think lets a thinking model (Qwen3) reason in its <think> section before
	// it answers or calls (agent.think); false asks it to answer at once. The
	// reasoning is never part of the answer.
	Think bool
	Log   *slog.Logger
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
	appr   *policy.Approvals
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
func (a *Agent) toolDefs(specs []grammar.ToolSpec, compact bool) []llm.ToolDef {
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
			d = ToolDefs([]grammar.ToolSpec{s}, compact)[0]
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
	return a, nil
}

// In is one message for the agent.
type In struct {
	Channel, User, Text string
	// Audit, when set, records this message's calls instead of the Runner's
	// auditor: its audit scope (Telegram ties each call to the inbox item).
	Audit tools.Auditor
	// Asker, when set, asks the person who sent this message about the calls the
	// policy says to ask about, on their channel (Telegram's buttons in their chat),
	// in parallel with `approve ID` typed on a console.
	Asker policy.Asker
	// Creator, for an automation's ask: whose rights the automation acts with.
	Creator *tools.Principal
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
	return t.run(ctx)
}
