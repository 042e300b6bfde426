// Package channels is where people and systems reach clawedge: the console
// (stdin and a serial line) and the control socket here, Telegram, MQTT and
// MCP in its subpackages. Every channel hands each line to one Dispatcher (or
// Run, Gate for commands only), so a command behaves the same wherever it is
// typed.
package channels

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/policy"
	"github.com/clawedge/clawedge/tools"
)

// Message is one line of text from a person, with the facts of its handling that
// differ from one message to the next.
type Message struct {
	Channel string // "console/stdin", "console/ttyS0"
	User    string
	Text    string
	// Audit, when set, records the calls this message causes (its commands and the
	// agent's calls) instead of the Runner's auditor: Telegram ties each intent to
	// the inbox item, so a restart knows which message had started what.
	Audit tools.Auditor
	// Asker, when set, asks the sender about the agent's calls that need a person,
	// on their own channel (Telegram's buttons in their chat).
	Asker policy.Asker
	// Creator, for an automation's prompt (the sender auto:<name>): whose
	// rights the automation, and so the model answering it, acts with.
	Creator *tools.Principal
	// Role is what the door lets the sender do (a dashboard browser's role);
	// the policy decides with it.
	Role tools.Role
}

// Handler answers one message. The Dispatcher is the real one; a ControlClient
// forwards to the Dispatcher of the running daemon.
type Handler interface {
	Respond(ctx context.Context, msg Message) Response
}

// Agent answers free text. Until a model is configured there is none.
type Agent interface {
	Reply(ctx context.Context, msg Message) (string, error)
}

// StreamAgent is an Agent that can pass its reply on as it is produced (a
// model's tokens), through emit, before returning the whole of it.
type StreamAgent interface {
	Agent
	ReplyStream(ctx context.Context, msg Message, emit func(text string)) (string, error)
}

// StreamHandler is a Handler that can stream a reply; the Console uses it
// when its Handler has it.
type StreamHandler interface {
	Handler
	// RespondStream is Respond, except that a reply produced piece by piece
	// may be passed to emit as it comes; the Response then has Streamed set.
	RespondStream(ctx context.Context, msg Message, emit func(text string)) Response
}

// NoModelReply is what free text gets when no model is configured.
const NoModelReply = "No model is configured, so I can only run commands. " +
	"Commands start with @ (for example @gpio/write{pin=\"led\";value=1}); try help, status or pins."

// Dispatcher turns a line into a reply: command-language lines run with no model,
// a few words (help, status, pins) are shortcuts for sys tools, `approve ID` and
// `deny ID` decide the agent's calls waiting for a person, and anything else goes to
// the agent.
type Dispatcher struct {
	Runner *tools.Runner
	Agent  Agent // nil: free text gets NoModelReply
	// Approvals are the agent's calls waiting for approval; nil: there are none.
	Approvals Approver
	// Elevation opens /elevated windows (elevated.go); nil: there are none.
	Elevation Elevator
}

// Approver decides the calls that wait for a person (policy.Authorizer, which
// says who may decide which).
type Approver interface {
	Decide(id string, approve bool, by tools.Caller) (policy.Pending, error)
	// MayDecide says whether by may decide id, for a door that takes the
	// decision its own way (Telegram's buttons).
	MayDecide(id string, by tools.Caller) error
	List() []policy.Pending
}

// IsApproval reports whether a line is `approve ID` or `deny ID`: consoles handle
// such a line at once, even while another line's turn waits for it.
func IsApproval(line string) bool {
	word, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
	word = strings.ToLower(word)
	rest = strings.TrimSpace(rest)
	return (word == "approve" || word == "deny") && rest != "" && !strings.Contains(rest, " ")
}

// shortcuts map console words to the commands they stand for; each one runs
// through the runner, so it is validated and audited like any other command.
var shortcuts = map[string]string{
	"help":   "@sys/help{}",
	"?":      "@sys/help{}",
	"status": "@sys/status{}",
	"pins":   "@gpio/list{}",
	"ports":  "@serial/list{}",
	"audit":  "@sys/audit{}",
}

// Response is a reply with what a program needs besides the text: whether the
// line failed, and the report of calls when the line was a command.
type Response struct {
	Text   string        `json:"reply"`
	Failed bool          `json:"failed,omitempty"`
	Report *tools.Report `json:"report,omitempty"`
	// Streamed says that Text has already been passed to emit, piece by
	// piece (RespondStream only).
	Streamed bool `json:"-"`
	// Turn says that the agent answered (a model turn), as opposed to a
	// command or a console word: with Failed, the turn failed.
	Turn bool `json:"turn,omitempty"`
}

// Respond answers one line. It never panics on any input: errors become replies
// that start with "error:" and have Failed set.
func (d *Dispatcher) Respond(ctx context.Context, msg Message) Response {
	return d.RespondStream(ctx, msg, nil)
}

