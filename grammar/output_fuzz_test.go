package grammar

import (
	"encoding/json"
	"testing"
)

// FuzzParseOutput: model output is outside input. Parsing (ParseOutput, and
// ParseSchemaReply for a schema-constrained reply) never panics, and
// every call it returns has a name and a JSON object of arguments that
// ParamsFromJSON reads or refuses with an error.
func FuzzParseOutput(f *testing.F) {
	f.Add(uint8(0), "Sure.\n<tool_call>\n{\"name\": \"gpio/write\", \"arguments\": {\"pin\": \"led\", \"level\": true}}\n</tool_call>")
	f.Add(uint8(1), `ok @gpio/write{pin="led";level=true}->@sys/status{}`)
	f.Add(uint8(2), `{"name": "a", "arguments": "{\"x\": [1, 2.5, \"s\"]}"}`)
	f.Add(uint8(0), "<tool_call>\n{\"name\": \"x\", \"arguments\": {\"a\": {\"b\": null}}}\n</tool_call><tool_call>")
	f.Add(uint8(3), `{"answer": "It is 3 pm."}`)
	forms := []Form{FormQwen, FormCommand, FormJSON}
	f.Fuzz(func(t *testing.T, form uint8, text string) {
		spec := Spec{Form: forms[int(form)%len(forms)], Mode: ModeAny, Tools: []ToolSpec{{Name: "a"}, {Name: "b"}}}
		parse := ParseOutput
		if form >= 3 {
			parse = ParseSchemaReply
		}
		out, err := parse(spec, text)
		if err != nil {
			if _, ok := err.(*SyntaxError); !ok {
				t.Fatalf("error %T is not a *SyntaxError: %v", err, err)
			}
			return
		}
		for _, c := range out.Calls {
			if c.Name == "" || !json.Valid(c.Arguments) {
				t.Fatalf("call %+v from %q", c, text)
			}
			ParamsFromJSON(c.Arguments)
		}
	})
}
