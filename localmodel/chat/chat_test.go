package chat

import (
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/clawedge/clawedge/llm"
	"github.com/clawedge/clawedge/localmodel/gguf"
)

// The expected strings below were written by following the official Jinja
// templates of Qwen2-Instruct, Qwen2.5-Instruct and Qwen3 step by step
// (tojson = Python's json.dumps: ", " and ": " separators, keys in order).

func sys(s string) llm.Message  { return llm.Message{Role: llm.RoleSystem, Content: s} }
func user(s string) llm.Message { return llm.Message{Role: llm.RoleUser, Content: s} }
func asst(s string, calls ...llm.ToolCall) llm.Message {
	return llm.Message{Role: llm.RoleAssistant, Content: s, ToolCalls: calls}
}
func tool(s string) llm.Message { return llm.Message{Role: llm.RoleTool, Content: s} }
func call(name, args string) llm.ToolCall {
	return llm.ToolCall{Name: name, Arguments: json.RawMessage(args)}
}

var boardTools = []llm.ToolDef{
	{Name: "gpio_write", Doc: "Switch an output pin.",
		Params: json.RawMessage(`{"type":"object","properties":{"pin":{"type":"string","enum":["led","relay"]},"value":{"type":"integer"}},"required":["pin","value"]}`)},
	{Name: "gpio_read", Doc: "Read a pin.",
		Params: json.RawMessage(`{"type":"object","properties":{"pin":{"type":"string"}},"required":["pin"]}`)},
}

const toolsSection = `# Tools

You may call one or more functions to assist with the user query.

You are provided with function signatures within <tools></tools> XML tags:
<tools>
{"type": "function", "function": {"name": "gpio_write", "description": "Switch an output pin.", "parameters": {"type": "object", "properties": {"pin": {"type": "string", "enum": ["led", "relay"]}, "value": {"type": "integer"}}, "required": ["pin", "value"]}}}
{"type": "function", "function": {"name": "gpio_read", "description": "Read a pin.", "parameters": {"type": "object", "properties": {"pin": {"type": "string"}}, "required": ["pin"]}}}
</tools>

For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:
<tool_call>
{"name": <function-name>, "arguments": <args-json-object>}
</tool_call><|im_end|>
`

