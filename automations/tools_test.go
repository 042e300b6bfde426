package automations

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/tools"
)

// accepts runs out through the compiled constraint.
func accepts(a grammar.Automaton, out string) bool {
	s := a.Start()
	for i := 0; i < len(out) && s != grammar.Dead; i++ {
		s = a.Next(s, out[i])
	}
	return s != grammar.Dead && a.Accepting(s)
}

// The auto/* tools compile into the constraint a local model decodes under: an
// auto/add call that fits the spec can be produced, one with a sun event that
// does not exist or a key that is not a parameter cannot.
func TestAutoToolsConstrained(t *testing.T) {
	reg := tools.NewRegistry()
	if err := RegisterTools(reg, &Handle{}); err != nil {
		t.Fatal(err)
	}
	c, err := grammar.Compile(grammar.Spec{Form: grammar.FormCommand, Mode: grammar.ModeCalls, Tools: reg.Specs()})
	if err != nil {
		t.Fatal(err)
	}
	for out, want := range map[string]bool{
		`@auto/add{name="plants";cron="0 7 * * *";do="@gpio/pulse{pin=\"pump\";ms=60000}"}`: true,
		`@auto/add{name="porch";sun="sunset";offset="-15m";notify="dusk at {time}"}`:        true,
		`@auto/add{name="porch";sun="noon";notify="x"}`:                                     false,
		`@auto/add{name="x";when="daily";notify="x"}`:                                       false,
		`@auto/list{}`:                      true,
		`@auto/run{name="plants"}`:          true,
		`@auto/run{}`:                       false, // name is required
		`@auto/add{cron="0 7 * * *";do=""}`: false,
	} {
		if got := accepts(c, out); got != want {
			t.Errorf("%s: accepted %v, want %v", out, got, want)
		}
	}
}

// auto/add through the runner: durations and local times are read, errors name
// the parameter, and the automation is listed with its next run.
func TestAddTool(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	r := newRig(t, t0)
	s := r.sched(time.UTC)
	reg := tools.NewRegistry()
	h := &Handle{}
	h.Set(s)
	RegisterTools(reg, h)
	run := func(line string) (string, error) {
		cmd, err := grammar.Parse(line, grammar.ParseOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rep, err := (&tools.Runner{Registry: reg, Audit: r.st}).Run(context.Background(), tools.Caller{Channel: "cli"}, cmd)
		return rep.Text(), err
	}
	if out, err := run(`@auto/add{name="soon";in="10m";notify="x"}`); err != nil || !strings.Contains(out, "next 2026-05-01 12:10:00") {
		t.Errorf("in: %q %v", out, err)
	}
	if out, err := run(`@auto/add{name="xmas";at="2026-12-24 18:00";notify="x"}`); err != nil || !strings.Contains(out, "next 2026-12-24 18:00:00") {
		t.Errorf("at: %q %v", out, err)
	}
	if _, err := run(`@auto/add{name="bad";every="often";notify="x"}`); err == nil || !strings.Contains(err.Error(), `every: "often" is not a duration`) {
		t.Errorf("bad duration: %v", err)
	}
	if _, err := run(`@auto/add{name="past";at="2020-01-01 00:00";notify="x"}`); err == nil || !strings.Contains(err.Error(), "in the past") {
		t.Errorf("past: %v", err)
	}
	if _, err := run(`@auto/add{name="soon";every="1h";notify="x"}`); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("duplicate: %v", err)
	}
	if out, _ := run(`@auto/list{}`); !strings.Contains(out, "soon: at 2026-05-01T12:10:00Z") || !strings.Contains(out, "xmas") {
		t.Errorf("list: %q", out)
	}
}
