package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawedge/clawedge/agent/agenttest"
	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/internal/rigtest"
	"github.com/clawedge/clawedge/llm"
	"github.com/clawedge/clawedge/policy"
	"github.com/clawedge/clawedge/store"
	"github.com/clawedge/clawedge/tools"
)

const (
	console = "console/stdin"
	user    = "pi"
)

type env struct {
	t      testing.TB
	dir    string
	rig    *rigtest.Rig
	st     *store.Store
	reg    *tools.Registry
	runner *tools.Runner
	auth   *policy.Authorizer
	p      *agenttest.Provider
	ag     *Agent
	opt    Options
}

func newEnv(t testing.TB, opt Options, steps ...agenttest.Step) *env {
	t.Helper()
	// The one call path decides, with the turn's policy, as in the daemon.
	rig := rigtest.New(t, rigtest.Options{Policy: opt.Policy, ApprovalTimeout: opt.Limits.withDefaults().ApprovalTimeout, Pins: []hal.PinConfig{
		{Name: "led", GPIO: 17, Mode: hal.ModeOut},
		{Name: "relay", GPIO: 22, Mode: hal.ModeOut, ActiveLow: true},
		{Name: "button", GPIO: 27, Mode: hal.ModeIn, Pull: hal.PullUp, Edge: hal.EdgeBoth},
	}})
	e := &env{t: t, rig: rig, dir: rig.Dir, st: rig.Store, reg: rig.Registry, auth: rig.Auth, runner: rig.Runner}
	var err error
	opt.Approvals = e.auth.Approvals
	e.p = agenttest.New(steps...)
	if opt.Provider == nil {
		opt.Provider = e.p
	}
	opt.Runner, opt.Store = e.runner, e.st
	e.opt = opt
	if e.ag, err = New(opt); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *env) level(pin string) hal.Level { return e.rig.Level(e.t, pin) }

func (e *env) turn(text string) Out {
	e.t.Helper()
	out, err := e.ag.Turn(context.Background(), In{Channel: console, User: user, Text: text})
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

// audited returns the audit trail's commands.
func (e *env) audited() []store.AuditEntry {
	e.t.Helper()
	es, err := e.st.Tail(100)
	if err != nil {
		e.t.Fatal(err)
	}
	return es
}

func qwenCall(name, args string) string {
	return fmt.Sprintf("<tool_call>\n{\"name\": %q, \"arguments\": %s}\n</tool_call>", name, args)
}

func TestTurnCallsGPIOWriteThenAnswers(t *testing.T) {
	e := newEnv(t, Options{},
		agenttest.Step{Text: "Switching it on.\n" + qwenCall("gpio/write", `{"pin": "led", "value": 1}`), Chunk: 5,
			Usage: llm.Usage{PromptTokens: 300, CompletionTokens: 20}},
		agenttest.Step{Text: "The LED is on now.", Chunk: 4, Usage: llm.Usage{PromptTokens: 400, CompletionTokens: 5}})
	var emitted strings.Builder
	out, err := e.ag.Turn(context.Background(), In{Channel: console, User: user, Text: "turn on the led",
		Emit: func(s string) { emitted.WriteString(s) }})
	if err != nil {
		t.Fatal(err)
	}
	if e.level("led") != hal.High {
		t.Fatal("the LED is not on")
	}
	if out.State != Idle || out.Stop != "answered" {
		t.Errorf("state %s stop %s", out.State, out.Stop)
	}
	if want := "Switching it on.\nThe LED is on now."; out.Text != want {
		t.Errorf("answer %q, want %q", out.Text, want)
	}
	if strings.TrimSpace(emitted.String()) != out.Text {
		t.Errorf("streamed %q, answer %q", emitted.String(), out.Text)
	}
	// The call was audited: intent then outcome.
	es := e.audited()
	if len(es) != 1 || es[0].Command != `@gpio/write{pin="led";value=1}` || !es[0].Done || !es[0].OK {
		t.Fatalf("audit: %v", es)
	}
	// The second request carries the call and its result.
	reqs := e.p.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model calls", len(reqs))
	}
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	if last.Role != llm.RoleTool || !strings.HasPrefix(last.Content, "ok: ") || last.Name != "gpio/write" {
		t.Errorf("tool result message: %+v", last)
	}
	// Both model steps were recorded, with the raw output.
	steps, err := e.st.StepsSince(0, 0)
	if err != nil || len(steps) != 2 {
		t.Fatalf("steps %d %v", len(steps), err)
	}
	var sr stepRecord
	json.Unmarshal(steps[0].Data, &sr)
	if !strings.Contains(sr.Out, "<tool_call>") || sr.InSHA256 == "" || sr.InBytes == 0 || len(sr.InNew) != 1 || sr.InNew[0].Content != "turn on the led" {
		t.Errorf("step record: %+v", sr)
	}
	// The session is saved idle with the conversation.
	stRec, hist, found, err := e.st.LoadSession(Key(console, user))
	if err != nil || !found {
		t.Fatal(found, err)
	}
	var r record
	var h history
	json.Unmarshal(stRec, &r)
	json.Unmarshal(hist, &h)
	if r.State != Idle || r.Turns != 1 || r.Tokens != 725 || len(r.Turn.Calls) != 1 || r.Turn.Calls[0].Status != callOK || r.Turn.Calls[0].Audit != es[0].ID {
		t.Errorf("record: %+v turn %+v", r, r.Turn)
	}
	if len(h.Messages) != 4 || h.Messages[2].Role != llm.RoleTool || !strings.HasPrefix(h.Messages[2].Content, "[seen] ") {
		t.Errorf("history: %+v", h.Messages)
	}
}

