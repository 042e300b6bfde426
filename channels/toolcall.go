package channels

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/clawedge/clawedge/agent"
	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/tools"
)

// Gate holds a program's tool calls (an MCP host's) to what the agent's are held
// to: a program is not a person at a console, so the policy applies to it as to a
// model, on its channel ("mcp"), and an `ask` waits for a person on another channel.
// After the gate, the call takes the one call path every command takes: the
// runner validates it, writes the audit intent, runs it and records the outcome.
type Gate struct {
	Policy *agent.Policy // nil: every tool is allowed
	// Approvals is where an `ask` waits; nil: an ask is refused at once.
	Approvals *agent.Approvals
	// Timeout is how long an ask waits for a person (policy.approval_timeout).
	Timeout time.Duration
}

// Allowed reports whether tool is offered on channel at all: a denied tool is not
// listed, so a host does not learn of it.
func (g *Gate) Allowed(channel, tool string) bool { return g.Policy.Allowed(channel, tool) }

// Visible returns the specs the policy offers on channel.
func (g *Gate) Visible(channel string, specs []grammar.ToolSpec) []grammar.ToolSpec {
	var out []grammar.ToolSpec
	for _, s := range specs {
		if g.Allowed(channel, s.Name) {
			out = append(out, s)
		}
	}
	return out
}

// CallResult is the outcome of one program call: the text shown to the program,
// and whether it failed (then Text is the reason).
type CallResult struct {
	Text   string `json:"text"`
	Failed bool   `json:"failed,omitempty"`
}

// Call runs tool with JSON arguments (an object) for caller. It never panics on
// any input; every refusal says why.
func (g *Gate) Call(ctx context.Context, r *tools.Runner, caller tools.Caller, tool string, args json.RawMessage) CallResult {
	fail := func(format string, a ...any) CallResult {
		return CallResult{Text: "error: " + fmt.Sprintf(format, a...), Failed: true}
	}
	act, why := g.Policy.Check(caller.Channel, caller.User, tool) // every layer
	if _, err := r.Registry.Lookup(tool); err != nil || act == agent.Deny {
		// A denied tool is reported like an unknown one, with the rule, so that no
		// spelling reaches it and a person reading the error can find the rule.
		if err == nil {
			return fail("%s is denied by the policy on channel %s (%s); it was not run", tool, caller.Channel, why)
		}
		return fail("%v", err)
	}
	call, err := r.Prepare(tool, args) // looked up, validated and rendered once
	if err != nil {
		return fail("%v (not run)", err)
	}
	if act == agent.Ask {
		if res, ok := g.approve(ctx, caller, call.Command); !ok {
			return res
		}
	}
	rep := r.Call(ctx, caller, call)
	if rep.Err != nil {
		return fail("%v", rep.Err)
	}
	return CallResult{Text: rep.Result.Text}
}

// approve waits for a person to decide command; ok is false when it must not run.
func (g *Gate) approve(ctx context.Context, caller tools.Caller, command string) (CallResult, bool) {
	if g.Approvals == nil {
		return CallResult{Text: "error: " + command + " needs a person's approval, and no channel here can give it; it was not run", Failed: true}, false
	}
	timeout := g.Timeout
	if timeout <= 0 {
		timeout = 2 * time.Minute
	}
	now := time.Now()
	d, err := g.Approvals.Ask(ctx, agent.Pending{Session: caller.User, Channel: caller.Channel, User: caller.User,
		Call: command, Asked: now, Deadline: now.Add(timeout)})
	switch {
	case err != nil:
		return CallResult{Text: "error: " + command + ": approval failed: " + err.Error() + "; it was not run", Failed: true}, false
	case d == agent.Approved:
		return CallResult{}, true
	case d == agent.Rejected:
		return CallResult{Text: "error: a person denied " + command + "; it was not run", Failed: true}, false
	case ctx.Err() != nil:
		return CallResult{Text: "error: " + command + " was cancelled while waiting for approval; it was not run", Failed: true}, false
	}
	return CallResult{Text: fmt.Sprintf("error: nobody approved %s within %s (type approve ID on the board's console); it was not run", command, timeout), Failed: true}, false
}
