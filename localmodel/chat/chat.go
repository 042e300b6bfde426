// Package chat renders a conversation into the prompt text a Qwen model was
// trained on: ChatML (<|im_start|>role ... <|im_end|>) with the system
// prompt, tool list, tool calls and tool results exactly where and how each
// model's own Jinja template puts them. We do not run Jinja: the three
// templates are small and fixed, so each is written out in Go and checked
// against strings produced by the official templates' rules (golden tests).
//
// Families:
//
//   - qwen2 (Qwen2-Instruct, also Qwen1.5): plain ChatML; when the
//     conversation has no system message, a default one ("You are a helpful
//     assistant."). Its template knows no tools; tools, calls and results are
//     rendered the Qwen2.5 way, the closest family member.
//   - qwen2.5: ChatML; the default system message "You are Qwen, created by
//     Alibaba Cloud. You are a helpful assistant."; tools as a "# Tools"
//     section of the system message (one JSON object per line inside
//     <tools></tools>, then the <tool_call> instructions); calls as
//     <tool_call>{"name": ..., "arguments": ...}</tool_call> in the assistant
//     turn; results as <tool_response> blocks in a user turn (consecutive
//     results share one turn).
//   - qwen3: as qwen2.5 but with no default system message, and thinking:
//     the <think>…</think> part of past assistant turns is dropped before the
//     last user message and kept after it (the template's rules), and the
//     generation prompt is a plain "<|im_start|>assistant\n" (the model
//     decides whether to think) unless the request sets NoThink, which adds
//     the empty "<think>\n\n</think>\n\n" of enable_thinking=false.
package chat

import (
	"errors"
	"fmt"
	"strings"

	"github.com/clawedge/clawedge/llm"
	"github.com/clawedge/clawedge/localmodel/gguf"
)

// Family names a prompt format; the names are those of the config key
// models.local.template.
type Family string

const (
	Qwen2  Family = "qwen2"
	Qwen25 Family = "qwen2.5"
	Qwen3  Family = "qwen3"
)

// Families lists the known template names.
func Families() []string { return []string{string(Qwen2), string(Qwen25), string(Qwen3)} }

// Default system messages of the official templates.
const (
	Qwen2System  = "You are a helpful assistant."
	Qwen25System = "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."
)

// ErrUnknown is wrapped by the errors for templates this package cannot render.
var ErrUnknown = errors.New("unknown chat template")

// Template renders conversations for one model.
type Template struct {
	Family Family
	// DefaultSystem is the system message used when a conversation starts
	// without one; "" for none.
	DefaultSystem string
}

// Named returns the template of a family by name, with the family's
// official default system message.
func Named(name string) (Template, error) {
	switch Family(name) {
	case Qwen2:
		return Template{Qwen2, Qwen2System}, nil
	case Qwen25:
		return Template{Qwen25, Qwen25System}, nil
	case Qwen3:
		return Template{Qwen3, ""}, nil
	}
	return Template{}, fmt.Errorf("%w %q (have %s)", ErrUnknown, name, strings.Join(Families(), ", "))
}

// ForModel chooses the template of a model file: the one named (the config's
// models.local.template) if name is not empty, else the one its
// tokenizer.chat_template and general.architecture say.
func ForModel(f *gguf.File, name string) (Template, error) {
	if name != "" {
		return Named(name)
	}
	tmpl, _ := f.ChatTemplate()
	return Detect(f.Architecture(), tmpl)
}

// Detect recognizes a Jinja chat template by the markers in it; tmpl "" means
// the model has none, and then only the architecture qwen3 is unambiguous.
// The default system message is the one the template itself injects, so a
// template that injects none gets none.
func Detect(arch, tmpl string) (Template, error) {
	const hint = "; set models.local.template to qwen2, qwen2.5 or qwen3 if it is a Qwen model"
	if strings.TrimSpace(tmpl) == "" {
		if arch == "qwen3" {
			return Named(string(Qwen3))
		}
		return Template{}, fmt.Errorf("%w: the model has no tokenizer.chat_template and its architecture %q does not say which format it expects%s",
			ErrUnknown, arch, hint)
	}
	if !strings.Contains(tmpl, "<|im_start|>") {
		kind := gguf.TemplateFamily(tmpl)
		if kind == "" {
			kind = "not one clawedge knows"
		}
		return Template{}, fmt.Errorf("%w: the model's chat template (%s) is not ChatML, the Qwen format%s", ErrUnknown, kind, hint)
	}
	t := Template{Family: Qwen2, DefaultSystem: defaultSystem(tmpl)}
	switch {
	case strings.Contains(tmpl, "<think>"):
		t.Family = Qwen3
	case strings.Contains(tmpl, "<tool_call>") || strings.Contains(tmpl, "You are Qwen, created by Alibaba Cloud"):
		t.Family = Qwen25
	}
	return t, nil
}

