package tools

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/clawedge/clawedge/grammar"
)

// Auditor records every call durably: Intent before the effect, Outcome after.
// The store implements it; it is an interface so that tools do not depend on how.
type Auditor interface {
	Intent(who, channel, command string) (id uint64, err error)
	Outcome(id uint64, ok bool, detail string) error
}

// ReadAuditor records a read-only call's intent and outcome at once, after
// it ran, without a commit of its own: reads polled every second must not
// cost two fsyncs of SD-card wear each. The store groups them (a crash loses
// at most the last moments of reads, which changed nothing).
type ReadAuditor interface {
	Read(who, channel, command string, ok bool, detail string) error
}

// Caller says who asked and through which channel; it is what $ctx exposes,
// what the authorizer decides on and what the audit trail records. Each door
// fills it from what the asker cannot forge (principal.go).
type Caller struct {
	Channel string // the door: "console/stdin", "console/ttyS0", "control", "telegram", "mqtt", "mcp", "auto"
	User    string // the principal's id on it: "console", "uid:1000", "telegram:42", "mqtt", "mcp:claude", "auto:porch"
	Actor   Actor  // what composed the call; "" counts as Program (the most held)
	Role    Role   // what the door lets this principal do (the dashboard's roles); "": no such limit
	// Creator is whose rights an automation's run acts with: who created it
	// (the config's author, or the person, host or model that called auto/add).
	Creator *Principal
	// Approved is the id of a person's approval of the automation as created
	// (its do: line was in the approved command): its calls need no new one.
	Approved string
	// Asking, when set, takes part in an approval this caller's call waits
	// for (the agent's session, Telegram's buttons); nil: the request is only
	// announced to the people at the board.
	Asking Asking
	// Audit, when set, records this caller's calls instead of Runner.Audit: the
	// audit scope of one message (Telegram and MQTT tie each intent to the inbox
	// item that asked for it). One Runner serves every message; nothing copies it.
	Audit Auditor
}

// Runner executes parsed command lines against a registry.
type Runner struct {
	Registry *Registry
	Audit    Auditor
	// Authorizer decides, before the intent is recorded, whether the caller may
	// make the call: the one place that does. nil allows every call (tests of
	// the runner alone; the daemon always sets the policy's).
	Authorizer Authorizer
	// Env holds the only environment variables $env may read: the ones the
	// config lists, read once at start. Anything else is refused, so a command
	// can never exfiltrate a token from the environment.
	Env map[string]string
	// Self is what $self exposes: facts about this clawedge (name, version, board).
	Self map[string]grammar.Value
}

// CallReport is the outcome of one invocation.
type CallReport struct {
	Tool    string // "gpio/write"
	Command string // the invocation as run, references resolved
	Result  Result
	Err     error
	Audit   uint64 // the intent's id in the audit trail; 0 when none was written
	// Approval is the id of the person's approval the call ran with, if it needed one.
	Approval string
}

// StageReport holds the calls of one stage; a parallel stage has several.
type StageReport struct {
	Parallel bool
	Calls    []CallReport
}

// Report is the outcome of a whole command line.
type Report struct {
	Stages []StageReport
}

// Err returns the first call error, if any.
func (r *Report) Err() error {
	for _, st := range r.Stages {
		for _, c := range st.Calls {
			if c.Err != nil {
				return c.Err
			}
		}
	}
	return nil
}

