package agent

// This file: one proposed call: checked against its spec and the repeat limit,
// handed to the one call path (which decides, asks, audits and runs), and its
// result fed back.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/llm"
	"github.com/clawedge/clawedge/policy"
	"github.com/clawedge/clawedge/store"
	"github.com/clawedge/clawedge/tools"
)

// execute handles one proposed call and returns the result fed back to the model.
// status "repeat" asks the loop to stop after this step.
func (t *turn) execute(ctx context.Context, c llm.ToolCall, byName map[string]grammar.ToolSpec) (string, string, error) {
	p := &proposal{t: t, cr: callRecord{Call: store.CapString(c.Name+" "+string(c.Arguments), 512)}}
	spec, ok := byName[c.Name]
	if !ok {
		return p.unknown(c, byName)
	}
	// Looked up, validated and rendered once: the same call runs below.
	call, err := t.runner.Prepare(spec.Name, c.Arguments)
	if err != nil {
		return p.invalid(spec.Name, err)
	}
	command := call.Command
	p.cr.Call = store.CapString(command, 512)
	// An identical call that already ran, or was refused, MaxRepeats times is not run again.
	if msg, stop := t.repeated(command, command); stop {
		return p.refuse(msg, true)
	}
	return p.run(ctx, spec.Name, call)
}

// proposal is one call the model proposed, while the turn handles it: cr is its
// record in the session.
type proposal struct {
	t  *turn
	cr callRecord
}

// add notes the call's outcome for the answer's summary.
func (p *proposal) add(status, result string) {
	p.cr.Status, p.cr.Result = status, oneLine(result, 200)
	p.t.calls = append(p.t.calls, CallInfo{Call: p.cr.Call, Status: status, Result: p.cr.Result})
}

// refuse records a call that is not run; stop says the turn ends after this step.
func (p *proposal) refuse(msg string, stop bool) (string, string, error) {
	p.add(callRefused, msg)
	p.t.rec().Calls = append(p.t.rec().Calls, p.cr)
	if stop {
		return msg, "repeat", nil
	}
	return msg, "", nil
}

// unknown refuses a call of a tool the turn did not offer: one that does not exist,
// or one the policy denies on this channel (the person is told which rule).
func (p *proposal) unknown(c llm.ToolCall, byName map[string]grammar.ToolSpec) (string, string, error) {
	t := p.t
	if msg, stop := t.repeated(p.cr.Call, c.Name); stop {
		return p.refuse(msg, true)
	}
	msg := fmt.Sprintf("error: there is no tool %q here; the tools are: %s", c.Name, names(byName))
	t.refusedWhy = fmt.Sprintf("called %s, which is not a tool offered here", oneLine(c.Name, 64))
	if _, err := t.runner.Registry.Lookup(c.Name); err == nil {
		if act, why := t.a.opt.Policy.Check(t.caller(), c.Name); act == policy.Deny {
			msg = fmt.Sprintf("error: %s is not allowed on this channel (%s); it was not run", c.Name, why)
			shown := p.cr.Call
			if params, err := grammar.ParamsFromJSON(c.Arguments); err == nil {
				shown = tools.CommandText(c.Name, params)
			}
			t.note(fmt.Sprintf("%s was refused: the policy does not allow it on this channel (%s), so it was not run.", oneLine(shown, 160), why))
		}
	}
	return p.refuse(msg, false)
}

// invalid refuses a call whose arguments do not fit the tool's spec, telling the
// model what to fix.
func (p *proposal) invalid(tool string, err error) (string, string, error) {
	t := p.t
	if msg, stop := t.repeated(p.cr.Call, tool); stop {
		return p.refuse(msg, true)
	}
	msg := "error: " + err.Error() + " (not run; fix the arguments and call again)"
	t.refusedWhy = "called " + tool + " with invalid arguments"
	p.refuse(msg, false)
	t.sameError(msg)
	// The error told the model how to repair the call; invalid again, the router
	// should try a better model.
	if t.invalid++; t.invalid >= 2 && t.escalate == "" {
		t.escalate = "a tool call still invalid after a repair attempt"
	}
	return msg, "", nil
}

// run hands the call to the one call path as the model's, for the person (or
// automation) the turn is for: the authorizer there allows it, refuses it or
// asks a person (this turn's asking records and shows the request). The session
// says WAITING_TOOL with the call before the runner decides; the runner commits
// the intent before the effect.
func (p *proposal) run(ctx context.Context, tool string, call tools.Call) (string, string, error) {
	t, a := p.t, p.t.a
	// The call reaches the call path: agent.tool_choice required is met, and
	// the step's text, held until now, is shown.
	t.madeCall = true
	if t.held != "" {
		t.flushText(t.held)
		t.held = ""
	}
	p.cr.Status = callStarted
	p.cr.Approval = ""
	t.rec().Calls = append(t.rec().Calls, p.cr)
	idx := len(t.rec().Calls) - 1
	if err := t.to(WaitingTool, true); err != nil {
		return "", "", err
	}
	caller := tools.Caller{Channel: t.in.Channel, User: t.in.User, Actor: tools.Model, Creator: t.in.Creator,
		Audit: t.in.Audit, Asking: &turnAsking{t: t, idx: idx}}
	if a.hook != nil {
		scope := t.in.Audit
		if scope == nil {
			scope = t.runner.Audit
		}
		caller.Audit = hookAuditor{Auditor: scope, hook: a.hook}
	}
	tctx, cancel := context.WithDeadline(ctx, t.deadline)
	rep := t.runner.Call(tctx, caller, call)
	cancel()
	if ref := (*tools.Refusal)(nil); errors.As(rep.Err, &ref) {
		return p.refused(ref, idx)
	}
	if t.asked != nil {
		return "", "", t.asked
	}
	if rep.Approval != "" {
		t.notes = append(t.notes, call.Command+" was approved.")
	}
	out := "ok: " + rep.Result.Text
	status := callOK
	if rep.Err != nil {
		out, status = "error: "+rep.Err.Error(), callFailed
		t.sameError(out)
	}
	out = store.CapString(out, a.lim.toolOutput(tool))
	rc := &t.rec().Calls[idx]
	rc.Status, rc.Result, rc.Audit = status, oneLine(out, 200), rep.Audit
	t.calls = append(t.calls, CallInfo{Call: call.Command, Status: status, Result: rc.Result})
	return out, "", t.to(Executing, true)
}