func TestGolden(t *testing.T) {
	q2, _ := Named("qwen2")
	q25, _ := Named("qwen2.5")
	q3, _ := Named("qwen3")
	toolTurn := []llm.Message{
		user("Turn the led on and read the button"),
		asst("", call("gpio_write", `{"pin":"led","value":1}`), call("gpio_read", `{"pin": "button"}`)),
		tool(`{"ok": true}`),
		tool(`{"value": 0}`),
		asst("The led is on; the button reads 0."),
		user("Thanks"),
	}
	for _, tc := range []struct {
		name string
		t    Template
		req  llm.Request
		want string
	}{
		{"qwen2.5 system and user", q25, llm.Request{Messages: []llm.Message{sys("You are terse."), user("Hello")}},
			"<|im_start|>system\nYou are terse.<|im_end|>\n<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n"},
		{"qwen2.5 default system", q25, llm.Request{Messages: []llm.Message{user("Hello")}},
			"<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n" +
				"<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n"},
		{"qwen2.5 multi-turn", q25, llm.Request{Messages: []llm.Message{
			sys("S"), user("one"), asst("1"), user("two"), asst("2"), user("three"), sys("late system")}},
			"<|im_start|>system\nS<|im_end|>\n<|im_start|>user\none<|im_end|>\n<|im_start|>assistant\n1<|im_end|>\n" +
				"<|im_start|>user\ntwo<|im_end|>\n<|im_start|>assistant\n2<|im_end|>\n<|im_start|>user\nthree<|im_end|>\n" +
				"<|im_start|>system\nlate system<|im_end|>\n<|im_start|>assistant\n"},
		{"qwen2.5 tools, calls and results", q25, llm.Request{Tools: boardTools,
			Messages: append([]llm.Message{sys("You control a board.")}, toolTurn...)},
			"<|im_start|>system\nYou control a board.\n\n" + toolsSection + `<|im_start|>user
Turn the led on and read the button<|im_end|>
<|im_start|>assistant
<tool_call>
{"name": "gpio_write", "arguments": {"pin": "led", "value": 1}}
</tool_call>
<tool_call>
{"name": "gpio_read", "arguments": {"pin": "button"}}
</tool_call><|im_end|>
<|im_start|>user
<tool_response>
{"ok": true}
</tool_response>
<tool_response>
{"value": 0}
</tool_response><|im_end|>
<|im_start|>assistant
The led is on; the button reads 0.<|im_end|>
<|im_start|>user
Thanks<|im_end|>
<|im_start|>assistant
`},
		{"qwen2.5 tools with the default system and text before a call", q25, llm.Request{Tools: boardTools[:1],
			Messages: []llm.Message{user("led on"), asst("Switching it on.", call("gpio_write", `{"pin":"led","value":1}`))}},
			"<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.\n\n" +
				strings.Replace(toolsSection, "\n"+`{"type": "function", "function": {"name": "gpio_read", "description": "Read a pin.", "parameters": {"type": "object", "properties": {"pin": {"type": "string"}}, "required": ["pin"]}}}`, "", 1) +
				"<|im_start|>user\nled on<|im_end|>\n<|im_start|>assistant\nSwitching it on.\n<tool_call>\n" +
				`{"name": "gpio_write", "arguments": {"pin": "led", "value": 1}}` + "\n</tool_call><|im_end|>\n<|im_start|>assistant\n"},
		{"qwen2 default system", q2, llm.Request{Messages: []llm.Message{user("Hi"), asst("Hello"), user("Bye")}},
			"<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n" +
				"<|im_start|>assistant\nHello<|im_end|>\n<|im_start|>user\nBye<|im_end|>\n<|im_start|>assistant\n"},
		{"qwen3 no default system", q3, llm.Request{Messages: []llm.Message{user("Hello")}},
			"<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n"},
		{"qwen3 system", q3, llm.Request{Messages: []llm.Message{sys("S"), user("Hello")}},
			"<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n"},
		{"qwen3 no think", q3, llm.Request{NoThink: true, Messages: []llm.Message{user("Hello")}},
			"<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"},
		{"qwen2.5 ignores no think", q25, llm.Request{NoThink: true, Messages: []llm.Message{sys("S"), user("Hello")}},
			"<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n"},
		{"qwen3 tools without system, tool turn", q3, llm.Request{Tools: boardTools, Messages: toolTurn},
			"<|im_start|>system\n" + toolsSection + `<|im_start|>user
Turn the led on and read the button<|im_end|>
<|im_start|>assistant
<tool_call>
{"name": "gpio_write", "arguments": {"pin": "led", "value": 1}}
</tool_call>
<tool_call>
{"name": "gpio_read", "arguments": {"pin": "button"}}
</tool_call><|im_end|>
<|im_start|>user
<tool_response>
{"ok": true}
</tool_response>
<tool_response>
{"value": 0}
</tool_response><|im_end|>
<|im_start|>assistant
The led is on; the button reads 0.<|im_end|>
<|im_start|>user
Thanks<|im_end|>
<|im_start|>assistant
`},
		// Reasoning before the last user message is dropped.
		{"qwen3 past thinking dropped", q3, llm.Request{Messages: []llm.Message{
			user("Is the led on?"),
			asst("<think>\nI should read it.\n</think>\n\n", call("gpio_read", `{"pin":"led"}`)),
			tool(`{"value": 1}`),
			asst("<think>\nIt is 1.\n</think>\n\nYes, it is on."),
			user("Turn it off")}},
			"<|im_start|>user\nIs the led on?<|im_end|>\n<|im_start|>assistant\n<tool_call>\n" +
				`{"name": "gpio_read", "arguments": {"pin": "led"}}` + "\n</tool_call><|im_end|>\n" +
				"<|im_start|>user\n<tool_response>\n{\"value\": 1}\n</tool_response><|im_end|>\n" +
				"<|im_start|>assistant\nYes, it is on.<|im_end|>\n<|im_start|>user\nTurn it off<|im_end|>\n<|im_start|>assistant\n"},
		// Within the current turn (after the last user message) it is kept.
		{"qwen3 current thinking kept", q3, llm.Request{Messages: []llm.Message{
			user("Is the led on?"),
			asst("<think>\nI should read it.\n</think>\n\n", call("gpio_read", `{"pin":"led"}`)),
			tool(`{"value": 1}`)}},
			"<|im_start|>user\nIs the led on?<|im_end|>\n<|im_start|>assistant\n<think>\nI should read it.\n</think>\n\n<tool_call>\n" +
				`{"name": "gpio_read", "arguments": {"pin": "led"}}` + "\n</tool_call><|im_end|>\n" +
				"<|im_start|>user\n<tool_response>\n{\"value\": 1}\n</tool_response><|im_end|>\n<|im_start|>assistant\n"},
		// The last message, an assistant's, always gets a think block.
		{"qwen3 last assistant", q3, llm.Request{Messages: []llm.Message{user("Hi"), asst("Hello")}},
			"<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\nHello<|im_end|>\n<|im_start|>assistant\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.t.Render(tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s\n(got %q)", got, tc.want, got)
			}
		})
	}
}

