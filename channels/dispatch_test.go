package channels

import (
	"context"
	"testing"
	"time"

	"github.com/clawedge/clawedge/policy"
	"github.com/clawedge/clawedge/tools"
)

type nopApprover struct{}

func (nopApprover) Decide(string, bool, tools.Caller) (policy.Pending, error) {
	return policy.Pending{Call: "@gpio/write{}"}, nil
}
func (nopApprover) List() []policy.Pending               { return nil }
func (nopApprover) MayDecide(string, tools.Caller) error { return nil }

type nopElevator struct{}

func (nopElevator) Elevate(string, time.Duration) (time.Time, error) { return time.Time{}, nil }

// Issue 12: ForAgent (Telegram asks it before showing "typing") says true for
// exactly the lines Respond hands to the agent: one list of console words, the
// dispatcher's, serves both (Telegram had a copy that missed approvals,
// /elevated and update, and said "status please" was a console word).
func TestForAgentIsWhatRespondDoes(t *testing.T) {
	d, _ := newDispatcher(t)
	d.Approvals, d.Elevation = nopApprover{}, nopElevator{}
	// The update words are special where the board can update (sys/update).
	if err := d.Runner.Registry.Register(anyArgs{"sys/update"}, listTool{"sys/slots", "slot A"}); err != nil {
		t.Fatal(err)
	}
	called := false
	d.Agent = agentFunc(func(context.Context, Message) (string, error) { called = true; return "hi", nil })
	for line, want := range map[string]bool{
		"":                               false,
		"  ":                             false,
		`@gpio/write{pin="led";value=1}`: false,
		`[@gpio/list{}]`:                 false,
		"help":                           false,
		"HELP gpio/write":                false,
		"?":                              false,
		" status ":                       false,
		"pins":                           false,
		"approve 7":                      false,
		"deny 7":                         false,
		"approvals":                      false,
		"/elevated 10m":                  false,
		"update https://x/u.bundle":      false,
		"update status":                  false,
		"status please":                  true,
		"approve this and that":          true,
		"update me on the door":          true,
		"turn on the light":              true,
	} {
		called = false
		d.Respond(context.Background(), Message{Channel: "test", Text: line})
		if got := d.ForAgent(line); got != want || called != want {
			t.Errorf("%q: ForAgent %v, agent called %v, want %v", line, got, called, want)
		}
	}
	d.Agent = nil
	if d.ForAgent("turn on the light") {
		t.Error("ForAgent is true with no agent (the reply is NoModelReply, no model turn)")
	}
}