// What RespondStream does with a line, as route says.
const (
	routeNone      = iota // blank: no reply
	routeCommand          // command language (@, [): runs with no model
	routeHelpTool         // help TOOL
	routeShortcut         // a console word (shortcuts)
	routeElevated         // /elevated DURATION
	routeUpdate           // update URL, update status
	routeApproval         // approve ID, deny ID, approvals
	routeMemory           // remember TEXT, forget [ID] (memory.go)
	routeGoal             // /goal TEXT, /goals, /goal show|cancel ID (goals.go)
	routeWebPair          // /web [NAME] [ROLE] (webpair.go)
	routeBoardPair        // /board: a code that pairs another board (docs/boards.md)
	routeAgent            // free text: the agent (or NoModelReply)
)

// route says where line (trimmed) goes, with its first word (lower case) and
// the rest. RespondStream follows it, and ForAgent asks it: one place knows the
// console's words.
func (d *Dispatcher) route(line string) (r int, word, rest string) {
	switch {
	case line == "":
		return routeNone, "", ""
	case strings.HasPrefix(line, "@") || strings.HasPrefix(line, "["):
		return routeCommand, "", ""
	}
	word, rest, _ = strings.Cut(line, " ")
	word, rest = strings.ToLower(word), strings.TrimSpace(rest)
	switch _, short := shortcuts[word]; {
	case word == "help" && rest != "":
		return routeHelpTool, word, rest
	case short && rest == "":
		return routeShortcut, word, rest
	case word == "/elevated" && d.Elevation != nil:
		return routeElevated, word, rest
	case word == "update" && (isUpdateURL(rest) || strings.EqualFold(rest, "status")) && d.has("sys/update"):
		return routeUpdate, word, rest
	case d.Approvals != nil && (IsApproval(line) || word == "approvals" && rest == ""):
		return routeApproval, word, rest
	case d.isMemoryWord(word, rest):
		return routeMemory, word, rest
	case d.isGoalWord(word):
		return routeGoal, word, rest
	case word == "/web":
		return routeWebPair, word, rest
	case word == "/board" && rest == "":
		return routeBoardPair, word, rest
	}
	return routeAgent, word, rest
}

// ForAgent reports whether Respond hands text to the agent (a model turn), as
// opposed to answering it itself (a command, a console word, an approval): a
// channel asks before showing that it is "typing".
func (d *Dispatcher) ForAgent(text string) bool {
	r, _, _ := d.route(strings.TrimSpace(text))
	return r == routeAgent && d.Agent != nil
}

// RespondStream is Respond, streaming the agent's reply through emit when the
// agent can (emit nil: no streaming).
func (d *Dispatcher) RespondStream(ctx context.Context, msg Message, emit func(string)) Response {
	line := strings.TrimSpace(msg.Text)
	switch r, word, rest := d.route(line); r {
	case routeNone:
		return Response{}
	case routeCommand:
		return d.command(ctx, msg, line)
	case routeHelpTool:
		return d.command(ctx, msg, fmt.Sprintf("@sys/help{tool=%q}", strings.TrimPrefix(rest, "@")))
	case routeShortcut:
		cmd := shortcuts[word]
		resp := d.command(ctx, msg, cmd)
		if cmd == "@sys/help{}" && d.Approvals != nil && !resp.Failed {
			resp.Text += "\n" + approvalsHelp
		}
		return resp
	case routeElevated:
		return d.elevated(msg, rest)
	case routeUpdate:
		return d.command(ctx, msg, updateCommand(rest)) // update.go
	case routeApproval:
		return d.approval(msg, word, rest)
	case routeMemory:
		return d.command(ctx, msg, memoryCommand(word, rest)) // memory.go
	case routeGoal:
		return d.command(ctx, msg, goalCommand(word, rest)) // goals.go
	case routeWebPair:
		return d.webPair(ctx, msg, rest) // webpair.go
	case routeBoardPair:
		// A code that pairs another board (docs/boards.md): board/pair on
		// the call path as the sender, who the authorizer holds to a person
		// at the board or an owner (it is tools.BoardOnly).
		if !d.has("board/pair") {
			return Response{Text: "error: boards are off: the config has no boards: section", Failed: true}
		}
		return d.command(ctx, msg, "@board/pair{}")
	}
	if d.Agent == nil {
		return Response{Text: NoModelReply}
	}
	sa, ok := d.Agent.(StreamAgent)
	if !ok || emit == nil {
		reply, err := d.Agent.Reply(ctx, msg)
		if errors.Is(err, ErrTurnFailed) {
			return Response{Text: reply, Failed: true, Turn: true}
		}
		if err != nil {
			return Response{Text: "error: " + err.Error(), Failed: true, Turn: true}
		}
		return Response{Text: reply, Turn: true}
	}
	streamed := false
	reply, err := sa.ReplyStream(ctx, msg, func(s string) {
		if s != "" {
			streamed = true
			emit(s)
		}
	})
	if errors.Is(err, ErrTurnFailed) {
		return Response{Text: reply, Failed: true, Turn: true, Streamed: streamed}
	}
	if err != nil {
		return Response{Text: "error: " + err.Error(), Failed: true, Turn: true}
	}
	return Response{Text: reply, Streamed: streamed, Turn: true}
}