func TestRenderErrors(t *testing.T) {
	q, _ := Named("qwen2.5")
	for _, tc := range []struct {
		req  llm.Request
		want string
	}{
		{llm.Request{}, "no messages"},
		{llm.Request{Messages: []llm.Message{{Role: "robot", Content: "x"}}}, `role "robot"`},
		{llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, ToolCalls: []llm.ToolCall{call("a", "{}")}}}}, "only assistant"},
		{llm.Request{Messages: []llm.Message{user("x"), asst("", call("a", `{"x":`))}}, "tool call a: arguments: invalid JSON"},
		{llm.Request{Messages: []llm.Message{user("x")}, Tools: []llm.ToolDef{{Name: "t", Params: json.RawMessage(`[1,`)}}}, "tool t: parameters"},
	} {
		if _, err := q.Render(tc.req); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Render(%+v) = %v, want an error containing %q", tc.req, err, tc.want)
		}
	}
}

func TestPyJSON(t *testing.T) {
	for in, want := range map[string]string{
		`{"b":1,"a":[true,false,null,1.50,-2e3],"c":{}}`: `{"b": 1, "a": [true, false, null, 1.50, -2e3], "c": {}}`,
		`"<tag> & é \u2028 \" \\ \n \u0001"`:             "\"<tag> & é \u2028 \\\" \\\\ \\n \\u0001\"",
		` [ ] `:                                          `[]`,
	} {
		got, err := pyJSON([]byte(in))
		if err != nil || got != want {
			t.Errorf("pyJSON(%s) = %s, %v; want %s", in, got, err, want)
		}
	}
	for _, bad := range []string{``, `{`, `{"a":1}x`, `[1,]`} {
		if _, err := pyJSON([]byte(bad)); err == nil {
			t.Errorf("pyJSON(%q) accepted", bad)
		}
	}
}

// Jinja sources, abridged to the lines that matter for detection.
const (
	qwen25Jinja = `{%- if tools %}
    {{- '<|im_start|>system\n' }}
    {%- if messages[0]['role'] == 'system' %}
        {{- messages[0]['content'] }}
    {%- else %}
        {{- 'You are Qwen, created by Alibaba Cloud. You are a helpful assistant.' }}
    {%- endif %}
    {{- "\n\n# Tools\n\n...<tool_call>..." }}
{%- else %}
    {%- if messages[0]['role'] == 'system' %}
        {{- '<|im_start|>system\n' + messages[0]['content'] + '<|im_end|>\n' }}
    {%- else %}
        {{- '<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n' }}
    {%- endif %}
{%- endif %}`
	qwen3Jinja = `{%- if tools %}
    {{- '<|im_start|>system\n' }}
{%- else %}
    {%- if messages[0].role == 'system' %}
        {{- '<|im_start|>system\n' + messages[0].content + '<|im_end|>\n' }}
    {%- endif %}
{%- endif %}
{%- if '</think>' in message.content %}{%- endif %}
{{- '<|im_start|>assistant\n<think>\n' }}`
	qwen2Jinja  = `{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}`
	llama3Jinja = `{{ '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n' }}`
)

