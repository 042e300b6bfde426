package synth

import (
	"fmt"

	"github.com/clawedge/clawedge/localmodel/gguf"
)

// Qwen3's vocabulary is Qwen2's with six of the reserved [PAD<id>] slots given
// text: the tool-call and tool-response markers and the reasoning delimiters,
// each one token, as user-defined (not control) tokens, so that a thinking
// model writes "<think>" as text in one step, as a trained Qwen3 does.
var qwen3Tokens = map[int]string{
	151657: "<tool_call>",
	151658: "</tool_call>",
	151665: "<tool_response>",
	151666: "</tool_response>",
	151667: "<think>",
	151668: "</think>",
}

// tokenUserDefined is llama.cpp's LLAMA_TOKEN_TYPE_USER_DEFINED.
const tokenUserDefined = 4

const keyTokenType = "tokenizer.ggml.token_type"

// qwen3ChatTemplate is Qwen3's chat template, shortened to what it does for
// a conversation with tools: the system message with the tool signatures,
// <tool_call> JSON per call, tool results in <tool_response>, past reasoning
// dropped, and enable_thinking=false writing an empty <think> section. It is
// what makes the model file say "qwen3" to chat.Detect and to llama.cpp.
const qwen3ChatTemplate = `{%- if tools %}{{- '<|im_start|>system\n' }}{%- if messages[0].role == 'system' %}{{- messages[0].content + '\n\n' }}{%- endif %}` +
	`{{- "# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>" }}` +
	`{%- for tool in tools %}{{- "\n" }}{{- tool | tojson }}{%- endfor %}` +
	`{{- "\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n" }}` +
	`{%- elif messages[0].role == 'system' %}{{- '<|im_start|>system\n' + messages[0].content + '<|im_end|>\n' }}{%- endif %}` +
	`{%- for message in messages %}{%- if message.role == "user" or (message.role == "system" and not loop.first) %}{{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>\n' }}` +
	`{%- elif message.role == "assistant" %}{%- set content = message.content %}{%- if '</think>' in content %}{%- set content = content.split('</think>')[-1].lstrip('\n') %}{%- endif %}` +
	`{{- '<|im_start|>assistant\n' + content }}{%- for tool_call in message.tool_calls %}{{- '\n<tool_call>\n{"name": "' + tool_call.function.name + '", "arguments": ' + (tool_call.function.arguments | tojson) + '}\n</tool_call>' }}{%- endfor %}{{- '<|im_end|>\n' }}` +
	`{%- elif message.role == "tool" %}{{- '<|im_start|>user\n<tool_response>\n' + message.content + '\n</tool_response><|im_end|>\n' }}{%- endif %}{%- endfor %}` +
	`{%- if add_generation_prompt %}{{- '<|im_start|>assistant\n' }}{%- if enable_thinking is defined and enable_thinking is false %}{{- '<think>\n\n</think>\n\n' }}{%- endif %}{%- endif %}`

// asQwen3 turns the copied Qwen2 tokenizer metadata into Qwen3's: the six
// added tokens where the vocabulary has their reserved slots, and the Qwen3
// chat template. A smaller vocabulary (the tests' own), or one without token
// types, keeps its tokens and gets only the template.
func asQwen3(kv []gguf.KV) ([]gguf.KV, error) {
	out := make([]gguf.KV, 0, len(kv)+1)
	var tokens []string
	var types []int32
	for _, e := range kv {
		switch e.Key {
		case gguf.KeyTokens:
			tokens, _ = e.Value.Strings()
		case keyTokenType:
			t, ok := e.Value.Any().([]int32)
			if !ok {
				return nil, fmt.Errorf("vocabulary: %s is %s, want an int32 array", keyTokenType, e.Value.Type())
			}
			types = t
		}
	}
	if len(types) == len(tokens) {
		tokens, types = append([]string(nil), tokens...), append([]int32(nil), types...)
		for id, text := range qwen3Tokens {
			if id < len(tokens) && tokens[id] == fmt.Sprintf("[PAD%d]", id) {
				tokens[id], types[id] = text, tokenUserDefined
			}
		}
	}
	for _, e := range kv {
		switch e.Key {
		case gguf.KeyTokens:
			e.Value = gguf.Array(tokens)
		case keyTokenType:
			e.Value = gguf.Array(types)
		case gguf.KeyChatTemplate:
			continue
		}
		out = append(out, e)
	}
	return append(out, gguf.KV{Key: gguf.KeyChatTemplate, Value: gguf.String(qwen3ChatTemplate)}), nil
}
