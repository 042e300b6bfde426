package daemon

import (
	"encoding/json"

	"github.com/clawedge/clawedge/agent"
	"github.com/clawedge/clawedge/store"
)

// AuditPage is how many entries the daemon's "audit" op returns at most; a
// client asking for more pages back with "before".
const AuditPage = 200

// AuditPageArg asks for up to N entries with an id below Before (0: the latest).
type AuditPageArg struct {
	N      int    `json:"n"`
	Before uint64 `json:"before,omitempty"`
}

// AuditPageReply is one page, oldest first; First is the id of its first entry.
type AuditPageReply struct {
	Lines []string `json:"lines"`
	First uint64   `json:"first"`
}

// auditOp is the daemon's answer to the control op "audit" (AuditPageArg).
func (a *Core) auditOp(arg json.RawMessage) (any, error) {
	var p AuditPageArg
	if err := json.Unmarshal(arg, &p); err != nil {
		return nil, err
	}
	entries, err := a.store.TailBefore(p.Before, min(max(p.N, 1), AuditPage))
	if err != nil {
		return nil, err
	}
	r := AuditPageReply{Lines: WithDropped(a.store, entries, min(max(p.N, 1), AuditPage))}
	if len(entries) > 0 {
		r.First = entries[0].ID
	}
	return r, nil
}

// WithDropped is the lines of entries, after a line saying what retention
// dropped when they reach back to the start of what is kept (fewer than
// asked for): the gap is never silent.
func WithDropped(s *store.Store, entries []store.AuditEntry, asked int) []string {
	lines := EntryLines(entries)
	if len(entries) >= asked {
		return lines
	}
	if d, err := s.DroppedSoFar(); err == nil && d.Audit.Count > 0 {
		lines = append([]string{"(dropped by retention before these: " + d.Audit.String() + ")"}, lines...)
	}
	return lines
}

func EntryLines(entries []store.AuditEntry) []string {
	lines := make([]string, len(entries))
	for i, e := range entries {
		lines[i] = e.String()
	}
	return lines
}

// MaxSteps is the most model steps --steps shows (each can be long).
const MaxSteps = 1000

// stepLines is the daemon's answer to the control op "steps" (arg: how many).
func (a *Core) stepLines(arg json.RawMessage) (any, error) {
	n := 20
	if len(arg) > 0 {
		if err := json.Unmarshal(arg, &n); err != nil {
			return nil, err
		}
	}
	recs, err := a.store.StepsTail(min(max(n, 1), MaxSteps))
	if err != nil {
		return nil, err
	}
	return agent.StepLines(recs), nil
}
