package grammar

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
)

// JSONSchema returns the JSON Schema of what a call-producing spec allows,
// for servers that constrain output by schema (Ollama's `format`, OpenAI's
// `response_format`): in the json form with one tool, that tool's arguments
// object; otherwise one {"name", "arguments"} object, a choice per tool.
// A schema cannot say "text, then calls", so the qwen and command forms get
// the call object too; in mode any it may instead be {"answer": text}, the
// model's answer to the person (ParseSchemaReply reads both); mode text has no
// schema.
func JSONSchema(spec Spec) ([]byte, error) {
	if err := spec.Check(); err != nil {
		return nil, err
	}
	if spec.Mode == ModeText {
		return nil, errors.New("grammar: mode text has no JSON Schema: it constrains nothing")
	}
	if len(spec.Tools) == 0 {
		return nil, errors.New("grammar: no tools: nothing to describe")
	}
	if err := checkTools(spec.Tools); err != nil {
		return nil, err
	}
	if spec.Form == FormJSON && len(spec.Tools) == 1 {
		return ParamsSchema(spec.Tools[0])
	}
	b := []byte(`{"anyOf":[`)
	for i, t := range spec.Tools {
		args, err := ParamsSchema(t)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"type":"object","properties":{"name":{"const":`...)
		b = appendJSONString(b, t.Name)
		b = append(b, `},"arguments":`...)
		b = append(b, args...)
		b = append(b, `},"required":["name","arguments"],"additionalProperties":false}`...)
	}
	if spec.Mode == ModeAny {
		b = append(b, `,{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"],"additionalProperties":false}`...)
	}
	return append(b, "]}"...), nil
}

// ParseSchemaReply reads a reply that JSONSchema(spec) constrained: the
// arguments of the only tool (the json form with one tool), a call object, or
// in mode any {"answer": text}, which is the Output's text. Like ParseOutput it
// does not trust the constraint: errors are *SyntaxError.
func ParseSchemaReply(spec Spec, text string) (Output, error) {
	if spec.Form == FormJSON && len(spec.Tools) == 1 || spec.Mode == ModeText {
		return ParseOutput(spec, text)
	}
	i := strings.Index(text, JSONTrigger)
	if i < 0 || strings.TrimSpace(text[:i]) != "" {
		return Output{}, errorAtOffset(text, 0, "expected one JSON object, found %q", clip(strings.TrimSpace(text)))
	}
	raw := strings.TrimRight(text[i:], " \t\r\n")
	if spec.Mode == ModeAny {
		var a struct {
			Answer *string `json:"answer"`
		}
		if json.Unmarshal([]byte(raw), &a) == nil && a.Answer != nil {
			return Output{Text: *a.Answer}, nil
		}
	}
	call, err := decodeCall(text, i, i+len(raw))
	if err != nil {
		return Output{}, err
	}
	return Output{Calls: []Call{call}}, nil
}

// ParamsSchema is the JSON Schema of a tool's arguments, properties in the
// spec's order (a model reads them in that order), for tool definitions sent
// to any model.
func ParamsSchema(t ToolSpec) ([]byte, error) {
	b := []byte(`{"type":"object","properties":{`)
	var required []string
	for i, p := range t.Params {
		if err := checkArg(p); err != nil {
			return nil, errors.New("grammar: tool " + t.Name + ": parameter " + p.Name + ": " + err.Error())
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, p.Name)
		b = append(b, ':')
		b = appendArgSchema(b, p)
		if p.Required {
			required = append(required, p.Name)
		}
	}
	b = append(b, '}')
	if len(required) > 0 {
		b = append(b, `,"required":[`...)
		for i, r := range required {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, r)
		}
		b = append(b, ']')
	}
	return append(b, `,"additionalProperties":false}`...), nil
}

func appendArgSchema(b []byte, p ArgSpec) []byte {
	b = append(b, `{"type":`...)
	b = appendJSONString(b, p.Type)
	if p.Doc != "" {
		b = append(b, `,"description":`...)
		b = appendJSONString(b, p.Doc)
	}
	if len(p.Enum) > 0 {
		b = append(b, `,"enum":[`...)
		for i, e := range p.Enum {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, e)
		}
		b = append(b, ']')
	}
	if p.MaxLen > 0 {
		b = append(b, `,"maxLength":`...)
		b = strconv.AppendInt(b, int64(p.MaxLen), 10)
	}
	if p.Min != nil {
		b = append(b, `,"minimum":`...)
		b = strconv.AppendFloat(b, *p.Min, 'g', -1, 64)
	}
	if p.Max != nil {
		b = append(b, `,"maximum":`...)
		b = strconv.AppendFloat(b, *p.Max, 'g', -1, 64)
	}
	if p.Type == "array" && p.Items != nil {
		b = append(b, `,"items":`...)
		b = appendArgSchema(b, *p.Items)
		if p.MinItems > 0 {
			b = append(b, `,"minItems":`...)
			b = strconv.AppendInt(b, int64(p.MinItems), 10)
		}
		if p.MaxItems > 0 {
			b = append(b, `,"maxItems":`...)
			b = strconv.AppendInt(b, int64(p.MaxItems), 10)
		}
	}
	return append(b, '}')
}
