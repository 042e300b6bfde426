package goals_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/clawedge/clawedge/goals"
	"github.com/clawedge/clawedge/grammar"
)

// planTools are a board's: a pin write and a pin read.
func planTools() goals.PlanTools {
	pin := grammar.ArgSpec{Name: "pin", Type: grammar.TypeString, Required: true, Enum: []string{"led", "soil"}}
	zero, one := 0.0, 1.0
	return goals.NewPlanTools([]grammar.ToolSpec{
		{Name: "gpio/write", Params: []grammar.ArgSpec{pin, {Name: "value", Type: grammar.TypeInteger, Required: true, Min: &zero, Max: &one}}},
		{Name: "gpio/read", Params: []grammar.ArgSpec{pin}},
		{Name: "goal/add", Params: []grammar.ArgSpec{{Name: "objective", Type: grammar.TypeString, Required: true}}},
	}, func(name string) bool { return name == "gpio/read" })
}

func TestNewPlanToolsListsReads(t *testing.T) {
	pt := planTools()
	if got := strings.Join(pt.Reads, " "); got != `@gpio/read{pin="led"} @gpio/read{pin="soil"}` {
		t.Errorf("reads %s", got)
	}
	var names []string
	for _, s := range pt.Specs {
		names = append(names, s.Name)
	}
	if got := strings.Join(names, " "); got != "gpio/write gpio/read goal/wait goal/ask goal/sub goal/until" {
		t.Errorf("plan tools %s (goal/add must not be offered: sub-goals are goal/sub)", got)
	}
	if _, err := grammar.Compile(pt.Constraint()); err != nil {
		t.Errorf("the plan's constraint does not compile: %v", err)
	}
}

func TestParsePlan(t *testing.T) {
	pt := planTools()
	steps, err := goals.ParsePlan(`@gpio/write{pin="led";value=1} -> [@goal/wait{seconds=5}, @goal/ask{question="ok?"}] -> `+
		`@goal/until{read='@gpio/read{pin="soil"}';cond="below";value=0.5;seconds=60} -> @goal/sub{objective="tidy up"}`, pt, 4)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		id    int
		kind  goals.Kind
		after string
	}{{4, goals.KindCall, ""}, {5, goals.KindWait, "4"}, {6, goals.KindAsk, "4"}, {7, goals.KindWait, "5 6"}, {8, goals.KindSub, "7"}}
	if len(steps) != len(want) {
		t.Fatalf("%d steps", len(steps))
	}
	for i, w := range want {
		s := steps[i]
		after := strings.Trim(fmt.Sprint(s.After), "[]")
		if s.ID != w.id || s.Kind != w.kind || after != w.after || s.State != goals.Planned {
			t.Errorf("step %d = %+v, want id %d kind %s after %q", i, s, w.id, w.kind, w.after)
		}
	}
	if c := steps[3].Check; c == nil || c.Read != `@gpio/read{pin="soil"}` || c.Below == nil || *c.Below != 0.5 || steps[3].Seconds != 60 {
		t.Errorf("until step: %+v", steps[3])
	}
	if steps[2].Question != "ok?" || steps[4].Sub != "tidy up" {
		t.Errorf("ask/sub: %+v %+v", steps[2], steps[4])
	}
}

func TestParsePlanErrors(t *testing.T) {
	pt := planTools()
	for _, tc := range []struct{ plan, want string }{
		{"", "the plan is empty"},
		{`@gpio/write{pin="led";value=1} ->`, "line 1, column"},
		{`@sys/exec{cmd="rm"}`, "step 1 (line 1, column 1): sys/exec is not a tool this goal may use"},
		{`@goal/add{objective="x"}`, "goal/add is not a tool this goal may use"},
		{`@goal/wait{seconds=5} -> @gpio/write{pin="led";value=$prev.value}`, "step 2 (line 1, column 26): gpio/write: value: a plan holds values, not references"},
		{`@gpio/write{pin="door";value=1}`, "gpio/write"},
		{`@goal/wait{seconds=0}`, "seconds"},
		{`@goal/until{read='@gpio/read{pin="x"}';cond="below";value=1;seconds=5}`, "read"},
		{strings.Repeat(`@goal/wait{seconds=1} -> `, goals.MaxPlanSteps) + `@goal/wait{seconds=1}`, "at most 8"},
	} {
		_, err := goals.ParsePlan(tc.plan, pt, 1)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParsePlan(%q) = %v, want %q", tc.plan, err, tc.want)
		}
	}
}

// FuzzParsePlan: whatever a model or a person writes, ParsePlan returns
// steps or an error, never panics; every step it returns is within the
// bound, re-parses as the one invocation it stands for, and names a plan tool.
func FuzzParsePlan(f *testing.F) {
	for _, s := range []string{
		`@gpio/write{pin="led";value=1} -> @goal/wait{seconds=5}`,
		`[@goal/ask{question="ok?"}, @goal/sub{objective="x"}] -> @gpio/read{pin="soil"}`,
		`@goal/until{read='@gpio/read{pin="soil"}';cond="is_high";value=0;seconds=60}`,
		`@gpio/write{pin="led";value=$prev.x}`,
		`@goal/wait{seconds=86401}`,
		`}{@`,
	} {
		f.Add(s)
	}
	pt := planTools()
	f.Fuzz(func(t *testing.T, text string) {
		steps, err := goals.ParsePlan(text, pt, 1)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an error without a message")
			}
			return
		}
		if len(steps) == 0 || len(steps) > goals.MaxPlanSteps {
			t.Fatalf("%d steps", len(steps))
		}
		for _, s := range steps {
			again, err := goals.ParsePlan(s.Command, pt, 1)
			if err != nil || len(again) != 1 || again[0].Command != s.Command {
				t.Fatalf("step %q does not re-parse as itself: %v", s.Command, err)
			}
			if s.Kind == goals.KindWait && (s.Seconds < 1 || s.Seconds > 86400) {
				t.Fatalf("wait of %d s", s.Seconds)
			}
		}
	})
}
