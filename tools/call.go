package tools

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/clawedge/clawedge/grammar"
)

// Call is one invocation ready to run: the tool found, its arguments validated
// (once), and its canonical command text, what the policy's approval, a repeat
// check and the audit trail see. Runner.Prepare makes one from structured
// arguments, Runner.Run from each invocation of a command line.
type Call struct {
	Tool    Tool
	Args    grammar.Args
	Command string // @ns/tool{key=value;...}, references resolved
}

// Prepare looks the tool name up and validates structured arguments (a JSON
// object, as a model or an MCP host writes them; empty or null is no
// arguments) against its spec. Nothing runs and nothing is audited: the caller
// applies its policy and approval to the Call, then runs it with Runner.Call.
func (r *Runner) Prepare(name string, args json.RawMessage) (Call, error) {
	t, err := r.Registry.Lookup(name)
	if err != nil {
		return Call{}, err
	}
	if s := strings.TrimSpace(string(args)); s == "" || s == "null" {
		args = json.RawMessage("{}")
	}
	params, err := t.Spec().ParseJSONArgs(args)
	if err != nil {
		return Call{}, err
	}
	return newCall(t, params)
}

// PrepareInvoke is Prepare for an invocation written in the command language
// (a goal's plan step): the tool is looked up and its literal arguments
// validated; an invocation with references is refused, since nothing here
// has a previous result or a context to resolve them from.
func (r *Runner) PrepareInvoke(inv grammar.Invoke) (Call, error) {
	t, err := r.Registry.Lookup(inv.Tool())
	if err != nil {
		return Call{}, err
	}
	for _, p := range inv.Params {
		if hasRef(p.Value) {
			return Call{}, fmt.Errorf("%s: %s: a reference cannot be resolved here; write the value", inv.Tool(), p.Key)
		}
	}
	return newCall(t, inv.Params)
}

// newCall validates params (concrete: references resolved) for t.
func newCall(t Tool, params []grammar.Param) (Call, error) {
	spec := t.Spec()
	a, err := spec.Validate(params)
	if err != nil {
		return Call{}, err
	}
	return Call{Tool: t, Args: a, Command: CommandText(spec.Name, params)}, nil
}

// CommandText is a call of tool with params in the command language: the one
// place a single invocation is rendered.
func CommandText(tool string, params []grammar.Param) string {
	inv := grammar.Invoke{Params: params}
	if ns, name, ok := strings.Cut(tool, "/"); ok {
		inv.Namespace, inv.Name = ns, name
	} else {
		inv.Name = tool
	}
	return (&grammar.Command{Stages: []grammar.Stage{{Calls: []grammar.Invoke{inv}}}}).String()
}

// Call runs a prepared call for caller: the intent is made durable before the
// effect (if it cannot be, nothing runs), the outcome after. The report's Err
// says why it failed; its Audit is the intent's id.
func (r *Runner) Call(ctx context.Context, caller Caller, c Call) CallReport {
	return counted(r.call(ctx, caller, c))
}

func (r *Runner) call(ctx context.Context, caller Caller, c Call) CallReport {
	cr := CallReport{Tool: c.Tool.Spec().Name, Command: c.Command}
	audit := caller.Audit
	if audit == nil {
		audit = r.Audit
	}
	if r.Authorizer != nil {
		approval, err := r.Authorizer.Authorize(ctx, caller, c)
		if err != nil {
			cr.Err = err
			r.refused(audit, caller, c, err)
			return cr
		}
		cr.Approval = approval
	}
	if ra, ok := audit.(ReadAuditor); ok {
		if _, read := c.Tool.(ReadOnly); read {
			return r.read(ctx, ra, caller, c, cr)
		}
	}
	id, err := audit.Intent(caller.User, caller.Channel, auditCommand(c))
	if err != nil {
		cr.Err = fmt.Errorf("%s not run: audit trail unavailable: %w", cr.Tool, err)
		return cr
	}
	cr.Audit = id
	cr, detail := runTool(ctx, caller, c, cr)
	if aerr := audit.Outcome(id, cr.Err == nil, detail); aerr != nil && cr.Err == nil {
		// The effect happened; say so rather than hide it behind the audit failure.
		cr.Err = fmt.Errorf("%s ran, but its outcome could not be recorded: %w", cr.Tool, aerr)
	}
	return cr
}

// refused records a call the authorizer refused: an intent and its outcome,
// so the trail shows who tried what and which rule stopped it. Nothing ran,
// so a failure to record it changes nothing but the record.
func (r *Runner) refused(audit Auditor, caller Caller, c Call, why error) {
	id, err := audit.Intent(caller.User, caller.Channel, auditCommand(c))
	if err != nil {
		return
	}
	audit.Outcome(id, false, "refused: "+why.Error())
}

// read runs a read-only call and records it after, in one grouped record.
func (r *Runner) read(ctx context.Context, audit ReadAuditor, caller Caller, c Call, cr CallReport) CallReport {
	cr, detail := runTool(ctx, caller, c, cr)
	if err := audit.Read(caller.User, caller.Channel, auditCommand(c), cr.Err == nil, detail); err != nil && cr.Err == nil {
		cr.Err = fmt.Errorf("%s ran, but it could not be recorded: %w", cr.Tool, err)
	}
	return cr
}

// runTool runs the call's tool, and returns the report with the outcome's
// detail for the audit trail: the result or the error, and how long it took.
func runTool(ctx context.Context, caller Caller, c Call, cr CallReport) (CallReport, string) {
	start := time.Now()
	if ct, ok := c.Tool.(CallerTool); ok {
		cr.Result, cr.Err = ct.RunFor(ctx, caller, cr.Approval, c.Args)
	} else {
		cr.Result, cr.Err = c.Tool.Run(ctx, c.Args)
	}
	if cr.Err != nil {
		cr.Err = fmt.Errorf("%s: %w", cr.Tool, cancelCause(ctx, cr.Err))
	}
	detail := cmp.Or(cr.Result.Audit, cr.Result.Text)
	if cr.Err != nil {
		detail = cr.Err.Error()
	}
	return cr, fmt.Sprintf("%s (%s)", detail, time.Since(start).Round(time.Microsecond))
}

// auditCommand is the command as the audit trail keeps it: a Redacting
// tool's own rendering, without what only its caller may know.
func auditCommand(c Call) string {
	if r, ok := c.Tool.(Redacting); ok {
		return r.AuditCommand(c.Args)
	}
	return c.Command
}