// defaultSystem finds the system message a template writes as a literal
// ('<|im_start|>system\nYou are ...<|im_end|>'), or "".
func defaultSystem(tmpl string) string {
	const start, end = "<|im_start|>system", "<|im_end|>"
	for rest := tmpl; ; {
		i := strings.Index(rest, start)
		if i < 0 {
			return ""
		}
		rest = rest[i+len(start):]
		var body string
		switch {
		case strings.HasPrefix(rest, `\n`):
			body = rest[2:]
		case strings.HasPrefix(rest, "\n"):
			body = rest[1:]
		default:
			continue
		}
		j := strings.Index(body, end)
		if j <= 0 {
			continue
		}
		if s := body[:j]; !strings.ContainsAny(s, "'\"{}+\\\n") {
			return s
		}
	}
}

// Render writes the prompt for a request: its messages, its tools, and the
// generation prompt that starts the assistant's reply.
func (t Template) Render(req llm.Request) (string, error) {
	prompt, _, err := t.render(req)
	return prompt, err
}

// Layout is where the parts of a rendered prompt end, in bytes, from the
// part that changes least to the part that changes at every message:
//
//	[0, System)      the system turn: system text and tools, the same for
//	                 every message of every session
//	[System, Session) the conversation's earlier turns (as the agent keeps
//	                 them): the same for the rest of this session's messages
//	[Session, end)   this turn: the person's message (with the notes recalled
//	                 for it), its steps so far, the generation prompt
//
// Session is System when there is no earlier turn.
type Layout struct {
	System, Session int
}

// RenderLayout is Render with the prompt's Layout. This turn starts after
// the last assistant message that made no call (an answer, which ends a
// turn), or after the system turn when there is none.
func (t Template) RenderLayout(req llm.Request) (string, Layout, error) {
	prompt, starts, err := t.render(req)
	if err != nil {
		return "", Layout{}, err
	}
	l := Layout{System: FixedLen(prompt)}
	l.Session = l.System
	msgs := req.Messages
	for i := len(msgs) - 2; i >= 1; i-- {
		if msgs[i].Role == llm.RoleAssistant && len(msgs[i].ToolCalls) == 0 {
			if s := starts[i+1]; s > l.System {
				l.Session = s
			}
			break
		}
	}
	return prompt, l, nil
}

// render is Render that also says where each message's text starts in the
// prompt (starts[i] for msgs[i]; the first system message's is 0).
func (t Template) render(req llm.Request) (string, []int, error) {
	msgs := req.Messages
	if len(msgs) == 0 {
		return "", nil, errors.New("chat: no messages")
	}
	for i, m := range msgs {
		switch m.Role {
		case llm.RoleSystem, llm.RoleUser, llm.RoleAssistant, llm.RoleTool:
		default:
			return "", nil, fmt.Errorf("chat: message %d has role %q (want system, user, assistant or tool)", i, m.Role)
		}
		if len(m.ToolCalls) > 0 && m.Role != llm.RoleAssistant {
			return "", nil, fmt.Errorf("chat: message %d: only assistant messages make tool calls", i)
		}
	}
	tools, err := toolLines(req.Tools)
	if err != nil {
		return "", nil, err
	}
	var b strings.Builder
	hasSystem := msgs[0].Role == llm.RoleSystem
	system := t.DefaultSystem
	if hasSystem {
		system = msgs[0].Content
	}

	// The system turn.
	switch {
	case len(tools) > 0:
		b.WriteString("<|im_start|>system\n")
		if t.Family == Qwen3 {
			if hasSystem {
				b.WriteString(system + "\n\n")
			}
		} else {
			b.WriteString(system + "\n\n")
		}
		b.WriteString("# Tools\n\nYou may call one or more functions to assist with the user query.\n\n" +
			"You are provided with function signatures within <tools></tools> XML tags:\n<tools>")
		for _, l := range tools {
			b.WriteString("\n" + l)
		}
		b.WriteString("\n</tools>\n\nFor each function call, return a json object with function name and arguments " +
			"within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": " +
			"<args-json-object>}\n</tool_call><|im_end|>\n")
	case hasSystem || (t.Family != Qwen3 && system != ""):
		b.WriteString("<|im_start|>system\n" + system + "<|im_end|>\n")
	}

	lastQuery := lastQuery(msgs)
	starts := make([]int, len(msgs))
	for i, m := range msgs {
		if i > 0 {
			starts[i] = b.Len()
		}
		switch {
		case m.Role == llm.RoleUser || (m.Role == llm.RoleSystem && i > 0):
			b.WriteString("<|im_start|>" + string(m.Role) + "\n" + m.Content + "<|im_end|>\n")
		case m.Role == llm.RoleSystem:
			// The first system message went into the system turn.
		case m.Role == llm.RoleAssistant:
			if err := t.assistant(&b, msgs, i, lastQuery); err != nil {
				return "", nil, err
			}
		case m.Role == llm.RoleTool:
			if i == 0 || msgs[i-1].Role != llm.RoleTool {
				b.WriteString("<|im_start|>user")
			}
			b.WriteString("\n<tool_response>\n" + m.Content + "\n</tool_response>")
			if i == len(msgs)-1 || msgs[i+1].Role != llm.RoleTool {
				b.WriteString("<|im_end|>\n")
			}
		}
	}
	b.WriteString("<|im_start|>assistant\n")
	if t.Family == Qwen3 && req.NoThink {
		b.WriteString("<think>\n\n</think>\n\n")
	}
	return b.String(), starts, nil
}

