package tools

// This file: who may make a call. Runner.Call asks one Authorizer before the
// intent is recorded; no door decides on its own. The policy package is the
// real one; the types here are what the call path and the doors share.

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/clawedge/clawedge/grammar"
)

// Actor is what composed a call: the same principal may type a command itself,
// or have the model propose one for it, and the policy holds the two apart.
type Actor string

const (
	// Person: a person typed the command (a console, the control socket, Telegram).
	Person Actor = "person"
	// Model: the model proposed the call, acting for the principal.
	Model Actor = "model"
	// Program: a program asked (an MCP host, Home Assistant over MQTT).
	Program Actor = "program"
	// Automation: an automation fired; it acts with its creator's rights.
	Automation Actor = "automation"
)

// Principal is who asks, as the door established it by means the asker cannot
// forge: the channel (the door), the id on it ("telegram:42", "uid:1000",
// "mcp:claude", "mqtt", "auto:porch") and what composed the call.
type Principal struct {
	Channel string `json:"channel"`
	User    string `json:"user"`
	Actor   Actor  `json:"actor"`
}

// String names the principal for people: "telegram:42", "the model for
// telegram:42", "mcp:claude (program)".
func (p Principal) String() string {
	switch p.Actor {
	case Model:
		return "the model for " + p.User
	case Person:
		return p.User
	}
	return fmt.Sprintf("%s (%s)", p.User, or(string(p.Actor), string(Program)))
}

// LocalChannel reports whether channel is one of people at the board: a
// console (console/stdin, a serial console console/ttyS0) or the control
// socket (control, and cli for a command run on the store), which only the
// daemon's own user can open, and no sandboxed program (channels/control.go
// refuses a peer in another PID namespace).
func LocalChannel(channel string) bool {
	family, _, _ := strings.Cut(channel, "/")
	return channel == "control" || channel == "cli" || family == "console"
}

// UserID is the stable part of a principal's name, the one rules and owners
// are written with: "telegram:42 (@ann)" is "telegram:42".
func UserID(user string) string {
	id, _, _ := strings.Cut(user, " ")
	return id
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Authorizer decides whether caller may make call c. Authorize returns nil
// when the call may run (a person approved it when the policy asked: then
// approval is the request's id), or a *Refusal saying why not. It blocks while
// a person is asked.
type Authorizer interface {
	Authorize(ctx context.Context, caller Caller, c Call) (approval string, err error)
}

// Refusal is a call the authorizer did not let run. Nothing ran; the audit
// trail records it as refused.
type Refusal struct {
	Command string
	// Why: Denied (a rule; Rule names it), Rejected (a person said no),
	// Expired (nobody decided in time), Cancelled (the asker went away).
	Why  RefusalKind
	Rule string
}

// RefusalKind says why a call was refused.
type RefusalKind string

const (
	Denied    RefusalKind = "denied"
	Rejected  RefusalKind = "rejected"
	Expired   RefusalKind = "expired"
	Cancelled RefusalKind = "cancelled"
)

func (r *Refusal) Error() string {
	switch r.Why {
	case Rejected:
		return "a person denied " + r.Command + "; it was not run"
	case Expired:
		return "nobody approved " + r.Command + " in time (type approve ID at the board's console); it was not run"
	case Cancelled:
		return r.Command + " was cancelled while waiting for approval; it was not run"
	}
	return fmt.Sprintf("%s is denied by the policy (%s); it was not run", r.Command, r.Rule)
}

// ApprovalRequest is a call waiting for a person.
type ApprovalRequest struct {
	ID       string
	Command  string
	Deadline time.Time
}

// Asking is how the door that asked takes part in an approval its call waits
// for (the agent's session records it; Telegram shows buttons). Every method
// may be a no-op.
type Asking interface {
	// Waiting is told the request before anyone can decide it; an error
	// cancels the call (the agent persists NEEDS_APPROVAL with the id).
	Waiting(req ApprovalRequest) error
	// Show presents the request to the one who asked, once it can be
	// decided (the agent's answer says how to approve it).
	Show(req ApprovalRequest)
	// Ask asks the person on the door's own channel and returns their
	// decision (decided false: none, by the deadline or ctx's end).
	Ask(ctx context.Context, req ApprovalRequest) (approve, decided bool)
	// Decided is told the outcome before the call runs or is refused.
	Decided(req ApprovalRequest, approved bool) error
}

// CallerTool is a tool that needs to know who called it: auto/add records the
// creator of an automation (whose rights its runs have), and whether a person
// approved it (approval, the request's id).
type CallerTool interface {
	Tool
	RunFor(ctx context.Context, caller Caller, approval string, args grammar.Args) (Result, error)
}
