package channels

import (
	"context"
	"strings"
	"testing"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/policy"
	"github.com/clawedge/clawedge/tools"
)

// anyArgs is a tool that takes any string arguments and says what it got.
type anyArgs struct{ name string }

func (t anyArgs) Spec() grammar.ToolSpec {
	return grammar.ToolSpec{Name: t.name, Doc: "test", Params: []grammar.ArgSpec{
		{Name: "name", Type: grammar.TypeString}, {Name: "role", Type: grammar.TypeString}, {Name: "url", Type: grammar.TypeString}}}
}

func (t anyArgs) Run(_ context.Context, a grammar.Args) (tools.Result, error) {
	return tools.Result{Text: "code 12345678 for web:" + a.String("name") + " (" + a.String("role") + ")"}, nil
}

// pairTool is web/pair as the authorizer sees it: a BoardOnly tool.
type pairTool struct{ anyArgs }

func (pairTool) BoardOnly() {}

// /web is web/pair on the call path, as the sender, with the name and role
// they typed (or the defaults): a person at the board, or an owner, gets a
// code; anyone else is refused by the authorizer and nothing is made;
// without a dashboard (no web/pair) the word says so.
func TestWebPairWord(t *testing.T) {
	reg := tools.NewRegistry()
	if err := reg.Register(pairTool{anyArgs{"web/pair"}}); err != nil {
		t.Fatal(err)
	}
	auth := &policy.Authorizer{Policy: &policy.Policy{Default: policy.Allow, Owners: []string{"telegram:42"}}}
	d := &Dispatcher{Runner: &tools.Runner{Registry: reg, Audit: nopAudit{}, Authorizer: auth}}
	for _, tc := range []struct {
		channel, user, text, want string
		role                      tools.Role
		failed                    bool
	}{
		{"console/ttyS0", "console", "/web", "code 12345678 for web:browser (operator)", "", false},
		{"console/stdin", "console", "/web phone owner", "code 12345678 for web:phone (owner)", "", false},
		{"control", "uid:0", "/WEB tablet", "code 12345678 for web:tablet (operator)", "", false},
		{"telegram", "telegram:42 (@olga)", "/web phone viewer", "code 12345678 for web:phone (viewer)", "", false},
		{"console/stdin", "console", "/web a b c", "error: usage: /web [NAME] [viewer|operator|owner]", "", true},
		{"telegram", "telegram:7", "/web phone owner", "only a person at the board or an owner", "", true},
		{"web", "web:tab", "/web phone owner", "paired as operator", tools.RoleOperator, true},
		{"mcp", "mcp:claude", "/web", "only a person at the board or an owner", "", true},
	} {
		resp := d.Respond(context.Background(), Message{Channel: tc.channel, User: tc.user, Role: tc.role, Text: tc.text})
		if !strings.Contains(resp.Text, tc.want) || resp.Failed != tc.failed {
			t.Errorf("%s %q: %+v", tc.channel, tc.text, resp)
		}
	}
	off := &Dispatcher{Runner: &tools.Runner{Registry: tools.NewRegistry(), Audit: nopAudit{}, Authorizer: auth}}
	if resp := off.Respond(context.Background(), Message{Channel: "console/stdin", User: "console", Text: "/web phone"}); !resp.Failed || !strings.Contains(resp.Text, "the dashboard is off") {
		t.Errorf("without a dashboard: %+v", resp)
	}
}

// /board is board/pair on the call path, as the sender: a person at the
// board gets a code that pairs another board; a program (an MCP host,
// another board) is refused by the authorizer; without a boards section
// the word says so.
func TestBoardPairWord(t *testing.T) {
	reg := tools.NewRegistry()
	if err := reg.Register(pairTool{anyArgs{"board/pair"}}); err != nil {
		t.Fatal(err)
	}
	auth := &policy.Authorizer{Policy: &policy.Policy{Default: policy.Allow}}
	d := &Dispatcher{Runner: &tools.Runner{Registry: reg, Audit: nopAudit{}, Authorizer: auth}}
	for _, tc := range []struct {
		channel, user, text, want string
		failed                    bool
	}{
		{"console/ttyS0", "console", "/board", "code 12345678", false},
		{"control", "uid:0", "/board", "code 12345678", false},
		{"mcp", "mcp:claude", "/board", "only a person at the board or an owner", true},
		{"board", "board:hall", "/board", "only a person at the board or an owner", true},
	} {
		resp := d.Respond(context.Background(), Message{Channel: tc.channel, User: tc.user, Text: tc.text})
		if !strings.Contains(resp.Text, tc.want) || resp.Failed != tc.failed {
			t.Errorf("%s %q: %+v", tc.channel, tc.text, resp)
		}
	}
	off := &Dispatcher{Runner: &tools.Runner{Registry: tools.NewRegistry(), Audit: nopAudit{}, Authorizer: auth}}
	if resp := off.Respond(context.Background(), Message{Channel: "console/stdin", User: "console", Text: "/board"}); !resp.Failed || !strings.Contains(resp.Text, "boards are off") {
		t.Errorf("without boards: %+v", resp)
	}
}
