package telegram

import (
	"strings"
	"testing"

	"github.com/clawedge/clawedge/channels/web"
	"github.com/clawedge/clawedge/policy"
)

// An owner's /web in a private chat is web/pair on the call path, decided by
// the authorizer: the dashboard's code comes back with the name and role
// asked for, a bad role is the spec's own error, and the audit keeps that a
// code was issued, never the code.
func TestWebPairForOwners(t *testing.T) {
	h := newHarness(t, nil, "")
	sessions, err := web.OpenSessions(h.st, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := web.RegisterTools(h.disp.Runner.Registry, sessions); err != nil {
		t.Fatal(err)
	}
	h.disp.Runner.Authorizer = &policy.Authorizer{Policy: &policy.Policy{Default: policy.Allow}, Approvers: []string{"telegram:42"}}
	h.start(h.config())
	var codes []string
	for i, tc := range []struct{ send, want string }{
		{"/web phone viewer", "the browser will act as web:phone (viewer)"},
		{"/web", "web:browser (operator)"},
		{"/web phone king", `"king"`},
		{"/web a b c", "usage: /web"},
	} {
		h.srv.Text(owner, nil, tc.send)
		got := h.reply(owner.ID, i+1)
		if !strings.Contains(got, tc.want) {
			t.Errorf("%s: reply %q, want %q", tc.send, got, tc.want)
		}
		if f := strings.Fields(strings.Trim(got, "`\n")); len(f) > 1 && f[0] == "code" {
			codes = append(codes, strings.TrimSuffix(f[1], ":"))
		}
	}
	if len(codes) != 2 {
		t.Fatalf("codes %q", codes)
	}
	tail, err := h.st.Tail(10)
	if err != nil {
		t.Fatal(err)
	}
	issued := 0
	for _, e := range tail {
		if strings.Contains(e.Command, "web/pair") && e.OK {
			issued++
			if !strings.Contains(e.Detail, "a code for web:") || strings.Contains(e.Detail, codes[0]) || strings.Contains(e.Detail, codes[1]) {
				t.Errorf("audit detail %q (codes %q)", e.Detail, codes)
			}
		}
	}
	if issued != 2 {
		t.Errorf("%d codes audited, want 2: %+v", issued, tail)
	}
}
