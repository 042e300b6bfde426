package tools

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/clawedge/clawedge/grammar"
)

// Prepare looks up and validates a model's or host's JSON arguments and gives the
// canonical command; nothing runs or is audited until Call.
func TestPrepareValidatesAndRendersOnce(t *testing.T) {
	r, audit, ts := newTestRunner(t)
	c, err := r.Prepare("gpio/write", json.RawMessage(`{"pin": "led", "value": 1}`))
	if err != nil {
		t.Fatal(err)
	}
	if c.Command != `@gpio/write{pin="led";value=1}` || c.Args.String("pin") != "led" || c.Args.Int("value") != 1 {
		t.Errorf("prepared %+v", c)
	}
	if len(audit.intents) != 0 || ts["gpio/write"].calls.Load() != 0 {
		t.Error("Prepare audited or ran something")
	}
	for args, want := range map[string]string{
		`{"pin": "lamp", "value": 1}`: `parameter "pin" is "lamp", must be one of led, relay`,
		`{"pin": "led"}`:              `parameter "value" is required`,
		`{"pin": "led", "value": [1`:  "gpio/write: ",
		`[1]`:                         "gpio/write: ",
	} {
		_, err := r.Prepare("gpio/write", json.RawMessage(args))
		var ae *grammar.ArgError
		if !errors.As(err, &ae) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err %v, want an ArgError with %q", args, err, want)
		}
	}
	if _, err := r.Prepare("gpio/writ", nil); err == nil || !strings.Contains(err.Error(), "gpio/write") {
		t.Errorf("unknown tool: %v", err)
	}
	// No arguments at all is an empty object.
	if c, err := r.Prepare("sys/echo", json.RawMessage("null")); err != nil || c.Command != "@sys/echo{}" {
		t.Errorf("null arguments: %+v %v", c, err)
	}
}

// Call writes the intent before the effect, in the caller's audit scope when it
// has one (not the Runner's), and reports the intent's id.
func TestCallAuditsInTheCallersScope(t *testing.T) {
	r, runnerAudit, ts := newTestRunner(t)
	c, err := r.Prepare("gpio/write", json.RawMessage(`{"pin": "relay", "value": 1}`))
	if err != nil {
		t.Fatal(err)
	}
	scope := &memAudit{}
	ts["gpio/write"].run = func(a grammar.Args) (Result, error) {
		if len(scope.intents) != 1 {
			t.Error("the tool ran before its intent was recorded")
		}
		return Result{Text: "relay = 1"}, nil
	}
	rep := r.Call(context.Background(), Caller{Channel: "mqtt", User: "mqtt", Audit: scope}, c)
	if rep.Err != nil || rep.Result.Text != "relay = 1" || rep.Command != c.Command || rep.Audit != 1 {
		t.Fatalf("report %+v", rep)
	}
	if len(runnerAudit.intents) != 0 || scope.intents[0] != `mqtt mqtt @gpio/write{pin="relay";value=1}` || !scope.outcomes[1] {
		t.Errorf("runner's audit %v, scope's %v %v", runnerAudit.intents, scope.intents, scope.outcomes)
	}
	scope.failNext = true
	rep = r.Call(context.Background(), Caller{Channel: "mqtt", User: "mqtt", Audit: scope}, c)
	if rep.Err == nil || !strings.Contains(rep.Err.Error(), "audit trail unavailable") || ts["gpio/write"].calls.Load() != 1 {
		t.Errorf("with the audit failing: %+v, %d runs", rep, ts["gpio/write"].calls.Load())
	}
}
