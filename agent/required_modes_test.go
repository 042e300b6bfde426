package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/llm"
	"github.com/clawedge/clawedge/llm/openai"
	"github.com/clawedge/clawedge/llm/openai/openaitest"
	"github.com/clawedge/clawedge/llm/remote"
)

// Issue 36: under agent.tool_choice required a turn ends with calls, or with
// the error that says the model server did not comply; never with the model's
// text as its answer, whatever the server returns. Each reply below is what a
// server (llama-server with a random model, on some machine, at some seed)
// may send; it is scripted on the fake OpenAI server and read by the real
// openai provider in each constraint mode, as `clawedge chat` does with
// reply_tokens 160 and max_iterations 1 (TestLlamaServerRequiredCalls).

// A reply in the form a constraint mode's server writes a call in.
type modeReply func(mode openai.Style) openaitest.Reply

// call is a reply holding one call of tool (a clawedge name) with args,
// written as each mode's server writes it: the JSON object the schema
// describes, a Qwen <tool_call> block under the grammar, the API's own
// tool-call field without a constraint.
func call(tool, args string) modeReply {
	return func(mode openai.Style) openaitest.Reply {
		obj := fmt.Sprintf(`{"name": %q, "arguments": %s}`, llm.WireName(tool), args)
		switch mode {
		case openai.StyleJSONSchema:
			return openaitest.Text(obj)
		case openai.StyleGBNF:
			return openaitest.Text("<tool_call>\n" + obj + "\n</tool_call>")
		}
		return openaitest.ToolCall(tool, args)
	}
}

// padded is the call with blanks the server's grammar lets the model write
// around it (and between the JSON's tokens), each in chunks of its own.
func padded(tool, args string) modeReply {
	return func(mode openai.Style) openaitest.Reply {
		obj := fmt.Sprintf("{ \"name\" :\n %q ,\n\t\"arguments\" : %s\n}", llm.WireName(tool), args)
		switch mode {
		case openai.StyleJSONSchema:
			return openaitest.Text("\n", "  \n ", obj[:12], obj[12:], "\n\n", "   \n\t")
		case openai.StyleGBNF:
			return openaitest.Text("\n ", "<tool_call>\n"+obj, "\n</tool_call>", "\n\n  ")
		}
		return openaitest.Reply{Calls: []openaitest.Call{{Name: tool, Args: "\n  " + args + " \n\n", Pieces: 4}}}
	}
}

// cut is a call cut at the reply's token bound (finish_reason length).
func cut(tool, args string) modeReply {
	return func(mode openai.Style) openaitest.Reply {
		obj := fmt.Sprintf(`{"name": %q, "arguments": %s`, llm.WireName(tool), args)
		obj = obj[:len(obj)-4]
		switch mode {
		case openai.StyleJSONSchema:
			return openaitest.Cut(obj)
		case openai.StyleGBNF:
			return openaitest.Cut("<tool_call>\n" + obj)
		}
		r := openaitest.Cut()
		r.Calls = []openaitest.Call{{Name: tool, Args: args[:len(args)-4]}}
		return r
	}
}

// same is the same text whatever the mode.
func same(r openaitest.Reply) modeReply { return func(openai.Style) openaitest.Reply { return r } }

// wrapped is text the way the mode's server encloses a call: a JSON
// object alone under the schema, in a <tool_call> block under the grammar,
// as it is without a constraint.
func wrapped(text string) modeReply {
	return func(mode openai.Style) openaitest.Reply {
		if mode == openai.StyleGBNF {
			return openaitest.Text("<tool_call>\n" + text + "\n</tool_call>")
		}
		return openaitest.Text(text)
	}
}

const ledOn = `{"pin": "led", "value": 1}`

