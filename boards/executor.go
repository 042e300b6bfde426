package boards

// This file: what a paired board's message does here. Its text is a
// command (@gpio/write{pin="led";value=1}), run on the one call path as the
// principal board:NAME (a program), decided by the one authorizer and
// audited under the sender's call id (the message's id). The call id is
// also the idempotency key: it is stored, with the A2A task's id, before
// the effect, so a message sent again (a retry after a dropped connection)
// is refused, not run twice, and a call a restart interrupted is reported
// as unknown, never run again.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/tools"
)

// Metadata keys of the tasks and messages a board writes.
const (
	metaFrom    = "clawedge.from"    // the task's owner: board:NAME
	metaRefused = "clawedge.refused" // the authorizer refused the call: nothing ran
	metaFields  = "clawedge.fields"  // the result's fields, as JSON values
)

const (
	callsBucket  = "boards-calls"
	callsRunning = "\x00running" // the call keys begun and not ended
	callsAll     = "\x00all"     // every call key, oldest first
	maxCalls     = 1000
)

// MaxMessage bounds the text of one message (a command).
const MaxMessage = 16 << 10

type executor struct{ s *Service }

var _ a2asrv.AgentExecutor = executor{}

func (e executor) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		who := ""
		if ec.User != nil && ec.User.Authenticated {
			who = ec.User.Name
		}
		if who == "" {
			yield(nil, a2a.ErrUnauthenticated)
			return
		}
		if ec.StoredTask != nil {
			yield(nil, fmt.Errorf("a board's task is one command; send a new message: %w", a2a.ErrInvalidParams))
			return
		}
		text, err := messageText(ec.Message)
		if err != nil {
			yield(nil, fmt.Errorf("%v: %w", err, a2a.ErrInvalidParams))
			return
		}
		callID := ec.Message.ID
		key := who + "\x00" + callID
		if prior, found := e.s.calls.task(key); found {
			yield(nil, fmt.Errorf("call %s was already received as task %s; it is not run again: %w", callID, prior, a2a.ErrInvalidParams))
			return
		}
		if err := e.s.calls.begin(key, ec.TaskID); err != nil {
			yield(nil, fmt.Errorf("not run: the store: %w", err))
			return
		}
		task := a2a.NewSubmittedTask(ec, ec.Message)
		task.Metadata = map[string]any{metaFrom: who}
		if !yield(task, nil) {
			return
		}
		out := e.s.run(ctx, who, callID, text)
		e.s.calls.end(key)
		msg := a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, a2a.NewTextPart(out.Text))
		msg.Metadata = map[string]any{}
		if out.Refused {
			msg.Metadata[metaRefused] = true
		}
		if len(out.Fields) > 0 {
			msg.Metadata[metaFields] = out.Fields
		}
		state := a2a.TaskStateCompleted
		if out.Failed {
			state = a2a.TaskStateFailed
		}
		yield(a2a.NewStatusUpdateEvent(ec, state, msg), nil)
	}
}

// Cancel: a command runs to its end once begun (an effect half done is
// worse than one done); a task is only ever canceled before it started,
// which a board's never is.
func (e executor) Cancel(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		yield(nil, fmt.Errorf("a board's command is not canceled once received: %w", a2a.ErrTaskNotCancelable))
	}
}

// messageText is the command a message carries: its text parts, joined.
func messageText(m *a2a.Message) (string, error) {
	if m == nil {
		return "", errors.New("no message")
	}
	var b strings.Builder
	for _, p := range m.Parts {
		if t := p.Text(); t != "" {
			b.WriteString(t)
		}
	}
	if b.Len() == 0 {
		return "", errors.New("the message has no text: send a command such as @sys/status{}")
	}
	if b.Len() > MaxMessage {
		return "", fmt.Errorf("the message is %d bytes, over %d", b.Len(), MaxMessage)
	}
	return strings.TrimSpace(b.String()), nil
}

// outcome is what a message did.
type outcome struct {
	Text            string
	Failed, Refused bool
	Fields          map[string]any
}

