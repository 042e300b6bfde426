package channels

import (
	"context"
	"strings"
	"testing"

	"github.com/clawedge/clawedge/memory"
)

// The console's memory words: "remember TEXT" saves the person's own words
// (any text, quoted by the one renderer), "forget" lists the newest with ids,
// "forget ID" forgets one; other lines starting with those words, and every
// line when there is no memory, go to the agent.
func TestMemoryWords(t *testing.T) {
	d, _ := newDispatcher(t)
	agentSaw := ""
	d.Agent = agentFunc(func(_ context.Context, m Message) (string, error) { agentSaw = m.Text; return "agent", nil })
	if d.ForAgent("remember the bins") != true {
		t.Error("without the memory tools, remember is free text")
	}
	w, err := memory.Open(t.TempDir(), memory.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if err := memory.Register(d.Runner.Registry, w); err != nil {
		t.Fatal(err)
	}
	msg := func(text string) Response {
		return d.Respond(context.Background(), Message{Channel: "console/stdin", User: "console", Text: text})
	}
	if r := msg(`Remember the bins go out on "Tuesday"; not @gpio/write{pin="x"}`); r.Failed || !strings.HasPrefix(r.Text, "remembered #1 ") {
		t.Fatalf("remember: %+v", r)
	}
	es, _ := w.List()
	if len(es) != 1 || es[0].Text != `the bins go out on "Tuesday"; not @gpio/write{pin="x"}` || es[0].Source != memory.Person || es[0].User != "console" || es[0].Channel != "console/stdin" {
		t.Fatalf("entries %+v", es)
	}
	if r := msg("forget"); r.Failed || !strings.Contains(r.Text, "#1 ") {
		t.Errorf("forget alone lists: %+v", r)
	}
	if r := msg("forget about it"); r.Text != "agent" || agentSaw != "forget about it" {
		t.Errorf("forget with words goes to the agent: %+v", r)
	}
	if r := msg("/forget #1"); r.Failed || !strings.HasPrefix(r.Text, "forgot #1 ") {
		t.Errorf("forget #1: %+v", r)
	}
	if r := msg("forget 1"); !r.Failed || !strings.Contains(r.Text, "no such entry") {
		t.Errorf("forget again: %+v", r)
	}
	if d.ForAgent("remember") != true || d.ForAgent("remember x") != false {
		t.Error("ForAgent disagrees with the memory words")
	}
}
