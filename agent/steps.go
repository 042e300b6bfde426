package agent

// This file: the audit record of each model step, committed before its calls run.

import (
	"encoding/json"
	"time"

	"github.com/clawedge/clawedge/llm"
	"github.com/clawedge/clawedge/store"
)

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
