package channels

import (
	"bufio"
	"context"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/clawedge/clawedge/agent"
	"github.com/clawedge/clawedge/agent/agenttest"
	"github.com/clawedge/clawedge/llm"
	"github.com/clawedge/clawedge/policy"
)

// loopAgent is the agent loop behind the Agent interface, as cmd/clawedge wires it.
type loopAgent struct{ a *agent.Agent }

func (l loopAgent) Reply(ctx context.Context, m Message) (string, error) {
	return l.ReplyStream(ctx, m, nil)
}

func (l loopAgent) ReplyStream(ctx context.Context, m Message, emit func(string)) (string, error) {
	out, err := l.a.Turn(ctx, agent.In{Channel: m.Channel, User: m.User, Text: m.Text, Audit: m.Audit, Asker: m.Asker, Emit: emit})
	return out.Text, err
}

// askingDispatcher has an agent whose model switches the led on, a call the policy
// says to ask about.
func askingDispatcher(t *testing.T) (*Dispatcher, *ledTool, *policy.Authorizer) {
	d, led := newDispatcher(t)
	p := agenttest.New()
	p.Last = &agenttest.Step{Func: func(req llm.Request) agenttest.Step {
		last := req.Messages[len(req.Messages)-1]
		if last.Role == "tool" {
			return agenttest.Step{Text: "Result: " + last.Content}
		}
		return agenttest.Step{Text: "<tool_call>\n{\"name\": \"gpio/write\", \"arguments\": {\"pin\": \"led\", \"value\": 1}}\n</tool_call>"}
	}}
	pol := &policy.Policy{Tools: map[string]policy.Action{"gpio/write": policy.Ask}}
	auth := &policy.Authorizer{Policy: pol, Approvals: policy.NewApprovals()}
	d.Runner.Authorizer = auth
	a, err := agent.New(agent.Options{Provider: p, Runner: d.Runner, Policy: pol, Approvals: auth.Approvals})
	if err != nil {
		t.Fatal(err)
	}
	d.Agent, d.Approvals = loopAgent{a}, auth
	return d, led, auth
}

var approvalID = regexp.MustCompile(`Approval needed \[([0-9a-f]+)\]`)

func TestConsoleApprovesWhileTurnWaits(t *testing.T) {
	d, led, _ := askingDispatcher(t)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &Console{Handler: d, Channel: "console/stdin", User: "pi"}
	done := make(chan error, 1)
	go func() { done <- c.Serve(context.Background(), inR, outW); outW.Close() }()
	io.WriteString(inW, "switch the led on\n")
	out := bufio.NewReader(outR)
	var id string
	var all strings.Builder
	for id == "" {
		line, err := out.ReadString('\n')
		if err != nil {
			t.Fatalf("%v after %q", err, all.String())
		}
		all.WriteString(line)
		if m := approvalID.FindStringSubmatch(line); m != nil {
			id = m[1]
		}
	}
	if led.get() != 0 {
		t.Fatal("ran before approval")
	}
	io.WriteString(inW, "approve "+id+"\n")
	inW.Close()
	rest, _ := io.ReadAll(out)
	all.Write(rest)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if led.get() != 1 {
		t.Fatalf("not run after approval:\n%s", all.String())
	}
	for _, want := range []string{"Approved: @gpio/write{pin=\"led\";value=1}\n", "Result: ok: led = 1", "was approved.)"} {
		if !strings.Contains(all.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, all.String())
		}
	}
}

func TestDispatcherApprovals(t *testing.T) {
	d, led, a := askingDispatcher(t)
	ctx := context.Background()
	if r := d.Respond(ctx, Message{Channel: "console/stdin", Text: "approvals"}); r.Text != "No call is waiting for approval." {
		t.Errorf("%+v", r)
	}
	if r := d.Respond(ctx, Message{Channel: "console/stdin", Text: "help"}); !strings.HasPrefix(r.Text, "the help text\n") || !strings.HasSuffix(r.Text, "approve ID or deny ID decides one.") {
		t.Errorf("help does not tell how to decide a waiting call: %+v", r)
	}
	if r := d.Respond(ctx, Message{Channel: "console/stdin", Text: "deny 123456"}); !r.Failed || !strings.Contains(r.Text, "no call is waiting") {
		t.Errorf("%+v", r)
	}
	done := make(chan Response, 1)
	go func() { done <- d.Respond(ctx, Message{Channel: "telegram", User: "telegram:1", Text: "led on"}) }()
	var p policy.Pending
	for deadline := time.Now().Add(5 * time.Second); ; {
		if l := a.List(); len(l) == 1 {
			p = l[0]
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no approval request")
		}
		time.Sleep(time.Millisecond)
	}
	if r := d.Respond(ctx, Message{Channel: "console/stdin", Text: "approvals"}); !strings.Contains(r.Text, "["+p.ID+"] @gpio/write{pin=\"led\";value=1} (from telegram:1, telegram") {
		t.Errorf("%+v", r)
	}
	// Another Telegram user may not decide it; the console may.
	if r := d.Respond(ctx, Message{Channel: "telegram", User: "telegram:2", Text: "approve " + p.ID}); !r.Failed {
		t.Errorf("another user decided: %+v", r)
	}
	if r := d.Respond(ctx, Message{Channel: "console/stdin", User: "pi", Text: "deny " + p.ID}); r.Failed || !strings.HasPrefix(r.Text, "Denied: ") {
		t.Errorf("%+v", r)
	}
	r := <-done
	if led.get() != 0 || !strings.Contains(r.Text, "was denied, so it was not run") {
		t.Errorf("led %d, %+v", led.get(), r)
	}
}

func TestControlSocketStreamsAndApproves(t *testing.T) {
	d, led, _ := askingDispatcher(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := dialControl(t, serveControl(t, ctx, d), "alice")
	ids := make(chan string, 1)
	var streamed strings.Builder
	done := make(chan Response, 1)
	go func() {
		done <- c.RespondStream(ctx, Message{Text: "led on"}, func(s string) {
			streamed.WriteString(s)
			if m := approvalID.FindStringSubmatch(s); m != nil {
				ids <- m[1]
			}
		})
	}()
	var id string
	select {
	case id = <-ids:
	case <-time.After(5 * time.Second):
		t.Fatal("no approval prompt streamed")
	}
	// The same client, busy with the turn, sends the approval on a second connection.
	if r := c.Respond(ctx, Message{Text: "approve " + id}); r.Failed {
		t.Fatalf("%+v", r)
	}
	r := <-done
	if led.get() != 1 || !r.Streamed || !strings.Contains(streamed.String(), "Result: ok: led = 1") || !strings.Contains(r.Text, "Result: ok") {
		t.Fatalf("led %d, %+v, streamed %q", led.get(), r, streamed.String())
	}
	// exec's Send still gets the whole reply.
	if r, err := c.Send("approvals"); err != nil || r.Text != "No call is waiting for approval." {
		t.Errorf("%+v %v", r, err)
	}
}
