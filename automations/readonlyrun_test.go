package automations

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/tools"
)

// peekTool reads without effect (tools.ReadOnly).
type peekTool struct{ hitTool }

func (*peekTool) Spec() grammar.ToolSpec { return grammar.ToolSpec{Name: "test/peek", Doc: "read"} }
func (p *peekTool) Run(ctx context.Context, a grammar.Args) (tools.Result, error) {
	return p.hitTool.Run(ctx, a)
}
func (*peekTool) ReadOnly() {}

// A run that only reads writes no state of its own each time: its state goes
// to the store at most once per readOnlySaveEvery, and when the scheduler stops.
// A run with an effect still records itself before and after, every time.
func TestReadOnlyRunsSaveTheirStateLazily(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	r := newRig(t, t0)
	reg := tools.NewRegistry()
	peek := &peekTool{}
	if err := reg.Register(peek, r.hit); err != nil {
		t.Fatal(err)
	}
	s, err := New([]Spec{{Name: "poll", Every: time.Second, Do: "@test/peek{}"}, {Name: "act", Every: time.Second, Do: hit("a")}},
		Options{Store: r.st, Clock: r.clock, Loc: time.UTC, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
			Effects: Effects{Runner: &tools.Runner{Registry: reg, Audit: r.st}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	stored := func(name string) state {
		raw, _, err := r.st.Get(stateBucket, name)
		if err != nil {
			t.Fatal(err)
		}
		var st state
		json.Unmarshal(raw, &st)
		return st
	}
	for i := 0; i <= 30; i++ {
		r.at(s, t0.Add(time.Duration(i)*time.Second))
	}
	if len(peek.hits) < 29 {
		t.Fatalf("poll ran %d times", len(peek.hits))
	}
	first := stored("poll").Last
	if last := stored("act").Last; !last.Equal(t0.Add(30 * time.Second)) {
		t.Errorf("the acting automation's last run on disk is %s, want every run recorded", last)
	}
	if !first.Before(t0.Add(2 * time.Second)) {
		t.Errorf("the polling automation's state was saved at each run (last on disk %s)", first)
	}
	s.saveDirty()
	if last := stored("poll").Last; !last.Equal(t0.Add(30 * time.Second)) {
		t.Errorf("at the stop its state is %s, want the last run", last)
	}
	if stored("poll").Running != nil {
		t.Error("a read-only run left a running record")
	}
}
