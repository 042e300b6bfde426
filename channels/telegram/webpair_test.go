package telegram

import (
	"errors"
	"strings"
	"testing"
)

// An owner's /web in a private chat gets the dashboard's pairing code, with
// the name and role asked for; a bad role is the pairing's own error.
func TestWebPairForOwners(t *testing.T) {
	h := newHarness(t, nil, "")
	var asked []string
	h.start(h.config(func(c *Config, _ *harness) {
		c.WebPair = func(name, role string) (string, error) {
			if role == "king" {
				return "", errors.New(`role "king": want viewer, operator or owner`)
			}
			asked = append(asked, name+" "+role)
			return "code 12345678 for web:" + name, nil
		}
	}))
	for i, tc := range []struct{ send, want string }{
		{"/web phone viewer", "code 12345678 for web:phone"},
		{"/web", "web:browser"},
		{"/web phone king", `No code: role "king"`},
		{"/web a b c", "Usage: /web"},
	} {
		h.srv.Text(owner, nil, tc.send)
		if got := h.reply(owner.ID, i+1); !strings.Contains(got, tc.want) {
			t.Errorf("%s: reply %q, want %q", tc.send, got, tc.want)
		}
	}
	if strings.Join(asked, ",") != "phone viewer,browser operator" {
		t.Errorf("asked %q", asked)
	}
}
