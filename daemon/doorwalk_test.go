package daemon

import (
	"context"
	"encoding/json"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/clawedge/clawedge/channels"
	"github.com/clawedge/clawedge/config"
	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/internal/rigtest"
)

// The door walk of the control socket: every op is a pure read (it changes
// neither the board nor the trail, and reaches no authorizer, whatever it is
// asked, "auto run" included), and every call reaches the authorizer and is
// audited. An op added without a place in this walk fails it: say which it
// is, and why.
func TestEveryDoorIsAReadOrACall(t *testing.T) {
	cfg := config.Default()
	cfg.DataDir = filepath.Join(t.TempDir(), "data")
	a, err := Open(cfg, Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	auth := &rigtest.CountingAuthorizer{Inner: a.runner.Authorizer}
	a.runner.Authorizer = auth
	if _, err := a.StartAutomations(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if err := a.ReadyGoals(); err != nil {
		t.Fatal(err)
	}
	ctl := a.controlSocket(a.dispatcher(), nil)

	reads := map[string][]string{ // op: the arguments it is asked with
		"status":    {``},
		"steps":     {`5`},
		"audit":     {`{"n":5}`, `{"n":1000000,"before":1}`},
		"auto":      {`{"op":"list"}`, `{"op":"run","name":"x"}`, `{"op":"rm","name":"x"}`, `{"op":"pause","name":"x"}`},
		"goal":      {`{"op":"list"}`, `{"op":"show","id":"1"}`, `{"op":"cancel","id":"1"}`},
		"mcp.tools": {``},
		"sensors":   {``, `{"read":true}`},
		"boards":    {``},
	}
	calls := map[string]string{ // call: a call of gpio/write through it
		"mcp.call": `{"client":"walk","tool":"gpio/write","args":{"pin":"led","value":1}}`,
	}
	for op := range ctl.Ops {
		if _, ok := reads[op]; !ok {
			t.Errorf("control op %q is not in the walk: is it a read (reads) or a call (calls)?", op)
		}
	}
	for op := range ctl.Calls {
		if _, ok := calls[op]; !ok {
			t.Errorf("control call %q is not in the walk", op)
		}
	}
	trail := func() int {
		es, err := a.store.Tail(100)
		if err != nil {
			t.Fatal(err)
		}
		return len(es)
	}
	led, err := a.board.Pin("led")
	if err != nil {
		t.Fatal(err)
	}
	before := trail()
	for _, op := range slices.Sorted(maps.Keys(reads)) {
		fn := ctl.Ops[op]
		if fn == nil {
			t.Errorf("op %q is walked but the socket has none", op)
			continue
		}
		for _, arg := range reads[op] {
			fn(json.RawMessage(arg)) // an error is an answer too: what matters is what it did
		}
	}
	if n := auth.Count(); n != 0 {
		t.Errorf("the reads reached the authorizer %d times", n)
	}
	if got := trail(); got != before {
		t.Errorf("the reads wrote %d audit entries", got-before)
	}
	if l, _ := led.Read(); l != hal.Low {
		t.Error("a read switched the led")
	}
	for op, arg := range calls {
		n := auth.Count()
		if _, err := ctl.Calls[op](context.Background(), 1000, json.RawMessage(arg)); err != nil {
			t.Logf("%s: %v", op, err)
		}
		if auth.Count() != n+1 {
			t.Errorf("%s did not reach the authorizer", op)
		}
	}
	es, err := a.store.Tail(5)
	if err != nil || len(es) == 0 || !strings.Contains(es[len(es)-1].Command, "gpio/write") || !strings.HasPrefix(es[len(es)-1].Who, "mcp:uid:1000") {
		t.Errorf("the call's audit: %+v %v", es, err)
	}

	// A line sent to the socket is the Dispatcher's: a command on the call
	// path as the peer.
	n := auth.Count()
	r := ctl.Handler.Respond(context.Background(), channels.Message{Channel: "control", User: "uid:1000", Text: `@gpio/read{pin="led"}`})
	if r.Failed || auth.Count() != n+1 {
		t.Errorf("a line: %+v, authorizer reached %d times", r, auth.Count()-n)
	}
}