func TestRemoteToolCalls(t *testing.T) {
	e := newEnv(t, Options{},
		agenttest.Step{Calls: []llm.ToolCall{{ID: "t1", Name: "gpio/write", Arguments: json.RawMessage(`{"pin":"relay","value":1}`)}}},
		agenttest.Step{Text: "Relay on."})
	out := e.turn("relay on please")
	if e.level("relay") != hal.High || out.Text != "Relay on." {
		t.Fatalf("relay %v, answer %q", e.level("relay"), out.Text)
	}
	msgs := e.p.Requests()[1].Messages
	tm := msgs[len(msgs)-1]
	if tm.ToolCallID != "t1" || msgs[len(msgs)-2].ToolCalls[0].ID != "t1" {
		t.Errorf("tool call ids not kept: %+v / %+v", msgs[len(msgs)-2], tm)
	}
}

func TestStepAuditBeforeEffect(t *testing.T) {
	e := newEnv(t, Options{}, agenttest.Step{Text: qwenCall("gpio/write", `{"pin": "led", "value": 1}`)}, agenttest.Step{Text: "ok"})
	var stepsAtIntent int
	e.ag.hook = func(p string) {
		if p == "before-intent" {
			s, _ := e.st.StepsSince(0, 0)
			stepsAtIntent = len(s)
		}
	}
	e.turn("led on")
	if stepsAtIntent != 1 {
		t.Fatalf("when the intent was written, %d model steps were recorded; want the step that proposed the call", stepsAtIntent)
	}
}

func TestToolErrorThenRecovery(t *testing.T) {
	e := newEnv(t, Options{},
		agenttest.Step{Text: qwenCall("gpio/write", `{"pin": "lamp", "value": 1}`)},
		agenttest.Step{Text: qwenCall("gpio/wait", `{"pin": "button", "edge": "rising", "timeout_ms": 1}`)},
		agenttest.Step{Text: qwenCall("gpio/write", `{"pin": "led", "value": 1}`)},
		agenttest.Step{Text: "Done: the led is on."})
	out := e.turn("switch the lamp on")
	if e.level("led") != hal.High || out.Stop != "answered" || out.Text != "Done: the led is on." {
		t.Fatalf("led %v out %+v", e.level("led"), out)
	}
	reqs := e.p.Requests()
	bad := reqs[1].Messages[len(reqs[1].Messages)-1].Content
	if !strings.HasPrefix(bad, "error: ") || !strings.Contains(bad, `"pin"`) || !strings.Contains(bad, "not run") {
		t.Errorf("invalid-argument feedback: %q", bad)
	}
	failed := reqs[2].Messages[len(reqs[2].Messages)-1].Content
	if !strings.HasPrefix(failed, "error: gpio/wait") {
		t.Errorf("tool-error feedback: %q", failed)
	}
	// The invalid call never reached the audit trail (nothing ran); the others did.
	es := e.audited()
	if len(es) != 2 || es[0].OK || !es[1].OK {
		t.Errorf("audit: %v", es)
	}
	if got := []string{out.Calls[0].Status, out.Calls[1].Status, out.Calls[2].Status}; strings.Join(got, ",") != "refused,failed,ok" {
		t.Errorf("call statuses %v", got)
	}
}

func TestUnreadableCallIsRepaired(t *testing.T) {
	e := newEnv(t, Options{},
		agenttest.Step{Text: "<tool_call>\n{\"name\": \"gpio/write\", \"arguments\": {\"pin\": \"led\" \"value\": 1}}\n</tool_call>"},
		agenttest.Step{Text: qwenCall("gpio/write", `{"pin": "led", "value": 1}`)},
		agenttest.Step{Text: "On."})
	out := e.turn("led on")
	if e.level("led") != hal.High || out.Text != "On." {
		t.Fatalf("led %v out %+v", e.level("led"), out)
	}
	msgs := e.p.Requests()[1].Messages
	if m := msgs[len(msgs)-1]; m.Role != llm.RoleUser || !strings.Contains(m.Content, "<tool_call>") {
		t.Errorf("repair message: %+v", m)
	}
}

