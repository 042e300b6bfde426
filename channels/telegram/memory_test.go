package telegram

import (
	"strings"
	"testing"

	"github.com/clawedge/clawedge/memory"
)

// /remember and /forget are the sender's own memory words: saved as their
// words (source person, their id, channel telegram), forgotten by id, listed.
func TestRememberAndForget(t *testing.T) {
	h := newHarness(t, nil, "")
	w, err := memory.Open(t.TempDir(), memory.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if err := memory.Register(h.disp.Runner.Registry, w); err != nil {
		t.Fatal(err)
	}
	h.start(h.config())
	for i, tc := range []struct{ send, want string }{
		{"/remember I'm away until the 12th", "remembered #1"},
		{"/forget", "#1 "},
		{"/forget 1", "forgot #1"},
		{"/forget 1", "no such entry"},
	} {
		h.srv.Text(owner, nil, tc.send)
		got := h.reply(owner.ID, i+1)
		if c := h.srv.Calls("sendMessage"); c[len(c)-1].Str("parse_mode") == "MarkdownV2" {
			got = plainOf(t, got)
		}
		if !strings.Contains(got, tc.want) {
			t.Errorf("%s: reply %q does not contain %q", tc.send, got, tc.want)
		}
		if i == 0 {
			es, _ := w.List()
			if len(es) != 1 || es[0].Text != "I'm away until the 12th" || es[0].Source != memory.Person || es[0].User != "telegram:42" || es[0].Channel != "telegram" {
				t.Errorf("saved %+v", es)
			}
		}
	}
}
