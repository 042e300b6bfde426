package policy

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/clawedge/clawedge/tools"
)

// Authorizer is the one place that decides who may call: tools.Runner.Call
// asks it before the intent of every call is recorded. Allow runs the call,
// deny refuses it with the rule, ask waits for a person in the one set of
// pending approvals, decided by a principal allowed to (Decide).
type Authorizer struct {
	Policy    *Policy
	Approvals *Approvals
	// Timeout is how long an ask waits (policy.approval_timeout; 0: 2 minutes).
	Timeout time.Duration
	// Now is the clock of requests; nil: time.Now.
	Now func() time.Time
	// Approvers are principal ids besides policy.owners that may decide any
	// request: Telegram's owners (telegram.allow_users).
	Approvers []string
}

var _ tools.Authorizer = (*Authorizer)(nil)

// DefaultApprovalTimeout is how long an ask waits when the config says nothing.
const DefaultApprovalTimeout = 2 * time.Minute

// Authorize implements tools.Authorizer.
func (a *Authorizer) Authorize(ctx context.Context, caller tools.Caller, c tools.Call) (string, error) {
	tool := c.Tool.Spec().Name
	if why := cmp.Or(a.notAtBoard(caller, c), a.notTheirs(caller, c)); why != "" {
		return "", &tools.Refusal{Command: c.Command, Why: tools.Denied, Rule: why}
	}
	d := a.Policy.Explain(caller, tool)
	switch d.Action {
	case Allow:
		return "", nil
	case Deny:
		return "", &tools.Refusal{Command: c.Command, Why: tools.Denied, Rule: d.Why}
	}
	return a.ask(ctx, caller, tool, c.Command)
}

// notAtBoard says why caller may not make a BoardOnly call ("" when it
// may): only a person, in person, at the board or an owner (policy.owners,
// Approvers) may change who acts on the board.
func (a *Authorizer) notAtBoard(caller tools.Caller, c tools.Call) string {
	if _, ok := c.Tool.(tools.BoardOnly); !ok {
		return ""
	}
	if caller.Actor != tools.Person || caller.Creator != nil {
		return "it changes who may act on the board: only a person may ask for it, never a model, a program or an automation"
	}
	if caller.Role != "" && caller.Role != tools.RoleOwner {
		return caller.User + " is a browser paired as " + string(caller.Role) + ": only an owner's may ask for it"
	}
	id := tools.UserID(caller.User)
	if tools.LocalChannel(caller.Channel) || a.Policy != nil && slices.Contains(a.Policy.Owners, id) || slices.Contains(a.Approvers, id) {
		return ""
	}
	return "it changes who may act on the board: only a person at the board or an owner (policy.owners, telegram.allow_users) may ask for it; " + cmp.Or(id, "this caller") + " is neither"
}

// notTheirs says why caller may not act on what an Owned tool's call names
// ("" when it may): only its owner, a principal policy.owners names (in
// person or through the model acting for them), or a person at the board.
// Asked before the rules, so that a call on someone else's goal is refused
// without asking anyone.
func (a *Authorizer) notTheirs(caller tools.Caller, c tools.Call) string {
	o, ok := c.Tool.(tools.Owned)
	if !ok {
		return ""
	}
	owner, ok := o.OwnerOf(c.Args)
	if !ok {
		return ""
	}
	by := tools.ActsAs(caller)
	switch {
	case owner.User != "" && tools.UserID(by.User) == tools.UserID(owner.User):
		return ""
	case caller.Actor == tools.Person && tools.LocalChannel(caller.Channel):
		return ""
	case caller.Creator == nil && (caller.Actor == tools.Person || caller.Actor == tools.Model) &&
		a.Policy != nil && slices.Contains(a.Policy.Owners, tools.UserID(caller.User)):
		return ""
	}
	whose := owner.User + "'s"
	if owner.User == "" {
		whose = "the board's"
	}
	return "it acts on what is " + whose + ": only its owner or a person at the board may (or one policy.owners names)"
}