func TestRepeatedCallStopsWithAnswer(t *testing.T) {
	e := newEnv(t, Options{})
	e.p.Last = &agenttest.Step{Text: qwenCall("gpio/toggle", `{"pin": "led"}`)}
	out := e.turn("blink")
	if out.State != Halted || out.Stop != "repeat" {
		t.Fatalf("state %s stop %s", out.State, out.Stop)
	}
	if !strings.Contains(out.Text, "kept repeating the same call") || !strings.Contains(out.Text, "What was done:") ||
		!strings.Contains(out.Text, `@gpio/toggle{pin="led"}: ok`) {
		t.Errorf("answer:\n%s", out.Text)
	}
	if n := len(e.audited()); n != DefaultLimits.MaxRepeats {
		t.Errorf("the call ran %d times, want %d", n, DefaultLimits.MaxRepeats)
	}
	if len(e.p.Requests()) != DefaultLimits.MaxRepeats+1 {
		t.Errorf("%d model calls", len(e.p.Requests()))
	}
}

func TestBudgets(t *testing.T) {
	read := agenttest.Step{Text: qwenCall("gpio/read", `{"pin": "led"}`), Usage: llm.Usage{PromptTokens: 1000, CompletionTokens: 10}, Cost: 0.02}
	for _, tc := range []struct {
		name  string
		lim   Limits
		last  agenttest.Step
		stop  string
		state State
		says  string
		steps int
	}{
		{"iterations", Limits{MaxIterations: 3, MaxRepeats: 100}, read, "iterations", Halted, "limit of 3 tool steps", 4},
		{"tokens", Limits{MaxTokens: 1500, MaxRepeats: 100}, read, "tokens", Halted, "token budget of 1500", 2},
		{"cost", Limits{MaxCost: 0.03, MaxRepeats: 100}, read, "cost", Halted, "cost budget of 0.03", 2},
		{"time", Limits{MaxTime: 150 * time.Millisecond}, agenttest.Step{Text: "late", Delay: 5 * time.Second}, "time", Timeout, "time limit of 150ms", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, Options{Limits: tc.lim})
			last := tc.last
			e.p.Last = &last
			start := time.Now()
			out := e.turn("read the led, again and again")
			if out.Stop != tc.stop || out.State != tc.state {
				t.Fatalf("stop %s state %s:\n%s", out.Stop, out.State, out.Text)
			}
			if !strings.Contains(out.Text, "I stopped before finishing: ") || !strings.Contains(out.Text, tc.says) {
				t.Errorf("answer:\n%s", out.Text)
			}
			if n := len(e.p.Requests()); n != tc.steps {
				t.Errorf("%d model calls, want %d", n, tc.steps)
			}
			if tc.stop != "time" && !strings.Contains(out.Text, `@gpio/read{pin="led"}: ok`) {
				t.Errorf("the answer does not say what was done:\n%s", out.Text)
			}
			if tc.stop == "time" && (time.Since(start) > 2*time.Second || !strings.Contains(out.Text, "Nothing was run.")) {
				t.Errorf("took %s:\n%s", time.Since(start), out.Text)
			}
			// The last tool step's request told the model to answer without tools.
			if tc.stop == "iterations" {
				reqs := e.p.Requests()
				m := reqs[len(reqs)-1].Messages
				if !strings.Contains(m[len(m)-1].Content, "Do not call tools") {
					t.Errorf("last request: %+v", m[len(m)-1])
				}
			}
		})
	}
}

func TestModelErrorAnswers(t *testing.T) {
	e := newEnv(t, Options{}, agenttest.Step{Err: fmt.Errorf("local: %w", llm.ErrUnavailable)})
	out := e.turn("hello")
	if out.State != Error || !strings.Contains(out.Text, "could not get an answer from the model") || !strings.Contains(out.Text, "Nothing was run.") {
		t.Fatalf("%+v", out)
	}
	// The next turn starts normally.
	e.p.Add(agenttest.Step{Text: "Hello!"})
	if out := e.turn("hello"); out.State != Idle || out.Text != "Hello!" {
		t.Fatalf("%+v", out)
	}
}

func TestWaitingInput(t *testing.T) {
	e := newEnv(t, Options{}, agenttest.Step{Text: "Which pin, the led or the relay?"})
	if out := e.turn("switch it on"); out.State != WaitingInput {
		t.Fatalf("%+v", out)
	}
}

