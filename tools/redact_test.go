package tools

import (
	"context"
	"strings"
	"testing"

	"github.com/clawedge/clawedge/grammar"
)

// pairing is a tool with an argument only its caller may know.
type pairing struct{}

func (pairing) Spec() grammar.ToolSpec {
	return grammar.ToolSpec{Name: "board/add", Doc: "pair", Params: []grammar.ArgSpec{
		{Name: "code", Type: grammar.TypeString, Required: true}}}
}

func (pairing) Run(context.Context, grammar.Args) (Result, error) { return Result{Text: "paired"}, nil }

func (pairing) AuditCommand(grammar.Args) string { return `@board/add{code="(not kept)"}` }

// A Redacting tool's intent is recorded as it renders it, refused or run:
// the code never reaches the audit trail; the caller's report keeps it.
func TestRedactingToolKeepsItsArgumentOutOfTheAudit(t *testing.T) {
	reg := NewRegistry()
	if err := reg.Register(pairing{}); err != nil {
		t.Fatal(err)
	}
	audit := &memAudit{}
	r := &Runner{Registry: reg, Audit: audit}
	call, err := r.Prepare("board/add", []byte(`{"code":"31415926"}`))
	if err != nil {
		t.Fatal(err)
	}
	rep := r.Call(context.Background(), Caller{Channel: "console/stdin", User: "ann"}, call)
	if rep.Err != nil || !strings.Contains(rep.Command, "31415926") {
		t.Fatalf("the report: %+v", rep)
	}
	r.Authorizer = refuseAll{}
	r.Call(context.Background(), Caller{Channel: "console/stdin", User: "ann"}, call)
	if len(audit.intents) != 2 {
		t.Fatalf("intents: %q", audit.intents)
	}
	for _, in := range audit.intents {
		if strings.Contains(in, "31415926") || !strings.Contains(in, "(not kept)") {
			t.Errorf("the audit keeps the code: %q", in)
		}
	}
}

type refuseAll struct{}

func (refuseAll) Authorize(context.Context, Caller, Call) (string, error) {
	return "", &Refusal{Command: "board/add", Why: Denied, Rule: "test"}
}