// run runs a command for the board who on the one call path.
func (s *Service) run(ctx context.Context, who, callID, text string) outcome {
	audit := callAudit{base: s.Runner.Audit, call: callID}
	if !strings.HasPrefix(text, "@") {
		// Free text: a turn of this board's model, acting for the board
		// that asked, its every call on the one call path as board:NAME.
		if s.Turn == nil {
			return outcome{Text: "error: this board has no model: send a command (@ns/tool{...})", Failed: true}
		}
		reply, err := s.Turn(ctx, who, audit, text)
		if err != nil {
			return outcome{Text: strings.TrimSpace(reply + "\nerror: " + err.Error()), Failed: true}
		}
		return outcome{Text: reply}
	}
	// Only this board's own tools: a board does not relay to a third one,
	// so a call runs where its name says and nowhere else.
	local := slices.DeleteFunc(s.Runner.Registry.Namespaces(), func(ns string) bool { return strings.Contains(ns, ".") })
	cmd, err := grammar.Parse(text, grammar.ParseOptions{Namespaces: local})
	if err != nil {
		return outcome{Text: "error: " + err.Error() + " (not run)", Failed: true}
	}
	caller := tools.Caller{Channel: "board", User: who, Actor: tools.Program, Audit: audit}
	// No longer than the caller waits: a call that waits here (for a
	// person's approval) is refused when the other board has given up on
	// it, never run after it was reported unknown there.
	ctx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()
	rep, err := s.Runner.Run(ctx, caller, cmd)
	o := outcome{}
	if rep != nil {
		o.Text = rep.Text()
		for _, st := range rep.Stages {
			for _, c := range st.Calls {
				if len(c.Result.Fields) > 0 {
					o.Fields = map[string]any{}
					for k, v := range c.Result.Fields {
						o.Fields[k] = v.Plain()
					}
				}
			}
		}
	}
	if err != nil {
		var refusal *tools.Refusal
		o.Failed, o.Refused = true, errors.As(err, &refusal)
		if o.Text == "" {
			o.Text = "error: " + err.Error()
		}
	}
	return o
}

// callAudit records a board's calls with the caller's call id, so that the
// two audit trails, here and on the calling board, are read together.
type callAudit struct {
	base tools.Auditor
	call string
}

func (a callAudit) Intent(who, channel, command string) (uint64, error) {
	return a.base.Intent(who, channel, command+" [call "+a.call+"]")
}

func (a callAudit) Outcome(id uint64, ok bool, detail string) error {
	return a.base.Outcome(id, ok, detail)
}

// calls are the call ids received, each with its task, and the ones begun
// and not ended (an effect a restart interrupted).
type calls struct {
	kv DeleteKV
	mu sync.Mutex
}

func (c *calls) list(key string) []string {
	var out []string
	if raw, found, err := c.kv.Get(callsBucket, key); err == nil && found {
		json.Unmarshal(raw, &out)
	}
	return out
}

func (c *calls) putList(key string, l []string) error {
	raw, _ := json.Marshal(l)
	return c.kv.Put(callsBucket, key, raw)
}

func (c *calls) task(key string) (string, bool) {
	raw, found, err := c.kv.Get(callsBucket, key)
	if err != nil || !found {
		return "", false
	}
	return string(raw), true
}

// begin records call key as received for task, durably, before its effect.
func (c *calls) begin(key string, task a2a.TaskID) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.kv.Put(callsBucket, key, []byte(task)); err != nil {
		return err
	}
	all := append(c.list(callsAll), key)
	for len(all) > maxCalls {
		c.kv.Delete(callsBucket, all[0])
		all = all[1:]
	}
	if err := c.putList(callsAll, all); err != nil {
		return err
	}
	return c.putList(callsRunning, append(c.list(callsRunning), key))
}

// end records call key as ended.
func (c *calls) end(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.putList(callsRunning, slices.DeleteFunc(c.list(callsRunning), func(k string) bool { return k == key }))
}

// recover marks the tasks of calls a restart interrupted as failed, their
// outcome unknown: whether the effect happened is in this board's audit
// (an intent without an outcome), and the call is never run again.
func (c *calls) recover(ctx context.Context, ts *taskStore) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	running := c.list(callsRunning)
	for _, key := range running {
		id, found := c.task(key)
		if !found {
			continue
		}
		st, err := ts.Get(ctx, a2a.TaskID(id))
		if err != nil || st.Task.Status.State.Terminal() {
			continue
		}
		t := st.Task
		t.Status = a2a.TaskStatus{State: a2a.TaskStateFailed, Message: a2a.NewMessageForTask(a2a.MessageRoleAgent, t,
			a2a.NewTextPart("outcome unknown: this board restarted while the call ran; it is not run again (see its audit trail)"))}
		ts.Update(ctx, &taskstore.UpdateRequest{Task: t, PrevVersion: st.Version})
	}
	c.putList(callsRunning, nil)
	return len(running)
}
