package agent

// The seam between the agent and the constraint work happening in grammar/ and tools/
// (grammar.ParseOutput, tools.Spec.Grammar, tools.Spec.ValidateJSON and a spec's JSON
// Schema). The agent needs four things from there; until they land, these small
// functions provide them, and the loop calls only these four names:
//
//	toolSchema(spec, compact)   the JSON Schema of a spec's parameters, for llm.ToolDef
//	grammarSpec(spec)           a spec as the constraint compiler sees it
//	callParams(spec, args)      a model's JSON arguments as command-language params
//	parseQwen(text)             <tool_call> blocks in a local model's text

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/llm"
	"github.com/clawedge/clawedge/tools"
)

// toolSchema writes {"type": "object", "properties": {...}, "required": [...]} with the
// keys in a fixed order (what the model reads first is what matters most). compact
// drops parameter documentation that only repeats the name or type, and shortens the
// rest, for the local model's small context.
func toolSchema(s tools.Spec, compact bool) json.RawMessage {
	var b bytes.Buffer
	b.WriteString(`{"type":"object","properties":{`)
	var req []string
	for i, p := range s.Params {
		if i > 0 {
			b.WriteByte(',')
		}
		writeJSONString(&b, p.Name)
		b.WriteByte(':')
		writeParamSchema(&b, p, compact)
		if p.Required {
			req = append(req, p.Name)
		}
	}
	b.WriteString("}")
	if len(req) > 0 {
		b.WriteString(`,"required":[`)
		for i, r := range req {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSONString(&b, r)
		}
		b.WriteString("]")
	}
	b.WriteString("}")
	return b.Bytes()
}

func writeParamSchema(b *bytes.Buffer, p tools.Param, compact bool) {
	b.WriteString(`{"type":`)
	writeJSONString(b, string(p.Type))
	if doc := p.Doc; doc != "" && !(compact && len(p.Enum) > 0 && p.Type == tools.KindString && strings.HasPrefix(doc, "the ")) {
		if compact {
			doc = shorten(doc, 60)
		}
		b.WriteString(`,"description":`)
		writeJSONString(b, doc)
	}
	if len(p.Enum) > 0 {
		b.WriteString(`,"enum":[`)
		for i, e := range p.Enum {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSONString(b, e)
		}
		b.WriteString("]")
	}
	if p.Min != nil {
		b.WriteString(`,"minimum":` + tools.FormatNumber(*p.Min))
	}
	if p.Max != nil {
		b.WriteString(`,"maximum":` + tools.FormatNumber(*p.Max))
	}
	if p.MaxLen > 0 {
		b.WriteString(`,"maxLength":` + strconv.Itoa(p.MaxLen))
	}
	if p.Default != nil && !compact {
		if d, err := json.Marshal(p.Default); err == nil {
			b.WriteString(`,"default":`)
			b.Write(d)
		}
	}
	if p.Type == tools.KindArray && p.Items != nil {
		b.WriteString(`,"items":`)
		writeParamSchema(b, *p.Items, compact)
		if p.MinItems > 0 {
			b.WriteString(`,"minItems":` + strconv.Itoa(p.MinItems))
		}
		if p.MaxItems > 0 {
			b.WriteString(`,"maxItems":` + strconv.Itoa(p.MaxItems))
		}
	}
	b.WriteString("}")
}

func writeJSONString(b *bytes.Buffer, s string) {
	enc, _ := json.Marshal(s)
	// json.Marshal escapes <, > and & for HTML; models read them better plain.
	enc = bytes.ReplaceAll(enc, []byte(`\u003c`), []byte("<"))
	enc = bytes.ReplaceAll(enc, []byte(`\u003e`), []byte(">"))
	enc = bytes.ReplaceAll(enc, []byte(`\u0026`), []byte("&"))
	b.Write(enc)
}

// grammarSpec converts a tool spec for the constraint compiler.
func grammarSpec(s tools.Spec) grammar.ToolSpec {
	out := grammar.ToolSpec{Name: s.Name, Doc: s.Doc}
	for _, p := range s.Params {
		out.Params = append(out.Params, argSpec(p))
	}
	return out
}

func argSpec(p tools.Param) grammar.ArgSpec {
	a := grammar.ArgSpec{Name: p.Name, Doc: p.Doc, Type: string(p.Type), Required: p.Required, Enum: p.Enum,
		Min: p.Min, Max: p.Max, MaxLen: p.MaxLen, MinItems: p.MinItems, MaxItems: p.MaxItems}
	if p.Items != nil {
		it := argSpec(*p.Items)
		a.Items = &it
	}
	return a
}

