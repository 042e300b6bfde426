package boards

// This file: a paired board's tool here, NAME.ns/tool. Its call was decided
// here by the one authorizer (may this principal call that board's tools?)
// before Run; the board decides again what board:THIS may do there. The
// call carries a call id of its own (the A2A message's id, the task's key
// there), which both audit trails keep. A call the board may have received
// but did not answer is reported as unknown, and never sent again.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http/httptrace"
	"strings"
	"sync/atomic"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/tools"
)

type remoteTool struct {
	s          *Service
	r          *remote
	spec       grammar.ToolSpec // named NAME.ns/tool
	remoteName string           // ns/tool, as the board names it
}

func (t *remoteTool) Spec() grammar.ToolSpec {
	spec := t.spec
	if up, _ := t.r.state(); !up {
		spec.Doc = "(unavailable: " + t.s.lastSeen(t.r.name) + ") " + spec.Doc
	}
	return spec
}

// Refusal is a call the other board refused (its authorizer): nothing ran there.
type Refusal struct {
	Board, Text string
}

func (e *Refusal) Error() string { return "refused by board " + e.Board + ": " + e.Text }

// ErrUnknown is a call whose outcome is unknown: the board may have run it.
var ErrUnknown = errors.New("outcome unknown")

func (s *Service) lastSeen(name string) string {
	p, ok := s.peers.Get(name)
	if !ok || p.LastSeen.IsZero() {
		return name + " never answered"
	}
	return name + " last seen " + p.LastSeen.Local().Format(time.DateTime)
}

func (t *remoteTool) Run(ctx context.Context, a grammar.Args) (tools.Result, error) {
	return t.RunFor(ctx, tools.Caller{}, "", a)
}

// RunFor sends the call to the board and waits, at most boards.timeout.
func (t *remoteTool) RunFor(ctx context.Context, _ tools.Caller, _ string, a grammar.Args) (tools.Result, error) {
	peer, ok := t.s.peers.Get(t.r.name)
	if !ok {
		return tools.Result{}, fmt.Errorf("board %s is not paired (not run)", t.r.name)
	}
	if up, why := t.r.state(); !up {
		t.s.wake()
		return tools.Result{}, fmt.Errorf("board %s is unavailable (%s: %s); not run", t.r.name, t.s.lastSeen(t.r.name), why)
	}
	var params []grammar.Param
	for _, p := range t.spec.Params {
		if v, ok := a.Value(p.Name); ok {
			params = append(params, grammar.Param{Key: p.Name, Value: v})
		}
	}
	command := tools.CommandText(t.remoteName, params)
	callID := newCallID()

	ctx, cancel := context.WithTimeout(ctx, t.s.Timeout)
	defer cancel()
	var sent atomic.Bool // the request reached the board's server: it may have run
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteHeaders: func() { sent.Store(true) }})
	// The SDK's JSON-RPC transport itself, not its factory: the factory
	// links every transport (REST too) into the core, for nothing here.
	client := a2aclient.NewJSONRPCTransport(strings.TrimSuffix(peer.URL, "/")+RPCPath, t.s.client(peer))
	defer client.Destroy()
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(command))
	msg.ID = callID
	res, err := client.SendMessage(ctx, nil, &a2a.SendMessageRequest{Message: msg})
	if err != nil {
		var op *net.OpError
		answered := strings.Contains(err.Error(), "unexpected HTTP status") || isA2AError(err)
		switch {
		case answered:
			t.s.peers.Seen(t.r.name)
			return tools.Result{}, fmt.Errorf("board %s: %v (call %s not run)", t.r.name, err, callID)
		case !sent.Load() || errors.As(err, &op) && op.Op == "dial":
			t.r.set(false, err)
			t.s.wake()
			return tools.Result{}, fmt.Errorf("board %s is unreachable (%s): %v; call %s not run", t.r.name, t.s.lastSeen(t.r.name), shortErr(err), callID)
		}
		t.r.set(false, err)
		t.s.wake()
		return tools.Result{}, fmt.Errorf("board %s stopped answering during call %s (%s): %w: it may have run there (its audit trail says); it is not sent again", t.r.name, callID, shortErr(err), ErrUnknown)
	}
	t.s.peers.Seen(t.r.name)
	task, ok := res.(*a2a.Task)
	if !ok {
		return tools.Result{}, fmt.Errorf("board %s answered call %s with a message, not a task", t.r.name, callID)
	}
	text := ""
	var meta map[string]any
	if m := task.Status.Message; m != nil {
		for _, p := range m.Parts {
			text += p.Text()
		}
		meta = m.Metadata
	}
	switch task.Status.State {
	case a2a.TaskStateCompleted:
		return tools.Result{Text: text, Fields: fieldsOf(meta), Audit: fmt.Sprintf("%s [call %s, task %s on %s]", text, callID, task.ID, t.r.name)}, nil
	case a2a.TaskStateFailed:
		if refused, _ := meta[metaRefused].(bool); refused {
			return tools.Result{}, fmt.Errorf("call %s: %w", callID, &Refusal{Board: t.r.name, Text: strings.TrimPrefix(text, "error: ")})
		}
		return tools.Result{}, fmt.Errorf("on board %s (call %s): %s", t.r.name, callID, strings.TrimPrefix(text, "error: "))
	}
	return tools.Result{}, fmt.Errorf("board %s left call %s %s: %w", t.r.name, callID, task.Status.State, ErrUnknown)
}

func isA2AError(err error) bool {
	for _, e := range []error{a2a.ErrInvalidParams, a2a.ErrUnauthenticated, a2a.ErrUnauthorized, a2a.ErrTaskNotFound,
		a2a.ErrInternalError, a2a.ErrInvalidRequest, a2a.ErrMethodNotFound, a2a.ErrParseError, a2a.ErrUnsupportedOperation, a2a.ErrTaskNotCancelable} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// shortErr is the last part of a wrapped error: "connection refused".
func shortErr(err error) string {
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		return msg[i+2:]
	}
	return msg
}

func newCallID() string {
	b := make([]byte, 8)
	rand.Read(b)
	return "c-" + hex.EncodeToString(b)
}

// fieldsOf reads the result's fields a board sent (scalars only).
func fieldsOf(meta map[string]any) map[string]grammar.Value {
	raw, ok := meta[metaFields].(map[string]any)
	if !ok {
		return nil
	}
	out := map[string]grammar.Value{}
	for k, v := range raw {
		if !grammar.IsIdent(k) {
			continue
		}
		switch x := v.(type) {
		case string:
			out[k] = grammar.StringValue(x)
		case bool:
			out[k] = grammar.BoolValue(x)
		case float64:
			if x == float64(int64(x)) {
				out[k] = grammar.IntValue(int64(x))
			} else {
				out[k] = grammar.FloatValue(x)
			}
		}
	}
	return out
}