// ErrTurnFailed is what an Agent returns with a reply that tells the person
// why the turn failed (the model or the store failed): the reply is shown as
// it is, and the Response is Failed, so a script piping into chat can tell.
var ErrTurnFailed = errors.New("the turn failed")

// approvalsHelp ends the help of a console where the agent's calls can wait
// for a person.
const approvalsHelp = "Calls waiting for approval: approvals lists them; approve ID or deny ID decides one."

// approval decides a waiting call, or lists them.
func (d *Dispatcher) approval(msg Message, word, id string) Response {
	if word == "approvals" {
		list := d.Approvals.List()
		if len(list) == 0 {
			return Response{Text: "No call is waiting for approval."}
		}
		var b strings.Builder
		for _, p := range list {
			fmt.Fprintf(&b, "[%s] %s (from %s, %s; until %s)\n", p.ID, p.Call, p.User, p.Channel, p.Deadline.Format("15:04:05"))
		}
		return Response{Text: strings.TrimRight(b.String(), "\n")}
	}
	p, err := d.Approvals.Decide(id, word == "approve", msg.person())
	if err != nil {
		return Response{Text: fmt.Sprintf("error: %s %s: %v", word, id, err), Failed: true}
	}
	if word == "approve" {
		return Response{Text: "Approved: " + p.Call}
	}
	return Response{Text: "Denied: " + p.Call + " (it will not run)"}
}

func (d *Dispatcher) command(ctx context.Context, msg Message, line string) Response {
	c := msg.person()
	c.Audit = msg.Audit
	if msg.Asker != nil {
		c.Asking = senderAsking{msg}
	}
	return Command(ctx, d.Runner, c, line)
}

// senderAsking is a typed command's part in an approval its call waits for
// (the sender's own rules, or the exec mode, say ask): the sender is asked on
// their own channel, where the agent's calls ask them (msg.Asker: Telegram's
// buttons, the dashboard's chat). Whoever answers, the authorizer's rule of
// who may decide holds.
type senderAsking struct{ msg Message }

func (senderAsking) Waiting(tools.ApprovalRequest) error { return nil }
func (senderAsking) Show(tools.ApprovalRequest)          {}
func (senderAsking) Decided(tools.ApprovalRequest, bool) error {
	return nil
}

func (a senderAsking) Ask(ctx context.Context, req tools.ApprovalRequest) (approve, decided bool) {
	d, err := a.msg.Asker.Ask(ctx, policy.Pending{ID: req.ID, Session: a.msg.User, Channel: a.msg.Channel, User: a.msg.User,
		Actor: tools.Person, Call: req.Command, Asked: time.Now(), Deadline: req.Deadline})
	if err != nil || d == policy.Expired {
		return false, false
	}
	return d == policy.Approved, true
}

// person is the sender of msg acting themselves: a line a person typed. The
// door set Channel and User from what the sender cannot forge.
func (m Message) person() tools.Caller {
	return tools.Caller{Channel: m.Channel, User: m.User, Actor: tools.Person, Role: m.Role}
}

// Command runs one command line and renders its outcome the way every channel
// shows it, and `clawedge exec` too: when some calls ran, one line per call with
// its result or its error, so a chain that stops at stage two still says what
// stage one did.
func Command(ctx context.Context, r *tools.Runner, caller tools.Caller, line string) Response {
	rep, err := Run(ctx, r, caller, line)
	switch {
	case err == nil:
		return Response{Text: rep.Text(), Report: rep}
	case rep != nil && len(rep.Stages) > 0:
		// Some calls ran: the report says which, and carries the errors.
		return Response{Text: rep.Text(), Failed: true, Report: rep}
	}
	return Response{Text: "error: " + err.Error(), Failed: true}
}

// Run parses and runs one command line.
func Run(ctx context.Context, r *tools.Runner, caller tools.Caller, line string) (*tools.Report, error) {
	cmd, err := Parse(line, r.Registry.Namespaces())
	if err == nil {
		var rep *tools.Report
		rep, err = r.Run(ctx, caller, cmd)
		countCommand(caller.Channel, err) // metrics.go
		return rep, err
	}
	countCommand(caller.Channel, err)
	return nil, err
}

// Parse parses a command line for people: a syntax error comes back with the
// offending line and a caret under the column. Namespaces nil accepts any.
func Parse(line string, namespaces []string) (*grammar.Command, error) {
	cmd, err := grammar.Parse(line, grammar.ParseOptions{Namespaces: namespaces})
	if err != nil {
		var se *grammar.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("%v\n%s", se, se.Caret())
		}
		return nil, err
	}
	return cmd, nil
}

// has reports whether the runner has tool: a console word whose tool this
// board lacks (no dashboard, no updates) is not special here.
func (d *Dispatcher) has(tool string) bool {
	if d.Runner == nil || d.Runner.Registry == nil {
		return false
	}
	_, err := d.Runner.Registry.Lookup(tool)
	return err == nil
}
