package policy

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/clawedge/clawedge/tools"
)

// Decision is how an approval request ended.
type Decision int

const (
	Rejected Decision = iota // a person said no
	Approved                 // a person said yes
	Expired                  // nobody decided in time: the call is not run
)

func (d Decision) String() string {
	switch d {
	case Approved:
		return "approved"
	case Expired:
		return "expired"
	}
	return "denied"
}

// Pending is a call waiting for approval.
type Pending struct {
	ID       string      `json:"id"`
	Session  string      `json:"session"`
	Channel  string      `json:"channel"`
	User     string      `json:"user"`
	Actor    tools.Actor `json:"actor,omitempty"`
	Tool     string      `json:"tool,omitempty"`
	Call     string      `json:"call"` // the call in the command language
	Asked    time.Time   `json:"asked"`
	Deadline time.Time   `json:"deadline"`
}

// Asker asks a person on a channel of its own (Telegram's inline buttons). Ask blocks
// until a decision, the request's deadline, or ctx; its answer competes with
// `approve ID` / `deny ID` typed on a console: the first decision wins.
type Asker interface {
	Ask(ctx context.Context, p Pending) (Decision, error)
}

// Approvals holds the calls waiting for a person. `approve ID` and `deny ID`, typed on
// a console or sent through the control socket, decide them; so does an Asker.
type Approvals struct {
	// Notify is told of each new request (the daemon prints it on its console and logs it).
	Notify func(Pending)

	mu      sync.Mutex
	pending map[string]*waiting
}

type waiting struct {
	p    Pending
	done chan Decision // buffered: the first decision is the only one sent
}

// Errors of Decide.
var (
	ErrNoApproval = errors.New("no call is waiting for approval with that id")
	ErrNotYours   = errors.New("only the person the call was made for, an owner (policy.owners), or someone at the board's console can decide this")
	ErrNotAPerson = errors.New("only a person decides an approval: not a model, a program or an automation")
)

// NewApprovals returns an empty set.
func NewApprovals() *Approvals { return &Approvals{pending: map[string]*waiting{}} }

// wait registers p (its ID is set here) and blocks until a decision, p.Deadline, or
// ctx ends (Expired). asker, when not nil, is asked in parallel. record runs before the
// request can be decided (the session persists NEEDS_APPROVAL with the id); a failure
// there cancels the request. show runs once it can be decided (the prompt is shown).
func (a *Approvals) wait(ctx context.Context, p *Pending, asker Asker, record func(Pending) error, show func(Pending)) (Decision, error) {
	w := &waiting{done: make(chan Decision, 1)}
	a.mu.Lock()
	for {
		p.ID = newID()
		if _, dup := a.pending[p.ID]; !dup {
			break
		}
	}
	a.pending[p.ID] = nil // reserved: not listed, not decidable yet
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		delete(a.pending, p.ID)
		a.mu.Unlock()
	}()
	if record != nil {
		if err := record(*p); err != nil {
			return Rejected, err
		}
	}
	w.p = *p
	a.mu.Lock()
	a.pending[p.ID] = w
	a.mu.Unlock()
	if show != nil {
		show(*p)
	}
	if a.Notify != nil {
		a.Notify(*p)
	}
	actx, cancel := context.WithDeadline(ctx, p.Deadline)
	defer cancel()
	if asker != nil {
		go func() {
			d, err := asker.Ask(actx, *p)
			if err == nil && d != Expired {
				a.decide(p.ID, d)
			}
		}()
	}
	select {
	case d := <-w.done:
		return d, nil
	case <-actx.Done():
	}
	// A decision racing the deadline: whoever removes the entry decides.
	a.mu.Lock()
	_, still := a.pending[p.ID]
	delete(a.pending, p.ID)
	a.mu.Unlock()
	if !still {
		return <-w.done, nil
	}
	return Expired, nil
}

func (a *Approvals) decide(id string, d Decision) bool {
	a.mu.Lock()
	w, ok := a.pending[id]
	ok = ok && w != nil
	if ok {
		delete(a.pending, id)
	}
	a.mu.Unlock()
	if ok {
		w.done <- d
	}
	return ok
}

// Decide approves or denies request id for by, when may says by may decide
// it (Authorizer.Decide is the real rule).
func (a *Approvals) Decide(id string, approve bool, may func(Pending) error) (Pending, error) {
	id = strings.TrimPrefix(strings.TrimSpace(id), "#")
	a.mu.Lock()
	w, ok := a.pending[id]
	a.mu.Unlock()
	if !ok || w == nil {
		return Pending{}, ErrNoApproval
	}
	if err := may(w.p); err != nil {
		return Pending{}, err
	}
	d := Rejected
	if approve {
		d = Approved
	}
	if !a.decide(id, d) {
		return Pending{}, ErrNoApproval
	}
	return w.p, nil
}

// get returns the request id waits with, while it can be decided.
func (a *Approvals) get(id string) (Pending, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	w, ok := a.pending[id]
	if !ok || w == nil {
		return Pending{}, false
	}
	return w.p, true
}

// List returns the waiting requests, oldest first.
func (a *Approvals) List() []Pending {
	a.mu.Lock()
	out := make([]Pending, 0, len(a.pending))
	for _, w := range a.pending {
		if w != nil {
			out = append(out, w.p)
		}
	}
	a.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Asked.Before(out[j].Asked) })
	return out
}

// newID is short enough to type on a serial console and random enough that a guess
// from a chat is hopeless within an approval's lifetime (and Decide checks the chat).
func newID() string {
	var b [3]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
