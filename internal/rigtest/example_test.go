package rigtest_test

import (
	"context"
	"testing"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/internal/rigtest"
	"github.com/clawedge/clawedge/policy"
	"github.com/clawedge/clawedge/tools"
)

// A test switches the led through the one call path and reads it back; the
// rig's policy refuses what it denies before the board is touched.
func TestRig(t *testing.T) {
	rig := rigtest.New(t, rigtest.Options{Policy: &policy.Policy{Default: policy.Allow,
		Tools: map[string]policy.Action{"gpio/write": policy.Deny}}})
	model := tools.Caller{Channel: "console", User: "pi", Actor: tools.Model}
	cmd, err := grammar.Parse(`@gpio/write{pin="led";value=1}`, grammar.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rig.Runner.Run(context.Background(), model, cmd); err == nil {
		t.Fatal("a denied write ran")
	}
	if got := rig.Level(t, "led"); got != hal.Low {
		t.Fatalf("the led is %v after a denied write", got)
	}
}