// The replies a server that does not comply may send, each with text that
// must never reach the person as an answer.
var nonCompliant = []struct {
	name  string
	reply modeReply
	shows string // a piece of the reply's text that must not be shown
}{
	{"cut", cut("gpio/write", ledOn), "gpio__write"},
	{"text", same(openaitest.Text("Sure, ", "the LED is on now.")), "LED is on"},
	{"text-cut", same(openaitest.Cut("Sure, I will turn ", "the lamp on for")), "the lamp"},
	{"empty", same(openaitest.Text()), ""},
	{"blanks", same(openaitest.Text("\n\n", "   ")), ""},
	{"text-then-json", same(openaitest.Text("Here you go: ", fmt.Sprintf(`{"name": %q, "arguments": %s}`, "gpio__write", ledOn))), "Here you go"},
	{"answer-object", wrapped(`{"answer": "The LED is on, trust me."}`), "trust me"},
	{"json-array", wrapped(`["gpio__write", {"pin": "led"}]`), "gpio__write"},
	{"json-string", wrapped(`"the LED is on, trust me"`), "trust me"},
	{"no-name", wrapped(`{"tool": "gpio__write", "args": {"pin": "led", "value": 1}}`), `"tool"`},
	{"json-then-text", same(openaitest.Text(fmt.Sprintf(`{"name": %q, "arguments": %s}`, "gpio__write", ledOn), " and it is on, trust me")), "trust me"},
	{"unknown-tool", call("gpio/explode", `{"pin": "led"}`), ""},
	{"invalid-arguments", call("gpio/write", `{"pin": "led", "value": "bright"}`), ""},
	{"arguments-not-object", wrapped(`{"name": "gpio__write", "arguments": [1]}`), ""},
}

// requiredEnv is a turn's agent on the real openai provider in a constraint
// mode, against the fake server, with the limits of the llama-server test.
func requiredEnv(t *testing.T, mode openai.Style) (*env, *openaitest.Server) {
	t.Helper()
	srv := openaitest.New(t)
	p, err := openai.New(openai.Options{Options: remote.Options{Name: "box", BaseURL: srv.URL, Model: "tiny", Context: 2048,
		RetryBase: time.Millisecond}, Constraint: mode})
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, Options{Provider: p, Limits: Limits{ToolChoice: llm.ToolChoiceRequired, ReplyTokens: 160, MaxIterations: 1}})
	return e, srv
}

var modes = []openai.Style{openai.StyleJSONSchema, openai.StyleGBNF, openai.StyleNone}

// turnEmitted runs a turn and returns it with what was streamed of it.
func turnEmitted(t *testing.T, e *env, text string) (Out, string) {
	t.Helper()
	var emitted strings.Builder
	out, err := e.ag.Turn(context.Background(), In{Channel: console, User: user, Text: text,
		Emit: func(s string) { emitted.WriteString(s) }})
	if err != nil {
		t.Fatal(err)
	}
	return out, emitted.String()
}

// checkRequiredAsked: every request of a step that had to call asks for a call
// in the mode's way: the schema of calls only, with the API's tool_choice
// required beside it; the grammar (tool_choice none, which llama-server needs
// beside a grammar); the API's tool_choice required without a constraint.
func checkRequiredAsked(t *testing.T, mode openai.Style, reqs []openaitest.Request) {
	t.Helper()
	for i, r := range reqs {
		b := r.Body
		var choice string
		json.Unmarshal(b.ToolChoice, &choice)
		switch mode {
		case openai.StyleJSONSchema:
			if b.ResponseFormat == nil || b.ResponseFormat.JSONSchema == nil || choice != "required" ||
				strings.Contains(string(b.ResponseFormat.JSONSchema.Schema), `"answer"`) {
				t.Errorf("request %d is not held to a call: tool_choice %q, response_format %+v", i+1, choice, b.ResponseFormat)
			}
		case openai.StyleGBNF:
			if b.Grammar == "" || choice != "none" {
				t.Errorf("request %d is not held to a call: tool_choice %q, grammar %.80q", i+1, choice, b.Grammar)
			}
		default:
			if choice != "required" || b.ResponseFormat != nil || b.Grammar != "" {
				t.Errorf("request %d: tool_choice %q, response_format %+v, grammar %.80q", i+1, choice, b.ResponseFormat, b.Grammar)
			}
		}
	}
}

