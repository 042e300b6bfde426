package agent

// This file: one proposed call: checked, refused or approved, run through the
// audited runner, and its result fed back.

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/llm"
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
	if msg, run, err := p.allowed(ctx, spec.Name, command); !run || err != nil {
		return msg, "", err
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
	if _, err := t.runner.Registry.Lookup(c.Name); err == nil {
		if act, why := t.a.opt.Policy.Check(t.in.Channel, t.in.User, c.Name); act == Deny {
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
	p.refuse(msg, false)
	t.sameError(msg)
	// The error told the model how to repair the call; invalid again, the router
	// should try a better model.
	if t.invalid++; t.invalid >= 2 && t.escalate == "" {
		t.escalate = "a tool call still invalid after a repair attempt"
	}
	return msg, "", nil
}

// allowed applies the policy, and asks a person when it says ask. run is false when
// the call must not run; msg then says why, for the model.
func (p *proposal) allowed(ctx context.Context, tool, command string) (msg string, run bool, err error) {
	t := p.t
	act, why := t.a.opt.Policy.Check(t.in.Channel, t.in.User, tool)
	switch act {
	case Deny:
		msg := fmt.Sprintf("error: %s is denied by the policy on this channel (%s); it was not run", command, why)
		p.cr.Status = callDenied
		t.rec().Calls = append(t.rec().Calls, p.cr)
		if err := t.to(Denied, false); err != nil {
			return "", false, err
		}
		p.add(callDenied, msg)
		t.note(fmt.Sprintf("%s was refused: the policy does not allow it on this channel (%s), so it was not run.", command, why))
		return msg, false, t.to(Executing, false)
	case Ask:
		d, err := t.approve(ctx, command, &p.cr)
		if err != nil {
			return "", false, err
		}
		switch d {
		case Approved:
			t.notes = append(t.notes, command+" was approved.")
		case Rejected:
			msg := "error: the user denied " + command + "; it was not run. Do not try it again."
			p.add(callDenied, msg)
			t.note(command + " was denied, so it was not run.")
			return msg, false, t.to(Executing, false)
		default:
			msg := "error: nobody approved " + command + " in time; it was not run."
			p.add(callExpired, msg)
			t.note(fmt.Sprintf("%s was not approved within %s, so it was not run.", command, t.a.lim.ApprovalTimeout))
			return msg, false, t.to(Executing, false)
		}
	}
	return "", true, nil
}

// run runs the call. The session says WAITING_TOOL with the call before the runner
// records the intent; the runner commits the intent before the effect.
func (p *proposal) run(ctx context.Context, tool string, call tools.Call) (string, string, error) {
	t, a := p.t, p.t.a
	p.cr.Status = callStarted
	p.cr.Approval = ""
	t.rec().Calls = append(t.rec().Calls, p.cr)
	idx := len(t.rec().Calls) - 1
	if err := t.to(WaitingTool, true); err != nil {
		return "", "", err
	}
	caller := tools.Caller{Channel: t.in.Channel, User: t.in.User, Audit: t.in.Audit}
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

// approve asks a person about command. The request is persisted (NEEDS_APPROVAL, with
// its id) before anyone can answer it.
func (t *turn) approve(ctx context.Context, command string, cr *callRecord) (Decision, error) {
	a := t.a
	now := a.now()
	deadline := now.Add(a.lim.ApprovalTimeout)
	if deadline.After(t.deadline) {
		deadline = t.deadline
	}
	p := &Pending{Session: printableKey(t.s.key), Channel: t.in.Channel, User: t.in.User, Call: command, Asked: now, Deadline: deadline}
	asker := t.in.Asker
	cr.Status = callAsking
	t.rec().Calls = append(t.rec().Calls, *cr)
	idx := len(t.rec().Calls) - 1
	record := func(p Pending) error {
		t.rec().Calls[idx].Approval = p.ID
		return t.to(NeedsApproval, true)
	}
	show := func(p Pending) {
		if t.in.Emit != nil {
			t.sayLine(fmt.Sprintf("Approval needed [%s]: %s\nType: approve %s  or  deny %s  (within %s)\n",
				p.ID, command, p.ID, p.ID, deadline.Sub(now).Round(time.Second)))
		}
	}
	d, perr := a.appr.wait(ctx, p, asker, record, show)
	// The call's record is replaced by the outcome (the caller appends it again when
	// it runs), so a restart never finds a stale "asking".
	t.rec().Calls = t.rec().Calls[:idx]
	if perr != nil {
		return Rejected, perr
	}
	if a.now().After(t.deadline) && d == Expired {
		cr.Status = callExpired
	}
	switch d {
	case Approved:
		return d, t.to(WaitingTool, false)
	case Rejected:
		cr.Status = callDenied
		t.rec().Calls = append(t.rec().Calls, *cr)
		return d, t.to(Denied, false)
	}
	cr.Status = callExpired
	t.rec().Calls = append(t.rec().Calls, *cr)
	return Expired, t.to(Timeout, false)
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