// approvalEnv runs a turn whose call needs approval and returns when it waits.
func approvalEnv(t *testing.T, lim Limits) (*env, chan Out, policy.Pending, *syncBuf) {
	e := newEnv(t, Options{Policy: &policy.Policy{Tools: map[string]policy.Action{"gpio/write": policy.Ask}}, Limits: lim},
		agenttest.Step{Text: qwenCall("gpio/write", `{"pin": "relay", "value": 1}`)},
		agenttest.Step{Func: func(req llm.Request) agenttest.Step {
			return agenttest.Step{Text: "Result: " + req.Messages[len(req.Messages)-1].Content}
		}})
	done := make(chan Out, 1)
	buf := &syncBuf{}
	go func() {
		out, err := e.ag.Turn(context.Background(), In{Channel: console, User: user, Text: "open the door", Emit: buf.write})
		if err != nil {
			t.Error(err)
		}
		done <- out
	}()
	var p policy.Pending
	deadline := time.Now().Add(5 * time.Second)
	for {
		if l := e.auth.List(); len(l) == 1 {
			p = l[0]
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no approval request")
		}
		time.Sleep(2 * time.Millisecond)
	}
	return e, done, p, buf
}

type syncBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuf) write(x string) { s.mu.Lock(); s.b.WriteString(x); s.mu.Unlock() }
func (s *syncBuf) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