func TestDetect(t *testing.T) {
	for _, tc := range []struct {
		arch, tmpl string
		want       Template
	}{
		{"qwen2", qwen25Jinja, Template{Qwen25, Qwen25System}},
		{"qwen3", qwen3Jinja, Template{Qwen3, ""}},
		{"qwen2", qwen2Jinja, Template{Qwen2, Qwen2System}},
		{"qwen3", "", Template{Qwen3, ""}},
		{"llama", "{% for m in messages %}{{'<|im_start|>' + m.role + '\n' + m.content + '<|im_end|>\n'}}{% endfor %}", Template{Qwen2, ""}},
	} {
		got, err := Detect(tc.arch, tc.tmpl)
		if err != nil || got != tc.want {
			t.Errorf("Detect(%s, %.40q) = %+v, %v; want %+v", tc.arch, tc.tmpl, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ arch, tmpl, want string }{
		{"qwen2", "", `no tokenizer.chat_template and its architecture "qwen2"`},
		{"llama", llama3Jinja, "(llama3) is not ChatML"},
		{"x", "{{ messages }}", "not one clawedge knows"},
	} {
		_, err := Detect(tc.arch, tc.tmpl)
		if !errors.Is(err, ErrUnknown) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "models.local.template") {
			t.Errorf("Detect(%s, %.30q) = %v; want ErrUnknown containing %q and naming the config key", tc.arch, tc.tmpl, err, tc.want)
		}
	}
	if _, err := Named("chatml"); !errors.Is(err, ErrUnknown) || !strings.Contains(err.Error(), "qwen2, qwen2.5, qwen3") {
		t.Errorf("Named(chatml) = %v", err)
	}
}

// The vocabulary the test models are made from carries a Qwen2-style template
// whose default system message has no full stop: it is taken as written.
func TestDetectRealVocabulary(t *testing.T) {
	const vocab = "../../third_party/llama/models/ggml-vocab-qwen2.gguf"
	if _, err := os.Stat(vocab); err != nil {
		t.Skipf("%v: run scripts/fetch-llama.sh", err)
	}
	f, err := gguf.Open(vocab)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ForModel(f, "")
	if err != nil || got != (Template{Qwen2, "You are a helpful assistant"}) {
		t.Errorf("ForModel = %+v, %v", got, err)
	}
	if got, err := ForModel(f, "qwen3"); err != nil || got.Family != Qwen3 {
		t.Errorf("ForModel(qwen3) = %+v, %v", got, err)
	}
}

// FixedLen is the system turn of a rendered prompt, tools and all: what
// stays the same while the conversation grows.
func TestFixedLen(t *testing.T) {
	tmpl, _ := Named(string(Qwen25))
	req := llm.Request{Messages: []llm.Message{{Role: llm.RoleSystem, Content: "You switch relays."}, {Role: llm.RoleUser, Content: "hi"}},
		Tools: []llm.ToolDef{{Name: "gpio/write", Doc: "Drive a pin."}}}
	one, err := tmpl.Render(req)
	if err != nil {
		t.Fatal(err)
	}
	req.Messages = append(req.Messages, llm.Message{Role: llm.RoleAssistant, Content: "hello"}, llm.Message{Role: llm.RoleUser, Content: "and now?"})
	two, _ := tmpl.Render(req)
	n := FixedLen(one)
	if n == 0 || n != FixedLen(two) || one[:n] != two[:n] || !strings.HasSuffix(one[:n], "</tool_call><|im_end|>\n") ||
		!strings.HasPrefix(one[n:], "<|im_start|>user\nhi") {
		t.Errorf("fixed part %q of %q", one[:n], one)
	}
	for _, p := range []string{"", "<|im_start|>user\nhi<|im_end|>\n", "<|im_start|>system\nunclosed"} {
		if FixedLen(p) != 0 {
			t.Errorf("FixedLen(%q) = %d, want 0", p, FixedLen(p))
		}
	}
}

// RenderLayout splits a prompt into the system turn, the earlier turns and
// this turn: the earlier turns of one message's prompt are the start of the
// next message's, and a turn's own steps (a call and its result) are not
// part of them.
func TestRenderLayout(t *testing.T) {
	for _, fam := range Families() {
		tmpl, _ := Named(fam)
		sys := llm.Message{Role: llm.RoleSystem, Content: "You switch relays."}
		tools := []llm.ToolDef{{Name: "gpio/write", Doc: "Drive a pin."}}
		call := llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{Name: "gpio/write", Arguments: []byte(`{"pin":"led"}`)}}}
		result := llm.Message{Role: llm.RoleTool, Content: "ok"}
		// The first message: no earlier turn; its second step adds a call and its result.
		first, l, err := tmpl.RenderLayout(llm.Request{Messages: []llm.Message{sys, {Role: llm.RoleUser, Content: "led on"}, call, result}, Tools: tools})
		if err != nil {
			t.Fatal(err)
		}
		if l.System == 0 || l.Session != l.System || !strings.HasPrefix(first[l.Session:], "<|im_start|>user\nled on") {
			t.Errorf("%s: first message: layout %+v of %q", fam, l, first)
		}
		// The second message: the first turn (as kept, an answer at its end) comes before it.
		hist := []llm.Message{sys, {Role: llm.RoleUser, Content: "led on"}, call, result, {Role: llm.RoleAssistant, Content: "Done."}}
		second, l2, err := tmpl.RenderLayout(llm.Request{Messages: append(slices.Clone(hist), llm.Message{Role: llm.RoleUser, Content: "notes\n\nand off"}), Tools: tools})
		if err != nil {
			t.Fatal(err)
		}
		if l2.System != l.System || second[:l2.System] != first[:l.System] || !strings.HasPrefix(second[l2.Session:], "<|im_start|>user\nnotes\n\nand off") ||
			!strings.HasSuffix(second[:l2.Session], "Done.<|im_end|>\n") {
			t.Errorf("%s: second message: layout %+v of %q", fam, l2, second)
		}
		// The third: the earlier turns of the second are the start of its prompt.
		third, l3, err := tmpl.RenderLayout(llm.Request{Messages: append(hist, llm.Message{Role: llm.RoleUser, Content: "and off"},
			llm.Message{Role: llm.RoleAssistant, Content: "Off."}, llm.Message{Role: llm.RoleUser, Content: "thanks"}), Tools: tools})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(third, second[:l2.Session]) || l3.Session <= l2.Session || !strings.HasPrefix(third[l3.Session:], "<|im_start|>user\nthanks") {
			t.Errorf("%s: third message: layout %+v of %q", fam, l3, third)
		}
	}
}