// A server that does not comply twice (the first reply, then the repair
// attempt) fails the turn with the clear error; nothing runs, and none of the
// model's text is shown, streamed or kept as the answer. Every kind of
// non-compliance is tried as the first and as the second reply.
func TestRequiredNeverAnswersText(t *testing.T) {
	for _, mode := range modes {
		for _, first := range nonCompliant {
			for _, second := range nonCompliant {
				if first.name != second.name && second.name != "text" && first.name != "cut" {
					continue // every kind first and second, not every pair
				}
				name := fmt.Sprintf("%s/%s/%s", mode, first.name, second.name)
				t.Run(name, func(t *testing.T) {
					e, srv := requiredEnv(t, mode)
					srv.Push(first.reply(mode), second.reply(mode))
					srv.Default(func(openaitest.Request) openaitest.Reply {
						return openaitest.Text("A third reply: the LED is on, trust me.")
					})
					out, emitted := turnEmitted(t, e, "turn on the led")
					if out.State != Error || out.Stop != "model" || !strings.Contains(out.Text, "ignored tool_choice required") {
						t.Errorf("the turn ended %s (%s), want the server's non-compliance:\n%s", out.State, out.Stop, out.Text)
					}
					// The error says what the first reply was (the model was told
					// once), here a call cut at reply_tokens.
					if first.name == "cut" && mode != openai.StyleNone && !strings.Contains(out.Text, "the reply was cut at the reply's token bound") {
						t.Errorf("the error does not say the reply was cut:\n%s", out.Text)
					}
					for _, shown := range []string{out.Text, emitted} {
						for _, piece := range []string{first.shows, second.shows, "A third reply"} {
							if piece != "" && strings.Contains(shown, piece) {
								t.Errorf("the model's text %q was shown:\n%s", piece, shown)
							}
						}
					}
					reqs := srv.Requests()
					if len(reqs) != 2 {
						t.Errorf("%d requests, want 2: the reply and one repair attempt", len(reqs))
					}
					checkRequiredAsked(t, mode, reqs)
					if len(reqs) == 2 {
						// The repair attempt told the model what was wrong.
						msgs := reqs[1].Body.Messages
						if last := msgs[len(msgs)-1]; last.Content == nil || !strings.Contains(*last.Content, "error") &&
							!strings.Contains(*last.Content, "requires a tool call") && !strings.Contains(*last.Content, "expected") {
							t.Errorf("the repair attempt does not say what was wrong: %+v", last)
						}
					}
					if n := len(e.audited()); n != 0 || e.level("led") == hal.High {
						t.Errorf("%d calls ran, led %v", n, e.level("led"))
					}
				})
			}
		}
	}
}

// A repair that works: the call the model then writes runs, and the turn goes
// on to answer (max_iterations 1: the step after the call may only answer).
func TestRequiredRepairedCallRuns(t *testing.T) {
	for _, mode := range modes {
		for _, first := range nonCompliant {
			t.Run(fmt.Sprintf("%s/%s", mode, first.name), func(t *testing.T) {
				e, srv := requiredEnv(t, mode)
				srv.Push(first.reply(mode), call("gpio/write", ledOn)(mode), openaitest.Text("Done: switched."))
				out, emitted := turnEmitted(t, e, "turn on the led")
				if out.State != Idle || out.Stop != "answered" || e.level("led") != hal.High || !strings.HasPrefix(out.Text, "Done: switched.") {
					t.Errorf("turn %s (%s), led %v:\n%s", out.State, out.Stop, e.level("led"), out.Text)
				}
				if first.shows != "" && (strings.Contains(out.Text, first.shows) || strings.Contains(emitted, first.shows)) {
					t.Errorf("the first reply's text %q was shown:\n%s", first.shows, out.Text)
				}
				reqs := srv.Requests()
				if len(reqs) != 3 {
					t.Fatalf("%d requests, want 3", len(reqs))
				}
				checkRequiredAsked(t, mode, reqs[:2])
				if es := e.audited(); len(es) != 1 || es[0].Command != `@gpio/write{pin="led";value=1}` {
					t.Errorf("audit %+v", es)
				}
			})
		}
	}
}

// A call padded with blanks (around it, and between its JSON tokens) is a
// call: it runs at the first step, with nothing to repair.
func TestRequiredPaddedCallRuns(t *testing.T) {
	for _, mode := range modes {
		t.Run(string(mode), func(t *testing.T) {
			e, srv := requiredEnv(t, mode)
			srv.Push(padded("gpio/write", ledOn)(mode), openaitest.Text("Done."))
			out, _ := turnEmitted(t, e, "turn on the led")
			if out.State != Idle || e.level("led") != hal.High || !strings.HasPrefix(out.Text, "Done.") {
				t.Errorf("turn %s (%s), led %v:\n%q", out.State, out.Stop, e.level("led"), out.Text)
			}
			if reqs := srv.Requests(); len(reqs) != 2 {
				t.Errorf("%d requests, want 2: the call and the answer", len(reqs))
			}
		})
	}
}
