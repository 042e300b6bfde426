package web

import (
	"net/http"
	"strings"
	"testing"

	"github.com/clawedge/clawedge/hal"
)

// The chat hands a line to the Dispatcher as web:<name>'s, with its role: a
// command runs as the person's own call; a viewer's message is refused at
// the door, and an approval word from a browser that is not an owner's by
// the authorizer (policy.TestWhoMayDecide), which decides nothing here.
func TestChat(t *testing.T) {
	d := newDash(t, nil)
	op := d.pair("phone", Operator)
	viewer := d.pair("tablet", Viewer)
	if resp, body := viewer.do("POST", "/api/chat", `{"text":"@gpio/write{pin=\"led\";value=1}"}`); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a viewer's message: %d %s", resp.StatusCode, body)
	}
	if resp, body := op.do("POST", "/api/chat", `{"text":"approve 1"}`); !strings.Contains(body, `"failed":true`) {
		t.Errorf("an operator's approval word: %d %s", resp.StatusCode, body)
	}
	if len(d.audited()) != 0 || d.level() != hal.Low {
		t.Fatal("a refused message reached the call path")
	}
	resp, body := op.do("POST", "/api/chat", `{"text":"@gpio/write{pin=\"led\";value=1}"}`)
	if resp.StatusCode != 200 || !strings.Contains(body, "led = 1") || d.level() != hal.High {
		t.Fatalf("a command in the chat: %d %s", resp.StatusCode, body)
	}
	if a := d.audited(); len(a) != 1 || a[0].Who != "web:phone" || a[0].Channel != Channel {
		t.Errorf("audit %+v", a)
	}
	// Free text without a model: the Dispatcher's own answer.
	if resp, body := op.do("POST", "/api/chat", `{"text":"turn on the led"}`); resp.StatusCode == http.StatusForbidden || !strings.Contains(body, "reply") {
		t.Errorf("free text: %d %s", resp.StatusCode, body)
	}
	if resp, body := op.do("GET", "/chat", ""); resp.StatusCode != 200 || !strings.Contains(body, `id="chat"`) {
		t.Errorf("the chat page: %d", resp.StatusCode)
	}
}
