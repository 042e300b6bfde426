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
