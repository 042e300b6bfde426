package channels

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/clawedge/clawedge/policy"
	"github.com/clawedge/clawedge/tools"
)

// "/elevated 10m" from an owner opens the window the elevated layer checks;
// anyone else, or a bad duration, gets an error and no window.
func TestDispatcherElevated(t *testing.T) {
	d, _ := newDispatcher(t)
	now := time.Date(2026, 11, 24, 2, 0, 0, 0, time.UTC)
	p := &policy.Policy{Elevated: []string{"group:exec"}, Owners: []string{"telegram:123"}, ExecMode: "full",
		Elevation: &policy.Elevation{Now: func() time.Time { return now }}}
	d.Elevation = p
	for _, tc := range []struct{ user, line, want string }{
		{"telegram:9", "/elevated 10m", "only an owner"},
		{"telegram:123 (@ann)", "/elevated soon", "takes a duration"},
		{"telegram:123 (@ann)", "/elevated 10m", "Elevated until 02:10:00"},
	} {
		got := d.Respond(context.Background(), Message{Channel: "telegram", User: tc.user, Text: tc.line})
		if !strings.Contains(got.Text, tc.want) {
			t.Errorf("%s %q: %q, want %q", tc.user, tc.line, got.Text, tc.want)
		}
	}
	// Inside the window the elevated layer allows it; sys/exec still asks, as
	// no rule names it exactly (a risky tool).
	if a, why := p.Check(tools.Caller{Channel: "telegram", User: "telegram:123", Actor: tools.Model}, "sys/exec"); a != policy.Ask || !strings.Contains(why, "names it exactly") {
		t.Errorf("after /elevated: %s (%s)", a, why)
	}
	if a, _ := p.Check(tools.Caller{Channel: "telegram", User: "telegram:9", Actor: tools.Model}, "sys/exec"); a != policy.Deny {
		t.Errorf("a non-owner: %s", a)
	}
}
