package llm

import (
	"strings"

	"github.com/clawedge/clawedge/grammar"
)

// Calls written as text. A local model, and a remote one whose output was
// constrained by a grammar or a JSON Schema, writes its calls in its text
// instead of the API's tool-call fields. TextCalls is how every provider hands
// such calls back the same way as the APIs' own: parsed, in Final.ToolCalls, so
// that the agent knows no model's syntax.

// CallsError says why the calls in a reply's text could not be read; the
// agent shows it to the model once, to repair the call.
type CallsError struct {
	Err error
	// Hint says how to write a call in the form that was expected.
	Hint string
}

func (e *CallsError) Error() string { return e.Err.Error() + ". " + e.Hint }
func (e *CallsError) Unwrap() error { return e.Err }

// TextCalls wraps a stream whose text holds calls in spec's form, or with
// schema set a reply that grammar.JSONSchema(spec) constrained: its text
// chunks carry only what is certainly not a call (text before the form's
// trigger), and its Final has the calls parsed, Raw set to the whole text,
// and CallsErr set when the calls could not be read. wire maps a name as the
// model wrote it to the tool's name (SpecName for a remote API's names; nil
// keeps it). A Final that already has calls (the API's own) is left as it is.
func TextCalls(s Stream, spec grammar.Spec, schema bool, wire func(string) string) Stream {
	t := &textCalls{s: s, spec: spec, schema: schema, wire: wire, trigger: Trigger(spec.Form), hint: hint(spec.Form)}
	if schema {
		t.trigger, t.hint = grammar.JSONTrigger, hint(grammar.FormJSON)
	}
	return t
}

type textCalls struct {
	s       Stream
	spec    grammar.Spec
	schema  bool
	wire    func(string) string
	trigger string
	hint    string
	raw     strings.Builder
	shown   int  // bytes of raw passed on as text, or skipped (a think section)
	from    int  // where the text passed on starts: after a think section
	cut     bool // a call started: nothing more is passed on
}

func (t *textCalls) Close() error { return t.s.Close() }

func (t *textCalls) Next() (Chunk, error) {
	for {
		c, err := t.s.Next()
		if err != nil {
			return c, err
		}
		t.raw.WriteString(c.Text)
		if c.Final != nil {
			return t.final(c.Final), nil
		}
		if text := t.visible(); text != "" {
			return Chunk{Text: text}, nil
		}
	}
}

// visible is the new text that cannot be part of a call: up to the trigger,
// less a trailing piece that may be its start and trailing blanks (they may
// precede a call).
func (t *textCalls) visible() string {
	if t.thinking() {
		return ""
	}
	if t.spec.Mode == grammar.ModeText {
		return t.take(t.raw.Len())
	}
	if t.cut {
		return ""
	}
	all := t.raw.String()
	trigger := t.trigger
	end := len(all)
	if i := strings.Index(all, trigger); i >= 0 {
		end, t.cut = i, true
	} else {
		for k := min(len(trigger)-1, len(all)); k > 0; k-- {
			if strings.HasSuffix(all, trigger[:k]) {
				end = len(all) - k
				break
			}
		}
	}
	end = len(strings.TrimRight(all[:end], " \t\r\n"))
	return t.take(end)
}

// thinking says whether raw is, or may yet be, in a thinking model's leading
// <think> section (spec.Think), which is never passed on: the person reads the
// answer, not the reasoning (the whole text is in Final.Raw, for the audit). Once
// the section is closed, what is passed on starts after it.
func (t *textCalls) thinking() bool {
	if !t.spec.Think || t.shown > t.from {
		return false
	}
	n, open := grammar.ThinkLen(t.raw.String())
	t.from = max(t.from, n)
	t.shown = t.from
	return open
}

// take passes raw[shown:end] on.
func (t *textCalls) take(end int) string {
	if end <= t.shown {
		return ""
	}
	s := t.raw.String()[t.shown:end]
	t.shown = end
	return s
}

// final parses the whole text. The text not yet passed on that is not a call
// (trailing blanks, a '<' that started no call) is sent with the Final.
func (t *textCalls) final(f *Final) Chunk {
	raw := t.raw.String()
	if t.thinking() && strings.HasPrefix(strings.TrimLeft(raw, " \t\r\n"), grammar.ThinkOpen) {
		// The reply ended while thinking: it has no answer, and a call
		// written in the reasoning is not a call.
		f.Raw = raw
		return Chunk{Final: f}
	}
	if len(f.ToolCalls) > 0 {
		return Chunk{Text: t.take(len(raw)), Final: f}
	}
	out, err := t.parse(raw)
	f.Raw = raw
	if err != nil {
		// The answer is the text before the unreadable call.
		f.CallsErr = &CallsError{Err: err, Hint: t.hint}
		return Chunk{Text: t.visible(), Final: f}
	}
	say := strings.TrimRight(out.Text, " \t\r\n")
	for _, c := range out.Calls {
		name := c.Name
		if t.wire != nil {
			name = t.wire(name)
		}
		f.ToolCalls = append(f.ToolCalls, ToolCall{Name: name, Arguments: c.Arguments})
	}
	var rest string
	if shown := raw[t.from:t.shown]; strings.HasPrefix(say, shown) && len(say) > len(shown) {
		rest = say[len(shown):]
	}
	return Chunk{Text: rest, Final: f}
}

func (t *textCalls) parse(raw string) (grammar.Output, error) {
	if t.schema && t.spec.Mode != grammar.ModeText {
		return grammar.ParseSchemaReply(t.spec, raw)
	}
	return grammar.ParseOutput(t.spec, raw)
}

// Trigger is where a call starts in a form's text.
func Trigger(f grammar.Form) string {
	switch f {
	case grammar.FormCommand:
		return grammar.CommandTrigger
	case grammar.FormJSON:
		return grammar.JSONTrigger
	}
	return grammar.QwenTrigger
}

func hint(f grammar.Form) string {
	switch f {
	case grammar.FormCommand:
		return "Write each call as @ns/tool{key=value}, or answer in plain text"
	case grammar.FormJSON:
		return `Answer with one JSON object: {"name": "ns/tool", "arguments": {...}} to call a tool, or {"answer": "..."}`
	}
	return `Write each call as <tool_call>{"name": "ns/tool", "arguments": {...}}</tool_call>, or answer in plain text`
}

// TextForm is the form in which models write calls in their text when no API
// field carries them: the one the chat templates teach (Qwen's <tool_call>
// blocks), which the local runner's token masks and a server's GBNF grammar
// enforce. A caller that builds a constraint (the agent) takes it from here, so
// that no model's syntax is written outside the providers.
const TextForm = grammar.FormQwen

// ReplyCalls is TextCalls for a model that writes its calls in its text as
// its chat template taught it (the local model, and scripted ones in tests):
// in the form of the request's constraint, or without one in TextForm.
func ReplyCalls(s Stream, req Request) Stream {
	spec := grammar.Spec{Form: TextForm, Mode: grammar.ModeAny}
	if c := req.Constraint; c != nil {
		spec = *c
	}
	return TextCalls(s, spec, false, nil)
}
