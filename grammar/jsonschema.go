package grammar

import (
	"bytes"
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
	if err := checkCallTools(spec.Tools, spec.Form); err != nil {
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

// ParamsSchema is the JSON Schema of a tool's arguments as a server enforces
// it: closed (no other properties), every bound stated. The parameters are
// checked (checkDecl).
func ParamsSchema(t ToolSpec) ([]byte, error) {
	if err := checkParams(t.Shaped(), true); err != nil {
		return nil, errors.New("grammar: tool " + t.Name + ": " + err.Error())
	}
	return ToolSchema(t, SchemaOptions{Closed: true}), nil
}

// OutputSchema is the JSON Schema of t's result fields (t.Output), what an
// MCP host is told as the tool's outputSchema; nil when t declares none. It
// is open: a result may carry fields beyond the declared ones.
func OutputSchema(t ToolSpec) []byte {
	if len(t.Output) == 0 {
		return nil
	}
	return append(appendObjectSchema([]byte(`{"type":"object"`), t.Output, SchemaOptions{}), '}')
}

// ServerMaxRepeat is the largest maxLength, minItems or maxItems a schema sent
// to a server states (SchemaOptions.Closed). llama-server turns a schema into
// a grammar whose repetitions llama.cpp bounds (2,000 rules: Debian's 0.7.0
// refuses a maxItems of 1,999 or a maxLength of 1,999 beside an array, older
// builds any count above 2,000). A larger bound is left out: the server lets
// the model write more, and the call is still validated against the spec
// (ShrunkForServers says which bounds, for `clawedge tools check`).
const ServerMaxRepeat = 1000

// ShrunkForServers lists the bounds of a tool that the JSON Schema sent to a
// server leaves out (ServerMaxRepeat), as "param: maxLength 5000".
func ShrunkForServers(t ToolSpec) []string {
	var out []string
	var walk func(path string, p ArgSpec)
	walk = func(path string, p ArgSpec) {
		for _, b := range []struct {
			name string
			n    int
		}{{"maxLength", p.MaxLen}, {"minItems", p.MinItems}, {"maxItems", p.MaxItems}} {
			if b.n > ServerMaxRepeat {
				out = append(out, path+": "+b.name+" "+strconv.Itoa(b.n))
			}
		}
		if p.Items != nil {
			walk(path+"[]", *p.Items)
		}
		for _, q := range p.Props {
			walk(path+"."+q.Name, q)
		}
		for i, q := range p.AnyOf {
			walk(path+"|"+strconv.Itoa(i+1), q)
		}
	}
	for _, p := range t.Shaped() {
		walk(p.Name, p)
	}
	return out
}

// SchemaOptions shape the JSON Schema of a tool's arguments.
type SchemaOptions struct {
	// Closed adds "additionalProperties": false: a schema a server enforces.
	// A schema only shown to a model leaves it out (fewer tokens).
	Closed bool
	// Compact is the local model's form, measured against its 1,500-token
	// budget: an optional parameter keeps only its type and enum (its default
	// applies when the model leaves it out), a required one keeps a short
	// description (Brief) unless its enum says it all, and lengths and
	// defaults are left to validation.
	Compact bool
	// Brief shortens a description in the compact form; nil keeps it.
	Brief func(string) string
}

// ToolSchema writes {"type": "object", "properties": {...}, "required": [...]}
// for the arguments a model writes (t.Shaped()), properties in the spec's order (what a model reads first
// is what matters most). It is the one JSON Schema writer: the tool
// definitions shown to models and the schemas sent to servers both come from
// it. It does not check the spec (ParamsSchema does).
func ToolSchema(t ToolSpec, o SchemaOptions) []byte {
	return append(appendObjectSchema([]byte(`{"type":"object"`), t.Shaped(), o), '}')
}

// appendObjectSchema writes the properties, required and closedness of an
// object's schema after its opening, before its closing brace.
func appendObjectSchema(b []byte, params []ArgSpec, o SchemaOptions) []byte {
	b = append(b, `,"properties":{`...)
	var required []string
	for i, p := range params {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, p.Name)
		b = append(b, ':')
		b = appendArgSchema(b, p, o)
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
	if o.Closed {
		b = append(b, `,"additionalProperties":false`...)
	}
	return b
}

func appendArgSchema(b []byte, p ArgSpec, o SchemaOptions) []byte {
	if p.Type == "any_of" {
		b = append(b, `{"anyOf":[`...)
		for i, c := range p.AnyOf {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendArgSchema(b, c, o)
		}
		b = append(b, ']')
	} else if p.Type == TypeAny {
		// Any JSON value: no type; the keywords after it each start with
		// a comma, which the first one loses.
		rest := appendArgRest(nil, p, o)
		b = append(b, '{')
		if rest[0] == ',' {
			rest = rest[1:]
		}
		return append(b, rest...)
	} else {
		b = append(b, `{"type":`...)
		b = appendJSONString(b, string(p.Type))
	}
	return appendArgRest(b, p, o)
}

// appendArgRest writes the keywords of p's schema after its type, each
// with its leading comma, and the closing brace.
func appendArgRest(b []byte, p ArgSpec, o SchemaOptions) []byte {
	brief := o.Compact && !p.Required && p.Name != "" // array items have no name: described by their array
	if doc := p.Doc; doc != "" && !brief && !(o.Compact && len(p.Enum) > 0 && strings.HasPrefix(doc, "the ")) {
		if o.Compact && o.Brief != nil {
			doc = o.Brief(doc)
		}
		b = append(b, `,"description":`...)
		b = appendJSONString(b, doc)
	}
	if len(p.Values) > 0 {
		b = append(b, `,"enum":[`...)
		for i, v := range p.Values {
			if i > 0 {
				b = append(b, ',')
			}
			var c bytes.Buffer
			if json.Compact(&c, v) != nil {
				c.Reset()
				c.WriteString("null") // checkDecl refuses it; ToolSchema does not check
			}
			b = append(b, c.Bytes()...)
		}
		b = append(b, ']')
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
	if p.Min != nil && !brief {
		b = append(b, `,"minimum":`...)
		b = strconv.AppendFloat(b, *p.Min, 'f', -1, 64)
	}
	if p.Max != nil && !brief {
		b = append(b, `,"maximum":`...)
		b = strconv.AppendFloat(b, *p.Max, 'f', -1, 64)
	}
	if p.MaxLen > 0 && !o.Compact && !(o.Closed && p.MaxLen > ServerMaxRepeat) {
		b = append(b, `,"maxLength":`...)
		b = strconv.AppendInt(b, int64(p.MaxLen), 10)
	}
	if p.Default != nil && !o.Compact {
		if d, err := json.Marshal(p.Default); err == nil {
			b = append(b, `,"default":`...)
			b = append(b, d...)
		}
	}
	if p.Type == "array" && p.Items != nil {
		b = append(b, `,"items":`...)
		b = appendArgSchema(b, *p.Items, o)
		if p.MinItems > 0 && !(o.Closed && p.MinItems > ServerMaxRepeat) {
			b = append(b, `,"minItems":`...)
			b = strconv.AppendInt(b, int64(p.MinItems), 10)
		}
		if p.MaxItems > 0 && !(o.Closed && p.MaxItems > ServerMaxRepeat) {
			b = append(b, `,"maxItems":`...)
			b = strconv.AppendInt(b, int64(p.MaxItems), 10)
		}
	}
	if p.Type == "object" && !p.AnyProps && len(p.Values) == 0 {
		// A free-form object stays open: any properties.
		b = appendObjectSchema(b, p.Props, o)
	}
	return append(b, '}')
}