// FixedLen is how many bytes at the start of a prompt Render wrote are its
// system turn (the system prompt and the tools): the part that stays the same
// from turn to turn, whose KV state the runner keeps on disk. 0: none.
func FixedLen(prompt string) int {
	const start, end = "<|im_start|>system\n", "<|im_end|>\n"
	if !strings.HasPrefix(prompt, start) {
		return 0
	}
	i := strings.Index(prompt, end)
	if i < 0 {
		return 0
	}
	return i + len(end)
}

func (t Template) assistant(b *strings.Builder, msgs []llm.Message, i, lastQuery int) error {
	m := msgs[i]
	content := m.Content
	if t.Family != Qwen3 {
		if len(m.ToolCalls) == 0 {
			b.WriteString("<|im_start|>assistant\n" + content + "<|im_end|>\n")
			return nil
		}
		b.WriteString("<|im_start|>assistant")
		if content != "" {
			b.WriteString("\n" + content)
		}
		for _, tc := range m.ToolCalls {
			call, err := toolCall(tc)
			if err != nil {
				return fmt.Errorf("chat: message %d: %w", i, err)
			}
			b.WriteString("\n" + call)
		}
		b.WriteString("<|im_end|>\n")
		return nil
	}

	// Qwen3: split off the reasoning, keep it only after the last query.
	reasoning := ""
	if strings.Contains(content, "</think>") {
		before, _, _ := strings.Cut(content, "</think>")
		if k := strings.LastIndex(before, "<think>"); k >= 0 {
			before = before[k+len("<think>"):]
		}
		reasoning = strings.TrimLeft(strings.TrimRight(before, "\n"), "\n")
		content = strings.TrimLeft(content[strings.LastIndex(content, "</think>")+len("</think>"):], "\n")
	}
	if i > lastQuery && (i == len(msgs)-1 || reasoning != "") {
		b.WriteString("<|im_start|>assistant\n<think>\n" + strings.Trim(reasoning, "\n") + "\n</think>\n\n" +
			strings.TrimLeft(content, "\n"))
	} else {
		b.WriteString("<|im_start|>assistant\n" + content)
	}
	for j, tc := range m.ToolCalls {
		if j > 0 || content != "" {
			b.WriteString("\n")
		}
		call, err := toolCall(tc)
		if err != nil {
			return fmt.Errorf("chat: message %d: %w", i, err)
		}
		b.WriteString(call)
	}
	b.WriteString("<|im_end|>\n")
	return nil
}

// lastQuery is the index of the last user message that is not a wrapped tool
// result (Qwen3's ns.last_query_index).
func lastQuery(msgs []llm.Message) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		c := msgs[i].Content
		if msgs[i].Role == llm.RoleUser && !(strings.HasPrefix(c, "<tool_response>") && strings.HasSuffix(c, "</tool_response>")) {
			return i
		}
	}
	return len(msgs) - 1
}

func toolCall(tc llm.ToolCall) (string, error) {
	args := "{}"
	if len(tc.Arguments) > 0 {
		var err error
		if args, err = pyJSON(tc.Arguments); err != nil {
			return "", fmt.Errorf("tool call %s: arguments: %w", tc.Name, err)
		}
	}
	return "<tool_call>\n{\"name\": \"" + tc.Name + "\", \"arguments\": " + args + "}\n</tool_call>", nil
}

// toolLines are the tool definitions as the template's tojson writes them,
// in OpenAI's function shape, one per line.
func toolLines(defs []llm.ToolDef) ([]string, error) {
	var lines []string
	for _, d := range defs {
		var b strings.Builder
		b.WriteString(`{"type": "function", "function": {"name": `)
		pyString(&b, d.Name)
		if d.Doc != "" {
			b.WriteString(`, "description": `)
			pyString(&b, d.Doc)
		}
		params := `{"type": "object", "properties": {}}`
		if len(d.Params) > 0 {
			var err error
			if params, err = pyJSON(d.Params); err != nil {
				return nil, fmt.Errorf("chat: tool %s: parameters: %w", d.Name, err)
			}
		}
		b.WriteString(`, "parameters": ` + params + "}}")
		lines = append(lines, b.String())
	}
	return lines, nil
}