// refused records a call the call path did not run, and tells the model why.
func (p *proposal) refused(ref *tools.Refusal, idx int) (string, string, error) {
	t := p.t
	if t.asked != nil {
		return "", "", t.asked
	}
	command := ref.Command
	t.rec().Calls = t.rec().Calls[:idx]
	var msg, status string
	next := Denied
	switch ref.Why {
	case tools.Denied:
		msg, status = fmt.Sprintf("error: %s is denied by the policy on this channel (%s); it was not run", command, ref.Rule), callDenied
		t.note(fmt.Sprintf("%s was refused: the policy does not allow it on this channel (%s), so it was not run.", command, ref.Rule))
	case tools.Rejected:
		msg, status = "error: the user denied "+command+"; it was not run. Do not try it again.", callDenied
		t.note(command + " was denied, so it was not run.")
	default:
		msg, status, next = "error: nobody approved "+command+" in time; it was not run.", callExpired, Timeout
		t.note(fmt.Sprintf("%s was not approved within %s, so it was not run.", command, t.a.lim.ApprovalTimeout))
	}
	p.cr.Status = status
	t.rec().Calls = append(t.rec().Calls, p.cr)
	if err := t.to(next, false); err != nil {
		return "", "", err
	}
	p.t.calls = append(p.t.calls, CallInfo{Call: p.cr.Call, Status: status, Result: oneLine(msg, 200)})
	return msg, "", t.to(Executing, false)
}

// turnAsking is a turn's part in an approval its call waits for: the request
// is in the session (NEEDS_APPROVAL, with its id) before anyone can decide it,
// shown in the answer, and asked on the person's own channel (In.Asker).
type turnAsking struct {
	t   *turn
	idx int // the call's record in the step
}

func (s *turnAsking) Waiting(req tools.ApprovalRequest) error {
	t := s.t
	rc := &t.rec().Calls[s.idx]
	rc.Status, rc.Approval = callAsking, req.ID
	if err := t.to(NeedsApproval, true); err != nil {
		t.asked = err
		return err
	}
	return nil
}

// Show tells a streamed turn how to answer by typing; a turn whose door asks
// the person itself (In.Asker: the dashboard's buttons) shows the request
// there instead.
func (s *turnAsking) Show(req tools.ApprovalRequest) {
	t := s.t
	if t.in.Emit != nil && t.in.Asker == nil {
		t.sayLine(fmt.Sprintf("Approval needed [%s]: %s\nType: approve %s  or  deny %s  (within %s)\n",
			req.ID, req.Command, req.ID, req.ID, req.Deadline.Sub(t.a.now()).Round(time.Second)))
	}
}

func (s *turnAsking) Ask(ctx context.Context, req tools.ApprovalRequest) (bool, bool) {
	t := s.t
	if t.in.Asker == nil {
		return false, false
	}
	d, err := t.in.Asker.Ask(ctx, policy.Pending{ID: req.ID, Session: printableKey(t.s.key), Channel: t.in.Channel,
		User: t.in.User, Actor: tools.Model, Call: req.Command, Asked: t.a.now(), Deadline: req.Deadline})
	if err != nil || d == policy.Expired {
		return false, false
	}
	return d == policy.Approved, true
}

func (s *turnAsking) Decided(req tools.ApprovalRequest, approved bool) error {
	if !approved {
		return nil // refused() records it
	}
	t := s.t
	rc := &t.rec().Calls[s.idx]
	rc.Status, rc.Approval = callStarted, ""
	if err := t.to(WaitingTool, true); err != nil {
		t.asked = err
		return err
	}
	return nil
}

// repeated counts one more proposal of the call key (shown as shown), run or refused
// alike: a model that keeps proposing a call the policy refuses is stopped by
// max_repeats like one that keeps running it. Past the limit it returns the refusal
// and stop.
func (t *turn) repeated(key, shown string) (string, bool) {
	if n := t.seen[key]; n >= t.a.lim.MaxRepeats {
		return fmt.Sprintf("error: %s already ran or was refused %d times in this turn; it was not run again. Answer the user now.", shown, n), true
	}
	t.seen[key]++
	return "", false
}

// sameError asks the router to go further up when one error comes back twice in a row
// (an llm.Escalation on the rest of the turn; other providers ignore it).
func (t *turn) sameError(msg string) {
	if msg == t.lastErr {
		t.escalate = "the same tool error repeated: " + oneLine(msg, 120)
	}
	t.lastErr = msg
}

func names(m map[string]grammar.ToolSpec) string {
	var out []string
	for n := range m {
		out = append(out, n)
	}
	if len(out) == 0 {
		return "(none)"
	}
	sortStrings(out)
	return strings.Join(out, ", ")
}

// hookAuditor passes intents on, calling the test hook around each.
type hookAuditor struct {
	tools.Auditor
	hook func(string)
}

func (a hookAuditor) Intent(who, channel, command string) (uint64, error) {
	a.hook("before-intent")
	id, err := a.Auditor.Intent(who, channel, command)
	if err == nil {
		a.hook("after-intent")
	}
	return id, err
}