// Text renders the report for people: one line per call; a call in a parallel
// block or a chain is prefixed with its tool name so the lines can be told apart.
func (r *Report) Text() string {
	var b strings.Builder
	multi := len(r.Stages) > 1
	for _, st := range r.Stages {
		for _, c := range st.Calls {
			prefix := ""
			if multi || st.Parallel {
				prefix = c.Tool + ": "
			}
			if c.Err != nil {
				fmt.Fprintf(&b, "%serror: %v\n", prefix, c.Err)
				continue
			}
			fmt.Fprintf(&b, "%s%s\n", prefix, c.Result.Text)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// Run executes cmd for caller. Every tool and every literal argument of every stage
// is checked before the first effect, so a typo in stage three does not leave
// stages one and two half done. A stage that fails stops the chain; the calls of
// a parallel stage all run and each reports. The returned error is nil when
// every call succeeded; the report says what happened either way.
func (r *Runner) Run(ctx context.Context, caller Caller, cmd *grammar.Command) (*Report, error) {
	plan := make([][]Tool, len(cmd.Stages))
	for i, st := range cmd.Stages {
		for _, call := range st.Calls {
			t, err := r.Registry.Lookup(call.Tool())
			if err != nil {
				return &Report{}, posError(call.Pos, err)
			}
			if err := t.Spec().Precheck(call.Params); err != nil {
				return &Report{}, err
			}
			plan[i] = append(plan[i], t)
		}
	}

	rep := &Report{}
	var prev []Result
	for i, st := range cmd.Stages {
		sr := StageReport{Parallel: st.Parallel, Calls: make([]CallReport, len(st.Calls))}
		if len(st.Calls) == 1 {
			sr.Calls[0] = r.runCall(ctx, caller, plan[i][0], st.Calls[0], prev)
		} else {
			var wg sync.WaitGroup
			for j := range st.Calls {
				wg.Add(1)
				go func() {
					defer wg.Done()
					sr.Calls[j] = r.runCall(ctx, caller, plan[i][j], st.Calls[j], prev)
				}()
			}
			wg.Wait()
		}
		rep.Stages = append(rep.Stages, sr)
		if err := rep.Err(); err != nil {
			return rep, err
		}
		prev = prev[:0:0]
		for _, c := range sr.Calls {
			prev = append(prev, c.Result)
		}
	}
	return rep, nil
}

// runCall resolves an invocation's references, validates it and runs it.
func (r *Runner) runCall(ctx context.Context, caller Caller, t Tool, inv grammar.Invoke, prev []Result) CallReport {
	resolved, err := r.resolve(caller, inv, prev)
	if err != nil {
		return counted(CallReport{Tool: inv.Tool(), Err: err})
	}
	c, err := newCall(t, resolved.Params)
	if err != nil {
		return counted(CallReport{Tool: inv.Tool(), Command: CommandText(inv.Tool(), resolved.Params), Err: err})
	}
	return r.Call(ctx, caller, c)
}

// cancelCause replaces a bare "context canceled" with why the call was cancelled
// (the client went away, clawedge is stopping), which is what the audit and the
// reply must say.
func cancelCause(ctx context.Context, err error) error {
	if ctx.Err() == nil || !errors.Is(err, ctx.Err()) {
		return err
	}
	if cause := context.Cause(ctx); cause != nil && cause != ctx.Err() {
		return cause
	}
	return err
}

// resolve replaces references in call's parameters with values.
func (r *Runner) resolve(caller Caller, call grammar.Invoke, prev []Result) (grammar.Invoke, error) {
	out := call
	out.Params = make([]grammar.Param, len(call.Params))
	for i, p := range call.Params {
		v, err := r.resolveValue(caller, p.Value, prev)
		if err != nil {
			return call, posError(p.Value.Pos, fmt.Errorf("%s: parameter %s: %w", call.Tool(), grammar.QuoteShort(p.Key), err))
		}
		out.Params[i] = grammar.Param{Key: p.Key, Value: v, Pos: p.Pos}
	}
	return out, nil
}

func (r *Runner) resolveValue(caller Caller, v grammar.Value, prev []Result) (grammar.Value, error) {
	switch v.Kind {
	case grammar.Array:
		items := make([]grammar.Value, len(v.Items))
		for i, it := range v.Items {
			rv, err := r.resolveValue(caller, it, prev)
			if err != nil {
				return v, err
			}
			items[i] = rv
		}
		v.Items = items
		return v, nil
	case grammar.Ref:
	default:
		return v, nil
	}
	name := v.Ref.Name
	var found grammar.Value
	var ok bool
	var known []string
	switch v.Ref.Scope {
	case "prev":
		if len(prev) == 0 {
			return v, fmt.Errorf("$prev.%s: there is no previous result (use -> to chain)", name)
		}
		// After a parallel block, the first result (in written order) that has the field wins.
		for _, res := range prev {
			if found, ok = res.Fields[name]; ok {
				break
			}
			for k := range res.Fields {
				known = append(known, k)
			}
		}
	case "ctx":
		ctxVals := map[string]grammar.Value{
			"channel": grammar.StringValue(caller.Channel),
			"user":    grammar.StringValue(caller.User),
			"time":    grammar.StringValue(time.Now().UTC().Format(time.RFC3339)),
		}
		found, ok = ctxVals[name]
		known = []string{"channel", "user", "time"}
	case "self":
		found, ok = r.Self[name]
		for k := range r.Self {
			known = append(known, k)
		}
	case "env":
		var s string
		if s, ok = r.Env[name]; ok {
			found = grammar.StringValue(s)
		} else {
			return v, fmt.Errorf("$env.%s is not readable: only variables listed under env: in the config are", name)
		}
	default:
		return v, fmt.Errorf("unknown reference scope $%s", v.Ref.Scope)
	}
	if !ok {
		sort.Strings(known)
		return v, fmt.Errorf("$%s.%s does not exist (there is: %s)", v.Ref.Scope, name, strings.Join(dedupe(known), ", "))
	}
	found.Pos = v.Pos
	return found, nil
}

func dedupe(s []string) []string {
	out := s[:0]
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// posError prefixes err with a source position when one is known.
func posError(pos grammar.Pos, err error) error {
	if pos.Line == 0 {
		return err
	}
	return fmt.Errorf("line %d, column %d: %w", pos.Line, pos.Column, err)
}
