package openai_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/llm"
	"github.com/clawedge/clawedge/llm/openai"
	"github.com/clawedge/clawedge/llm/openai/openaitest"
)

// Issue 36: what the provider hands back from a reply constrained to calls
// (mode calls: the agent's tool_choice required) under each constraint style
// that sends one. The agent relies on this: such a reply comes back as calls
// (under the tools' names, whatever blanks pad the JSON) or with CallsErr,
// never as a clean reply without calls that could pass for an answer; a reply
// cut at max_tokens says so (ReasonLength). Calls of a tool the constraint does
// not name come back as calls: the agent refuses them.
func TestCallsOnlyReplyIsCallsOrError(t *testing.T) {
	calls := &grammar.Spec{Form: llm.TextForm, Mode: grammar.ModeCalls, Tools: []grammar.ToolSpec{
		{Name: "gpio/write", Params: []grammar.ArgSpec{{Name: "pin", Type: "string", Required: true}}}, {Name: "sys/time"}}}
	obj := func(name, args string) string { return fmt.Sprintf(`{"name": %q, "arguments": %s}`, name, args) }
	block := func(s string) string { return "<tool_call>\n" + s + "\n</tool_call>" }
	type want struct {
		call string // the call's name; "": CallsErr
		cut  bool
	}
	for _, c := range []struct {
		name   string
		style  openai.Style
		reply  openaitest.Reply
		want   want
		hidden string // text that must not come as a text chunk either
	}{
		{"call", openai.StyleJSONSchema, openaitest.Text(obj("gpio__write", `{"pin": "led"}`)), want{call: "gpio/write"}, "gpio"},
		{"padded", openai.StyleJSONSchema, openaitest.Text("\n \n", "{\n  \"name\" :  \"gpio__write\" ,\n", "\t\"arguments\" : { \"pin\" : \"led\" }\n}", "\n\n  \t\n"), want{call: "gpio/write"}, "gpio"},
		{"padded-no-arguments", openai.StyleJSONSchema, openaitest.Text("  ", `{"name":"sys__time"}`, "  \n"), want{call: "sys/time"}, "sys"},
		{"unknown-tool", openai.StyleJSONSchema, openaitest.Text(obj("gpio__explode", `{}`)), want{call: "gpio/explode"}, "gpio"},
		{"cut", openai.StyleJSONSchema, openaitest.Cut(`{"name": "gpio__write", "arguments": {"pin": "le`), want{cut: true}, "gpio"},
		{"cut-in-blanks", openai.StyleJSONSchema, openaitest.Cut(`{"name": "gpio__write",`, "\n\n\n      "), want{cut: true}, "gpio"},
		{"text", openai.StyleJSONSchema, openaitest.Text("The LED is on."), want{}, ""},
		{"empty", openai.StyleJSONSchema, openaitest.Text(), want{}, ""},
		{"blanks", openai.StyleJSONSchema, openaitest.Text(" \n\n "), want{}, ""},
		{"answer", openai.StyleJSONSchema, openaitest.Text(`{"answer": "It is on."}`), want{}, "It is on"},
		{"array", openai.StyleJSONSchema, openaitest.Text(`[{"name": "gpio__write"}]`), want{}, "gpio"},
		{"two-objects", openai.StyleJSONSchema, openaitest.Text(obj("sys__time", `{}`) + obj("sys__time", `{}`)), want{}, "sys"},
		{"text-after", openai.StyleJSONSchema, openaitest.Text(obj("sys__time", `{}`), " done"), want{}, "sys"},
		{"call", openai.StyleGBNF, openaitest.Text(block(obj("gpio__write", `{"pin": "led"}`))), want{call: "gpio/write"}, "gpio"},
		{"padded", openai.StyleGBNF, openaitest.Text("\n ", block(obj("gpio__write", `{"pin": "led"}`)), " \n\n"), want{call: "gpio/write"}, "gpio"},
		{"cut", openai.StyleGBNF, openaitest.Cut(`<tool_call>`, "\n"+`{"name": "gpio__write", "argu`), want{cut: true}, "gpio"},
		{"answer", openai.StyleGBNF, openaitest.Text(block(`{"answer": "It is on."}`)), want{}, "It is on"},
	} {
		t.Run(string(c.style)+"/"+c.name, func(t *testing.T) {
			srv := openaitest.New(t)
			srv.Push(c.reply)
			p := provider(t, srv, openai.Options{Constraint: c.style})
			chunks, f, err := chat(t, p, llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "led on"}}, Tools: tools,
				Constraint: calls, ToolChoice: llm.ToolChoiceRequired})
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case c.want.call != "" && (len(f.ToolCalls) != 1 || f.ToolCalls[0].Name != c.want.call || f.CallsErr != nil):
				t.Errorf("want a call of %s: calls %+v, error %v", c.want.call, f.ToolCalls, f.CallsErr)
			case c.want.call == "" && f.CallsErr == nil:
				// Text, nothing, or an object of another shape: not calls, and no
				// reply an answer may be read from either. (A reply without
				// calls that is not an error is mode any's answer.)
				if len(f.ToolCalls) == 0 && c.style == openai.StyleJSONSchema {
					t.Errorf("a reply without calls and without an error: %+v", f)
				}
			case c.want.call == "" && len(f.ToolCalls) > 0:
				t.Errorf("calls beside the error: %+v", f.ToolCalls)
			}
			if (f.Reason == llm.ReasonLength) != c.want.cut {
				t.Errorf("reason %q, cut %v", f.Reason, c.want.cut)
			}
			if f.Raw != strings.Join(c.reply.Text, "") {
				t.Errorf("raw %q", f.Raw)
			}
			if text := strings.Join(chunks, ""); c.hidden != "" && strings.Contains(text, c.hidden) {
				t.Errorf("the call reached the text: %q", text)
			}
			if b := srv.Requests()[0].Body; c.style == openai.StyleJSONSchema && (b.ResponseFormat == nil || string(b.ToolChoice) != `"required"`) {
				t.Errorf("not asked for calls only: %s", srv.Requests()[0].Raw)
			}
		})
	}
}
