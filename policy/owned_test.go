package policy

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/tools"
)

// ownedTool acts on a thing of telegram:42's, as goal/cancel does on a goal.
type ownedTool struct{}

func (ownedTool) Spec() grammar.ToolSpec { return grammar.ToolSpec{Name: "thing/cancel"} }
func (ownedTool) Run(context.Context, grammar.Args) (tools.Result, error) {
	return tools.Result{}, nil
}
func (ownedTool) OwnerOf(grammar.Args) (tools.Principal, bool) {
	return tools.Principal{Channel: "telegram", User: "telegram:42", Actor: tools.Person}, true
}

// The authorizer, not the tool, decides who may act on what is someone's:
// its owner (in person, through the model, or through an automation it
// created), a principal policy.owners names, a person at the board. Anyone
// else is refused by that rule, even where the rules allow the tool, and
// before anyone is asked where they ask.
func TestOwnedToolsAreTheirOwners(t *testing.T) {
	owner := tools.Principal{Channel: "telegram", User: "telegram:42", Actor: tools.Person}
	for _, tc := range []struct {
		caller tools.Caller
		ok     bool
	}{
		{tools.Caller{Channel: "telegram", User: "telegram:42 (@ann)", Actor: tools.Person}, true},
		{tools.Caller{Channel: "telegram", User: "telegram:42", Actor: tools.Model}, true},
		{tools.Caller{Channel: "auto", User: "auto:night", Actor: tools.Automation, Creator: &owner}, true},
		{tools.Caller{Channel: "console/stdin", User: "console", Actor: tools.Person}, true},
		{tools.Caller{Channel: "telegram", User: "telegram:9", Actor: tools.Person}, true}, // policy.owners
		{tools.Caller{Channel: "telegram", User: "telegram:7", Actor: tools.Person}, false},
		{tools.Caller{Channel: "console/stdin", User: "console", Actor: tools.Model}, false},
		{tools.Caller{Channel: "mcp", User: "mcp:desktop", Actor: tools.Program}, false},
		{tools.Caller{Channel: "web", User: "web:phone", Actor: tools.Person}, false},
	} {
		for _, rule := range []Action{Allow, Ask} {
			pol := &Policy{Default: rule, Owners: []string{"telegram:9"}}
			a := &Authorizer{Policy: pol} // no approvals: an ask would be refused for that
			_, err := a.Authorize(context.Background(), tc.caller, tools.Call{Tool: ownedTool{}, Command: `@thing/cancel{}`})
			var r *tools.Refusal
			mine := errors.As(err, &r) && strings.Contains(r.Rule, "only its owner or a person at the board")
			if tc.ok && mine || !tc.ok && !mine {
				t.Errorf("%+v under %s: %v", tc.caller, rule, err)
			}
		}
	}
}