// callParams converts a model's JSON arguments to command-language params, typed by
// the spec where JSON is ambiguous (1 is an integer for an integer parameter, 1.0 is
// not). Everything is checked again by Spec.Validate; this only refuses what has no
// command-language form (objects, null, nested arrays). A string never becomes a
// reference: "$env.TOKEN" from a model stays the literal text.
func callParams(s tools.Spec, raw json.RawMessage) ([]grammar.Param, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var obj map[string]json.RawMessage
	if err := dec.Decode(&obj); err != nil {
		return nil, fmt.Errorf("arguments are not a JSON object: %v", err)
	}
	// Params in the spec's order, then unknown ones (which Validate names).
	var keys []string
	for _, p := range s.Params {
		if _, ok := obj[p.Name]; ok {
			keys = append(keys, p.Name)
		}
	}
	for k := range obj {
		if _, known := paramOf(s, k); !known {
			keys = append(keys, k)
		}
	}
	out := make([]grammar.Param, 0, len(keys))
	for _, k := range keys {
		p, _ := paramOf(s, k)
		v, err := jsonValue(obj[k], p.Type, p.Items, 0)
		if err != nil {
			return nil, fmt.Errorf("parameter %q: %v", k, err)
		}
		out = append(out, grammar.Param{Key: k, Value: v})
	}
	return out, nil
}

func paramOf(s tools.Spec, name string) (tools.Param, bool) {
	for _, p := range s.Params {
		if p.Name == name {
			return p, true
		}
	}
	return tools.Param{}, false
}

func jsonValue(raw json.RawMessage, want tools.Kind, items *tools.Param, depth int) (grammar.Value, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return grammar.Value{}, err
	}
	switch x := v.(type) {
	case string:
		return grammar.StringValue(x), nil
	case bool:
		return grammar.BoolValue(x), nil
	case json.Number:
		if i, err := strconv.ParseInt(x.String(), 10, 64); err == nil && want != tools.KindNumber {
			return grammar.IntValue(i), nil
		}
		f, err := x.Float64()
		if err != nil || math.IsInf(f, 0) {
			return grammar.Value{}, fmt.Errorf("%s is not a usable number", x)
		}
		if want == tools.KindInteger && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			return grammar.IntValue(int64(f)), nil // 1.0 from a model that writes floats
		}
		return grammar.FloatValue(f), nil
	case []any:
		if depth > 0 {
			return grammar.Value{}, errors.New("arrays of arrays are not supported")
		}
		var elems []json.RawMessage
		json.Unmarshal(raw, &elems)
		vals := make([]grammar.Value, 0, len(elems))
		iw := tools.Kind("")
		if items != nil {
			iw = items.Type
		}
		for i, e := range elems {
			ev, err := jsonValue(e, iw, nil, depth+1)
			if err != nil {
				return grammar.Value{}, fmt.Errorf("item %d: %v", i+1, err)
			}
			vals = append(vals, ev)
		}
		return grammar.ArrayValue(vals...), nil
	case nil:
		return grammar.Value{}, errors.New("is null; leave it out instead")
	}
	return grammar.Value{}, errors.New("objects are not accepted")
}

// parseQwen splits a local model's text into what it says and the calls it makes:
// Qwen's <tool_call>{"name": ..., "arguments": {...}}</tool_call> blocks. A block the
// model did not close (it stopped at the length limit) is still read when its JSON is
// whole. A block that does not parse is returned as an error for the repair message.
func parseQwen(text string) (say string, calls []llm.ToolCall, err error) {
	const open, close = "<tool_call>", "</tool_call>"
	i := strings.Index(text, open)
	if i < 0 {
		return strings.TrimSpace(text), nil, nil
	}
	say = strings.TrimSpace(text[:i])
	rest := text[i:]
	for n := 1; ; n++ {
		rest = strings.TrimLeft(rest, " \t\r\n")
		if rest == "" {
			return say, calls, nil
		}
		if !strings.HasPrefix(rest, open) {
			// Text after the calls: models sometimes add a line; it is not shown, since
			// the results are not known yet.
			return say, calls, nil
		}
		rest = rest[len(open):]
		body := rest
		if j := strings.Index(rest, close); j >= 0 {
			body, rest = rest[:j], rest[j+len(close):]
		} else {
			rest = ""
		}
		var c struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		if e := json.Unmarshal([]byte(strings.TrimSpace(body)), &c); e != nil || c.Name == "" {
			if e == nil {
				e = errors.New(`no "name"`)
			}
			return say, calls, fmt.Errorf("tool call %d is not {\"name\": ..., \"arguments\": {...}}: %v", n, e)
		}
		calls = append(calls, llm.ToolCall{ID: fmt.Sprintf("call_%d", n), Name: c.Name, Arguments: c.Arguments})
	}
}
