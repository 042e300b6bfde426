package channels

import (
	"context"
	"strings"
	"testing"
)

// /web gives a person at the board a pairing code's line, with the name and
// role they typed (or the defaults); any other door gets an error and no
// code is made; without a dashboard the word is free text.
func TestWebPairWord(t *testing.T) {
	var asked []string
	d := &Dispatcher{WebPair: func(name, role string) (string, error) {
		asked = append(asked, name+" "+role)
		return "code 12345678 for web:" + name + " (" + role + ")", nil
	}}
	for _, tc := range []struct {
		channel, text, want string
		failed              bool
	}{
		{"console/ttyS0", "/web", "code 12345678 for web:browser (operator)", false},
		{"console/stdin", "/web phone owner", "code 12345678 for web:phone (owner)", false},
		{"control", "/WEB tablet", "code 12345678 for web:tablet (operator)", false},
		{"console/stdin", "/web a b c", "error: usage: /web [NAME] [viewer|operator|owner]", true},
		{"telegram", "/web phone owner", "error: only a person at the board's console", true},
		{"web", "/web phone owner", "error: only a person at the board's console", true},
		{"mcp", "/web", "error: only a person at the board's console", true},
	} {
		resp := d.Respond(context.Background(), Message{Channel: tc.channel, User: "someone", Text: tc.text})
		if !strings.HasPrefix(resp.Text, tc.want) || resp.Failed != tc.failed {
			t.Errorf("%s %q: %+v", tc.channel, tc.text, resp)
		}
	}
	if strings.Join(asked, ",") != "browser operator,phone owner,tablet operator" {
		t.Errorf("codes were made for %q", asked)
	}
	if r, _, _ := (&Dispatcher{}).route("/web phone"); r != routeAgent {
		t.Errorf("without a dashboard /web routes to %d", r)
	}
}
