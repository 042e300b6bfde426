package llm

import (
	"io"
	"strings"
	"testing"

	"github.com/clawedge/clawedge/grammar"
)

// chunks is a stream of fixed pieces of text, then a Final.
type chunks struct{ text []string }

func (c *chunks) Next() (Chunk, error) {
	if len(c.text) == 0 {
		return Chunk{}, io.EOF
	}
	t := c.text[0]
	c.text = c.text[1:]
	if len(c.text) == 0 {
		return Chunk{Text: t, Final: &Final{Reason: ReasonStop}}, nil
	}
	return Chunk{Text: t}, nil
}
func (c *chunks) Close() error { return nil }

// Wherever the stream cuts the text, the chunks carry the text before the call and
// never a piece of the call, and the Final has the call.
func TestTextCallsEverySplit(t *testing.T) {
	const text = "Sure, <b>now</b>.\n<tool_call>\n{\"name\": \"gpio/write\", \"arguments\": {\"pin\": \"led\"}}\n</tool_call>\n"
	spec := grammar.Spec{Form: grammar.FormQwen, Mode: grammar.ModeAny}
	for i := 0; i <= len(text); i++ {
		for j := i; j <= len(text); j += 7 {
			s := TextCalls(&chunks{[]string{text[:i], text[i:j], text[j:]}}, spec, false, nil)
			shown, fin, err := Collect(s)
			if err != nil {
				t.Fatal(err)
			}
			if shown != "Sure, <b>now</b>." || len(fin.ToolCalls) != 1 || fin.ToolCalls[0].Name != "gpio/write" || fin.Raw != text {
				t.Fatalf("split %d,%d: shown %q, final %+v", i, j, shown, fin)
			}
		}
	}
	// An unreadable call: the text before it is the answer, the error says how to
	// write one.
	shown, fin, _ := Collect(TextCalls(&chunks{[]string{"Hm <tool_call>{\"name\": "}}, spec, false, nil))
	if shown != "Hm" || fin.CallsErr == nil || !strings.Contains(fin.CallsErr.Error(), "Write each call as <tool_call>") {
		t.Errorf("shown %q, final %+v", shown, fin)
	}
}

// A thinking model's <think> section (spec.Think) is never passed on, wherever the
// stream cuts it, nor is a call written in it: what the person reads is the answer
// after it. A reply that ends while thinking has no answer and no call.
func TestTextCallsHideThinking(t *testing.T) {
	const call = "<tool_call>\n{\"name\": \"gpio/write\", \"arguments\": {\"pin\": \"led\"}}\n</tool_call>"
	const think = "<think>\nThe user wants light. " + call + " would do.\n</think>\n\n"
	for _, c := range []struct {
		mode       grammar.Mode
		text, want string
		calls      int
	}{
		{grammar.ModeAny, think + "Sure, <b>now</b>.\n" + call + "\n", "Sure, <b>now</b>.", 1},
		{grammar.ModeText, think + "It is on.", "It is on.", 0},
		{grammar.ModeAny, "\n" + think + call, "", 1},
		{grammar.ModeText, "<3 from the board", "<3 from the board", 0},    // not a think section
		{grammar.ModeAny, "<think>\nThe user wants light. " + call, "", 0}, // cut off while thinking
	} {
		spec := grammar.Spec{Form: grammar.FormQwen, Mode: c.mode, Think: true}
		for i := 0; i <= len(c.text); i++ {
			for j := i; j <= len(c.text); j += 5 {
				shown, fin, err := Collect(TextCalls(&chunks{[]string{c.text[:i], c.text[i:j], c.text[j:]}}, spec, false, nil))
				if err != nil {
					t.Fatal(err)
				}
				if shown != c.want || len(fin.ToolCalls) != c.calls || fin.CallsErr != nil || fin.Raw != c.text {
					t.Fatalf("%q split %d,%d: shown %q, final %+v", c.text, i, j, shown, fin)
				}
			}
		}
	}
}