func TestApprovalApprove(t *testing.T) {
	e, done, p, buf := approvalEnv(t, Limits{})
	if p.Call != `@gpio/write{pin="relay";value=1}` || p.Channel != console {
		t.Errorf("pending %+v", p)
	}
	// NEEDS_APPROVAL is on disk, with the request's id, before anyone can answer.
	st, _, _, _ := e.st.LoadSession(Key(console, user))
	var r record
	json.Unmarshal(st, &r)
	if r.State != NeedsApproval || r.Turn.Calls[0].Approval != p.ID {
		t.Errorf("stored %s %+v", r.State, r.Turn.Calls)
	}
	// Status does not wait for the turn, and sees it waiting.
	if st, err := e.ag.Status(); err != nil || len(st.Sessions) != 1 || st.Sessions[0].State != NeedsApproval || len(st.Approvals) != 1 {
		t.Errorf("status while waiting: %+v %v", st, err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for !strings.Contains(buf.String(), "approve "+p.ID) && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if !strings.Contains(buf.String(), "Approval needed ["+p.ID+"]") {
		t.Errorf("the prompt was not shown: %q", buf.String())
	}
	// Someone on Telegram cannot decide a console request.
	if _, err := e.auth.Decide(p.ID, true, tools.Caller{Channel: "telegram", User: "telegram:9", Actor: tools.Person}); !errors.Is(err, policy.ErrNotYours) {
		t.Errorf("decided from another chat: %v", err)
	}
	if _, err := e.auth.Decide(p.ID, true, tools.Caller{Channel: "console/ttyS0", User: "console", Actor: tools.Person}); err != nil {
		t.Fatal(err)
	}
	out := <-done
	if e.level("relay") != hal.High {
		t.Fatal("the approved call did not run")
	}
	if !strings.Contains(out.Text, "Result: ok: ") || !strings.Contains(out.Text, "was approved") || out.State != Idle {
		t.Errorf("%+v", out)
	}
	if _, err := e.auth.Decide(p.ID, true, tools.Caller{Channel: console, User: user, Actor: tools.Person}); !errors.Is(err, policy.ErrNoApproval) {
		t.Errorf("decided twice: %v", err)
	}
}

func TestApprovalDeny(t *testing.T) {
	e, done, p, _ := approvalEnv(t, Limits{})
	if _, err := e.auth.Decide(p.ID, false, tools.Caller{Channel: console, User: user, Actor: tools.Person}); err != nil {
		t.Fatal(err)
	}
	out := <-done
	if e.level("relay") != hal.Low {
		t.Fatal("a denied call ran")
	}
	// The trail says who tried what, and that it was refused, not run.
	for _, en := range e.audited() {
		if strings.Contains(en.Command, "gpio/write") && (en.OK || !strings.HasPrefix(en.Detail, "refused: a person denied")) {
			t.Fatalf("a denied call is in the audit trail as not refused: %v", en)
		}
	}
	if !strings.Contains(out.Text, "Result: error: the user denied") || !strings.Contains(out.Text, "was denied, so it was not run") {
		t.Errorf("%s", out.Text)
	}
	if out.Calls[0].Status != callDenied {
		t.Errorf("%+v", out.Calls)
	}
}

func TestApprovalTimeout(t *testing.T) {
	e, done, _, _ := approvalEnv(t, Limits{ApprovalTimeout: 50 * time.Millisecond})
	out := <-done
	if e.level("relay") != hal.Low {
		t.Fatal("an expired call ran")
	}
	if !strings.Contains(out.Text, "nobody approved") || !strings.Contains(out.Text, "not approved within 50ms") || out.State != Idle {
		t.Errorf("%+v", out)
	}
	if len(e.auth.List()) != 0 {
		t.Error("the request is still listed")
	}
}

type askerFunc func(ctx context.Context, p policy.Pending) (policy.Decision, error)

func (f askerFunc) Ask(ctx context.Context, p policy.Pending) (policy.Decision, error) {
	return f(ctx, p)
}

func TestAskerDecides(t *testing.T) {
	asked := make(chan policy.Pending, 1)
	e := newEnv(t, Options{
		Policy: &policy.Policy{Channels: map[string]map[string]policy.Action{"telegram": {"gpio/*": policy.Ask}}},
	}, agenttest.Step{Text: qwenCall("gpio/write", `{"pin": "led", "value": 1}`)}, agenttest.Step{Text: "done"})
	asker := askerFunc(func(ctx context.Context, p policy.Pending) (policy.Decision, error) {
		asked <- p
		return policy.Approved, nil
	})
	buf := &syncBuf{}
	out, _ := e.ag.Turn(context.Background(), In{Channel: "telegram", User: "telegram:1", Text: "led", Asker: asker, Emit: buf.write})
	p := <-asked
	if e.level("led") != hal.High || p.User != "telegram:1" || out.Text != "done\n(@gpio/write{pin=\"led\";value=1} was approved.)" {
		t.Fatalf("led %v, %+v, %q", e.level("led"), p, out.Text)
	}
	// The door asked with its own means: no line telling how to type an answer.
	if strings.Contains(buf.String(), "Approval needed") {
		t.Errorf("streamed: %q", buf.String())
	}
	// The console channel has no rule: allowed without asking.
	e.p.Add(agenttest.Step{Text: qwenCall("gpio/write", `{"pin": "led", "value": 0}`)}, agenttest.Step{Text: "off"})
	if out := e.turn("led off"); e.level("led") != hal.Low || len(asked) != 0 || out.Text != "off" {
		t.Fatalf("%+v", out)
	}
}

func TestPolicyDenyHidesAndRefuses(t *testing.T) {
	e := newEnv(t, Options{Policy: &policy.Policy{Tools: map[string]policy.Action{"gpio/write": policy.Deny}}},
		agenttest.Step{Text: qwenCall("gpio/write", `{"pin": "led", "value": 1}`)},
		agenttest.Step{Text: "I may not."})
	out := e.turn("led on")
	for _, d := range e.p.Requests()[0].Tools {
		if d.Name == "gpio/write" {
			t.Error("a denied tool was offered")
		}
	}
	if e.level("led") != hal.Low || len(e.audited()) != 0 {
		t.Fatal("a denied call ran")
	}
	// Issue 11 item 17: the person is told what was refused and by which rule.
	want := `I may not.
(@gpio/write{pin="led";value=1} was refused: the policy does not allow it on this channel (policy.tools "gpio/write": deny), so it was not run.)`
	if !strings.Contains(e.p.Requests()[1].Messages[len(e.p.Requests()[1].Messages)-1].Content, "not allowed on this channel") || out.Text != want {
		t.Errorf("%+v", out)
	}
}

// Issue 11 item 17: a model that keeps proposing a refused call is stopped by
// max_repeats, as one that keeps running a call is; the answer says what and why.
func TestRefusedCallsCountAgainstMaxRepeats(t *testing.T) {
	for _, pol := range []*policy.Policy{
		{Tools: map[string]policy.Action{"gpio/write": policy.Deny}},                                               // not offered
		{Channels: map[string]map[string]policy.Action{"console": {"gpio/*": policy.Deny}}, Default: policy.Allow}, // denied by a channel rule
	} {
		e := newEnv(t, Options{Policy: pol})
		e.p.Last = &agenttest.Step{Text: qwenCall("gpio/write", `{"pin": "led", "value": 1}`)}
		out := e.turn("led on")
		if out.State != Halted || out.Stop != "repeat" || len(e.p.Requests()) != DefaultLimits.MaxRepeats+1 {
			t.Fatalf("state %s stop %s after %d model calls:\n%s", out.State, out.Stop, len(e.p.Requests()), out.Text)
		}
		if !strings.Contains(out.Text, "kept repeating the same call") || strings.Count(out.Text, "was refused: the policy does not allow it") != 1 ||
			!strings.Contains(out.Text, "deny)") {
			t.Errorf("answer:\n%s", out.Text)
		}
		if e.level("led") != hal.Low || len(e.audited()) != 0 {
			t.Fatal("a refused call ran")
		}
	}
}

func TestTransitions(t *testing.T) {
	ok := [][2]State{{Idle, Planning}, {Planning, Executing}, {Executing, NeedsApproval}, {NeedsApproval, WaitingTool},
		{WaitingTool, Executing}, {Executing, Reflecting}, {Reflecting, Planning}, {Planning, Idle}, {NeedsApproval, Denied},
		{Denied, Executing}, {NeedsApproval, Timeout}, {Timeout, Reflecting}, {Planning, Halted}, {WaitingTool, Error},
		{Halted, Planning}, {Error, Planning}, {WaitingInput, Planning}, {Planning, WaitingInput},
		{WaitingTool, NeedsApproval}, {WaitingTool, Denied}} // the call path decides once the call is handed to it
	for _, tr := range ok {
		if !CanTransition(tr[0], tr[1]) {
			t.Errorf("%s -> %s refused", tr[0], tr[1])
		}
	}
	bad := [][2]State{{Idle, Executing}, {Idle, WaitingTool}, {Planning, WaitingTool}, {Reflecting, Idle + "x"},
		{Idle, Halted}, {Denied, WaitingTool}, {Executing, Planning}, {Planning, Planning}}
	for _, tr := range bad {
		if CanTransition(tr[0], tr[1]) {
			t.Errorf("%s -> %s allowed", tr[0], tr[1])
		}
	}
}

// bigTool returns a long result, for the output cap and compaction.
type bigTool struct{ n int }

func (b bigTool) Spec() grammar.ToolSpec {
	return grammar.ToolSpec{Name: "test/big", Doc: "Return a long text."}
}
func (b bigTool) Run(context.Context, grammar.Args) (tools.Result, error) {
	return tools.Result{Text: strings.Repeat("0123456789", b.n/10)}, nil
}

func TestToolOutputCapAndCompaction(t *testing.T) {
	e := newEnv(t, Options{Compact: true, Window: 1800, Limits: Limits{ToolOutput: map[string]int{"test/*": 300}, ReplyTokens: 100}})
	if err := e.reg.Register(bigTool{n: 20000}); err != nil {
		t.Fatal(err)
	}
	e.p.Add(agenttest.Step{Text: qwenCall("test/big", `{}`)}, agenttest.Step{Text: "It is long."})
	e.turn("get the big text")
	reqs := e.p.Requests()
	res := reqs[1].Messages[len(reqs[1].Messages)-1].Content
	if len(res) > 300 || !strings.Contains(res, " …[truncated, ") {
		t.Fatalf("tool result of %d bytes: %q", len(res), res[:min(len(res), 80)])
	}
	// Several long turns later, the oldest are summarized and the prompt fits.
	for i := range 8 {
		e.p.Add(agenttest.Step{Text: fmt.Sprintf("Answer %d: %s", i, strings.Repeat("words ", 60))})
		e.turn(fmt.Sprintf("question %d %s", i, strings.Repeat("more ", 60)))
	}
	reqs = e.p.Requests()
	last := reqs[len(reqs)-1]
	if est := EstimateTokens(last.Messages, last.Tools); est > 1800-100 {
		t.Errorf("the last prompt is %d tokens, window 1800 - reply 100", est)
	}
	// The summary comes after the system prompt, which stays the same (the runner's
	// saved state holds it), before the oldest turn kept.
	if strings.Contains(last.Messages[0].Content, "Earlier in this conversation") ||
		!strings.HasPrefix(last.Messages[1].Content, "Earlier in this conversation (summarized):\n- asked: ") {
		t.Errorf("system prompt: %s\nfirst message: %s", last.Messages[0].Content, last.Messages[1].Content)
	}
}

func TestLocalPromptSmall(t *testing.T) {
	// The local tier: at most 10 tools, with a full board's tools registered.
	e := newEnv(t, Options{Compact: true}, agenttest.Step{Text: "hi"})
	for i := range 8 {
		e.reg.Register(bigToolN{fmt.Sprintf("extra/t%d", i)})
	}
	e.turn("hello")
	req := e.p.Requests()[0]
	if len(req.Tools) != 10 {
		t.Errorf("%d tools offered", len(req.Tools))
	}
	sys := []llm.Message{req.Messages[0]}
	if n := EstimateTokens(sys, req.Tools); n > 1500 {
		t.Errorf("system prompt with 10 tools: ~%d tokens, want <= 1500", n)
	}
	t.Logf("local system prompt with %d tools: ~%d tokens (estimate)", len(req.Tools), EstimateTokens(sys, req.Tools))
	// A message about the serial port brings the serial tools in.
	got := selectTools(append(e.reg.Specs(), grammar.ToolSpec{Name: "serial/send", Doc: "Send text to a serial port."}),
		func(string) bool { return true }, "send PING to the arduino serial port", 10)
	found := false
	for _, s := range got {
		found = found || s.Name == "serial/send"
	}
	if !found {
		t.Errorf("serial/send not selected: %v", got)
	}
}

type bigToolN struct{ name string }

func (b bigToolN) Spec() grammar.ToolSpec {
	return grammar.ToolSpec{Name: b.name, Doc: "An extra tool with a description of moderate length for the prompt.",
		Params: []grammar.ArgSpec{{Name: "x", Doc: "a parameter", Type: grammar.TypeInteger, Min: tools.Float(0), Max: tools.Float(9)}}}
}
func (b bigToolN) Run(context.Context, grammar.Args) (tools.Result, error) {
	return tools.Result{}, nil
}

func TestSessionResumedAfterRestart(t *testing.T) {
	e := newEnv(t, Options{}, agenttest.Step{Text: "Nice to meet you, Ann."})
	e.turn("my name is Ann")
	// A new agent over the same store, as after a restart.
	p := agenttest.New(agenttest.Step{Text: "You are Ann."})
	opt := e.opt
	opt.Provider = p
	ag, err := New(opt)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := ag.Recover(); err != nil || len(n) != 0 {
		t.Fatal(n, err)
	}
	out, _ := ag.Turn(context.Background(), In{Channel: console, User: user, Text: "what is my name?"})
	if out.Text != "You are Ann." {
		t.Fatal(out.Text)
	}
	msgs := p.Requests()[0].Messages
	if len(msgs) != 4 || msgs[1].Content != "my name is Ann" || msgs[2].Content != "Nice to meet you, Ann." {
		t.Errorf("history not carried over: %+v", msgs)
	}
	st, err := ag.Status()
	if err != nil || len(st.Sessions) != 1 || st.Sessions[0].Turns != 2 || st.Models[0].Calls != 1 {
		t.Errorf("%+v %v", st, err)
	}
}

func TestInterruptedBeforeAnyCall(t *testing.T) {
	e := newEnv(t, Options{})
	// A turn that was in PLANNING when the process died.
	s, _ := e.ag.session(Key("telegram", "telegram:7"))
	s.rec = record{Channel: "telegram", User: "telegram:7", State: Planning, Turns: 1, Turn: &turnRecord{N: 1, Text: "status please"}}
	if err := e.ag.save(s, true); err != nil {
		t.Fatal(err)
	}
	for _, sameText := range []bool{true, false} {
		ag, _ := New(e.opt)
		notices, err := ag.Recover()
		if err != nil || len(notices) != 1 || !strings.Contains(notices[0], "before any further call started") {
			t.Fatal(notices, err)
		}
		text := "status please"
		if !sameText {
			text = "something else"
		}
		e.p.Add(agenttest.Step{Text: "fine"})
		out, _ := ag.Turn(context.Background(), In{Channel: "telegram", User: "telegram:7", Text: text})
		if sameText && out.Text != "fine" {
			t.Errorf("the redelivered message was not simply run again: %q", out.Text)
		}
		if !sameText && !strings.HasPrefix(out.Text, "Note: clawedge restarted while handling your previous request (\"status please\")") {
			t.Errorf("no notice: %q", out.Text)
		}
		// Put it back mid-turn for the second round.
		s, _ := ag.session(Key("telegram", "telegram:7"))
		s.rec.State, s.rec.Turn = Planning, &turnRecord{N: 1, Text: "status please"}
		ag.save(s, false)
	}
}

func TestRedeliveringChannelNotToldTwice(t *testing.T) {
	e := newEnv(t, Options{Redelivers: []string{"telegram"}})
	s, _ := e.ag.session(Key("telegram", "telegram:7"))
	s.rec = record{Channel: "telegram", User: "telegram:7", State: WaitingTool, Turns: 1,
		Turn: &turnRecord{N: 1, Text: "open", Calls: []callRecord{{Call: `@gpio/write{pin="relay";value=1}`, Status: callStarted}}}}
	e.ag.save(s, true)
	ag, _ := New(e.opt)
	notices, err := ag.Recover()
	if err != nil || len(notices) != 1 || !strings.Contains(notices[0], "interrupted after starting @gpio/write") {
		t.Fatal(notices, err)
	}
	e.p.Add(agenttest.Step{Text: "fine"})
	if out, _ := ag.Turn(context.Background(), In{Channel: "telegram", User: "telegram:7", Text: "status?"}); out.Text != "fine" {
		t.Errorf("told again: %q", out.Text)
	}
}

func TestCommandOfCall(t *testing.T) {
	// The command form recorded and audited is the canonical command language.
	params, _ := grammar.ParamsFromJSON(json.RawMessage(`{"pin":"led","value":1}`))
	inv := grammar.Invoke{Namespace: "gpio", Name: "write", Params: params}
	if s := (&grammar.Command{Stages: []grammar.Stage{{Calls: []grammar.Invoke{inv}}}}).String(); s != `@gpio/write{pin="led";value=1}` {
		t.Fatal(s)
	}
}

func TestHugeMessagesKeepTheSessionSavable(t *testing.T) {
	e := newEnv(t, Options{})
	huge := strings.Repeat("x", 60<<10)
	for range 8 {
		e.p.Add(agenttest.Step{Text: "ok"})
		e.turn(huge)
	}
	_, h, _, err := e.st.LoadSession(Key(console, user))
	if err != nil || len(h) > 64<<10 {
		t.Fatalf("history of %d bytes, %v", len(h), err)
	}
	var hist history
	json.Unmarshal(h, &hist)
	if n := len(hist.Messages); n < 2 || len(hist.Messages[0].Content) > maxHistoryMessage {
		t.Errorf("%d messages, first %d bytes", n, len(hist.Messages[0].Content))
	}
	// Every prompt fitted the window, the long message cut.
	for _, r := range e.p.Requests() {
		if n := EstimateTokens(r.Messages, r.Tools); n > 8192-DefaultLimits.ReplyTokens {
			t.Errorf("a prompt of %d tokens", n)
		}
	}
}

func TestIdleSessionsEvicted(t *testing.T) {
	defer func(n int) { MaxLiveSessions = n }(MaxLiveSessions)
	MaxLiveSessions = 4
	e := newEnv(t, Options{})
	for i := range 10 {
		e.p.Add(agenttest.Step{Text: fmt.Sprint("hello ", i)})
		e.ag.Turn(context.Background(), In{Channel: "telegram", User: fmt.Sprint("telegram:", i), Text: fmt.Sprint("I am ", i)})
	}
	e.ag.mu.Lock()
	live := len(e.ag.byKey)
	e.ag.mu.Unlock()
	if live > MaxLiveSessions {
		t.Errorf("%d sessions in memory, max %d", live, MaxLiveSessions)
	}
	// An evicted chat comes back from the store with its history.
	e.p.Add(agenttest.Step{Text: "you are 0"})
	e.ag.Turn(context.Background(), In{Channel: "telegram", User: "telegram:0", Text: "who am I?"})
	reqs := e.p.Requests()
	if m := reqs[len(reqs)-1].Messages; len(m) != 4 || m[1].Content != "I am 0" {
		t.Errorf("history lost: %+v", m)
	}
	if st, _ := e.ag.Status(); len(st.Sessions) != 10 {
		t.Errorf("status shows %d sessions, want 10", len(st.Sessions))
	}
}

// A message's audit scope (Telegram's inbox item) records its calls, passed as a
// field of the message: the runner is shared, never copied per message.
func TestMessageAuditScope(t *testing.T) {
	e := newEnv(t, Options{}, agenttest.Step{Text: qwenCall("gpio/write", `{"pin": "led", "value": 1}`)}, agenttest.Step{Text: "done"})
	scope := &memAudit{n: 40}
	out, err := e.ag.Turn(context.Background(), In{Channel: "telegram", User: "telegram:1", Text: "led on", Audit: scope})
	if err != nil || out.Stop != "answered" || e.level("led") != hal.High {
		t.Fatalf("%+v %v", out, err)
	}
	if scope.n != 41 || len(e.audited()) != 0 || e.runner.Audit != e.st {
		t.Errorf("scope intents %d, runner's auditor entries %d: the call must be audited in the message's scope only", scope.n-40, len(e.audited()))
	}
	s, err := e.ag.session(Key("telegram", "telegram:1"))
	if err != nil {
		t.Fatal(err)
	}
	defer e.ag.release(s)
	if c := s.rec.Turn.Calls; len(c) != 1 || c[0].Audit != 41 {
		t.Errorf("the call's record points at audit entry %+v, want 41 (the scope's)", c)
	}
}

// boardOnlyTool changes who may act on the board (as web/pair does).
type boardOnlyTool struct{}

func (boardOnlyTool) BoardOnly() {}
func (boardOnlyTool) Spec() grammar.ToolSpec {
	return grammar.ToolSpec{Name: "web/pair", Doc: "a pairing code for a browser"}
}
func (boardOnlyTool) Run(context.Context, grammar.Args) (tools.Result, error) {
	return tools.Result{Text: "code 12345678"}, nil
}

// A tool only a person at the board or an owner may call is never offered
// to the model, whatever the rules allow: the authorizer would refuse its
// call, and its definition would only spend the window.
func TestBoardOnlyToolsAreNotOffered(t *testing.T) {
	e := newEnv(t, Options{Policy: &policy.Policy{Default: policy.Allow}}, agenttest.Step{Text: "ok"})
	if err := e.reg.Register(boardOnlyTool{}); err != nil {
		t.Fatal(err)
	}
	e.turn("pair my phone")
	var offered []string
	for _, d := range e.p.Requests()[0].Tools {
		offered = append(offered, d.Name)
	}
	if slices.Contains(offered, "web/pair") || !slices.Contains(offered, "gpio/write") {
		t.Errorf("offered: %v", offered)
	}
}