// ask waits for a person to decide the call; the caller's Asking, when set,
// records the request before it can be decided and asks on its own channel.
func (a *Authorizer) ask(ctx context.Context, caller tools.Caller, tool, command string) (string, error) {
	if a.Approvals == nil {
		return "", &tools.Refusal{Command: command, Why: tools.Denied, Rule: "it needs a person's approval, and nobody here can give it"}
	}
	now := a.now()
	timeout := a.Timeout
	if timeout <= 0 {
		timeout = DefaultApprovalTimeout
	}
	deadline := now.Add(timeout)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	p := &Pending{Session: caller.User, Channel: caller.Channel, User: caller.User, Actor: caller.Actor,
		Tool: tool, Call: command, Asked: now, Deadline: deadline}
	req := func(p Pending) tools.ApprovalRequest {
		return tools.ApprovalRequest{ID: p.ID, Command: p.Call, Deadline: p.Deadline}
	}
	var record func(Pending) error
	var show func(Pending)
	var asker Asker
	if s := caller.Asking; s != nil {
		record = func(p Pending) error { return s.Waiting(req(p)) }
		show = func(p Pending) { s.Show(req(p)) }
		asker = askingAsker{s, req}
	}
	d, err := a.Approvals.wait(ctx, p, asker, record, show)
	if err != nil {
		return "", &tools.Refusal{Command: command, Why: tools.Cancelled, Rule: err.Error()}
	}
	if s := caller.Asking; s != nil {
		if err := s.Decided(req(*p), d == Approved); err != nil {
			return "", &tools.Refusal{Command: command, Why: tools.Cancelled, Rule: err.Error()}
		}
	}
	switch {
	case d == Approved:
		return p.ID, nil
	case d == Rejected:
		return "", &tools.Refusal{Command: command, Why: tools.Rejected}
	case ctx.Err() != nil:
		return "", &tools.Refusal{Command: command, Why: tools.Cancelled}
	}
	return "", &tools.Refusal{Command: command, Why: tools.Expired}
}

// askingAsker asks through a door's tools.Asking.
type askingAsker struct {
	s   tools.Asking
	req func(Pending) tools.ApprovalRequest
}

func (x askingAsker) Ask(ctx context.Context, p Pending) (Decision, error) {
	approve, decided := x.s.Ask(ctx, x.req(p))
	switch {
	case !decided:
		return Expired, nil
	case approve:
		return Approved, nil
	}
	return Rejected, nil
}

// Decide approves or denies request id for by. Only a person decides; a person
// at the board (a console, or the control socket, which no sandboxed program
// reaches) any request; anyone else only a request made for them (their own
// model's call) or, as an owner (policy.owners, Approvers), any; and never one
// their own rules (policy.users) deny them.
func (a *Authorizer) Decide(id string, approve bool, by tools.Caller) (Pending, error) {
	if a.Approvals == nil {
		return Pending{}, ErrNoApproval
	}
	return a.Approvals.Decide(id, approve, func(p Pending) error { return a.mayDecide(p, by) })
}

// MayDecide says whether by may decide request id (nil: yes), for a door that
// takes the decision its own way (Telegram's buttons, whose answer comes back
// through the request's Asker) and must ask the same rule first.
func (a *Authorizer) MayDecide(id string, by tools.Caller) error {
	if a.Approvals == nil {
		return ErrNoApproval
	}
	p, ok := a.Approvals.get(id)
	if !ok {
		return ErrNoApproval
	}
	return a.mayDecide(p, by)
}

func (a *Authorizer) mayDecide(p Pending, by tools.Caller) error {
	if by.Actor != tools.Person {
		return ErrNotAPerson
	}
	if by.Role != "" && by.Role != tools.RoleOwner {
		return fmt.Errorf("%s is a browser paired as %s, not as an owner: %w", by.User, by.Role, ErrNotYours)
	}
	owner := a.Policy != nil && slices.Contains(a.Policy.Owners, tools.UserID(by.User)) || slices.Contains(a.Approvers, tools.UserID(by.User))
	mine := p.Channel == by.Channel && tools.UserID(p.User) == tools.UserID(by.User)
	if !tools.LocalChannel(by.Channel) && !mine && !owner {
		return ErrNotYours
	}
	if p.Tool != "" {
		if act, why := a.Policy.Check(tools.Caller{Channel: by.Channel, User: by.User, Actor: tools.Person}, p.Tool); act == Deny {
			return &tools.Refusal{Command: "approving " + p.Call, Why: tools.Denied, Rule: why}
		}
	}
	return nil
}

// List returns the calls waiting for a person.
func (a *Authorizer) List() []Pending {
	if a.Approvals == nil {
		return nil
	}
	return a.Approvals.List()
}

func (a *Authorizer) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}
