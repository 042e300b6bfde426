package grammar

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Call is one tool call found in a model's output.
type Call struct {
	Name      string
	Arguments json.RawMessage // a JSON object
	Pos       Pos             // where the call starts in the output
}

// Output is a model's output split into its text and its calls.
type Output struct {
	Text  string // the text before the first call
	Calls []Call
	// Command is the parsed command of the command form, with its chains and
	// references intact, so it can run exactly as a person's command would.
	Command *Command
}

// ParseOutput reads a model's output in the spec's form. It does not trust
// the constraint (a remote model may not have had one): every call found is
// checked for shape here, and its arguments are checked against the tool by
// the caller. Errors are *SyntaxError with the line and column in text.
func ParseOutput(spec Spec, text string) (Output, error) {
	if spec.Think {
		// Calls written while thinking are not calls: only the answer is read.
		text = StripThink(text)
	}
	if spec.Mode == ModeText {
		return Output{Text: text}, nil
	}
	switch spec.Form {
	case FormQwen:
		return parseQwen(text)
	case FormCommand:
		return parseCommandOutput(text)
	case FormJSON:
		return parseJSONOutput(spec, text)
	}
	return Output{}, spec.Check()
}

func parseQwen(text string) (Output, error) {
	const open, close = QwenTrigger, "</tool_call>"
	i := strings.Index(text, open)
	if i < 0 {
		return Output{Text: text}, nil
	}
	out := Output{Text: text[:i]}
	for i < len(text) {
		if strings.TrimSpace(text[i:]) == "" {
			break
		}
		if !strings.HasPrefix(text[i:], open) {
			skip := len(text[i:]) - len(strings.TrimLeft(text[i:], " \t\r\n"))
			if !strings.HasPrefix(text[i+skip:], open) {
				return out, errorAtOffset(text, i+skip, "expected %s or the end after a tool call, found %q", open, clip(text[i+skip:]))
			}
			i += skip
		}
		body := i + len(open)
		end := strings.Index(text[body:], close)
		if end < 0 {
			return out, errorAtOffset(text, i, "%s is not closed by %s", open, close)
		}
		call, err := decodeCall(text, body, body+end)
		if err != nil {
			return out, err
		}
		out.Calls = append(out.Calls, call)
		i = body + end + len(close)
	}
	return out, nil
}

// decodeCall reads {"name": ..., "arguments": {...}} from text[from:to].
func decodeCall(text string, from, to int) (Call, error) {
	raw := text[from:to]
	lead := len(raw) - len(strings.TrimLeft(raw, " \t\r\n"))
	var c struct {
		Name      *string         `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := decodeStrict(raw, &c); err != nil {
		return Call{}, jsonError(text, from, raw, err)
	}
	at := errorAtOffset(text, from+lead, "")
	if c.Name == nil || *c.Name == "" {
		return Call{}, errorAtOffset(text, from+lead, "the tool call has no \"name\"")
	}
	args := c.Arguments
	if len(args) > 0 && args[0] == '"' {
		// Some models write the arguments as a JSON string holding the object.
		var s string
		if json.Unmarshal(args, &s) == nil {
			args = json.RawMessage(s)
		}
	}
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	if t := bytes.TrimSpace(args); len(t) == 0 || t[0] != '{' || !json.Valid(t) {
		return Call{}, errorAtOffset(text, from+lead, "the arguments of %s are not a JSON object", *c.Name)
	}
	return Call{Name: *c.Name, Arguments: args, Pos: at.Pos}, nil
}

func decodeStrict(raw string, v any) error {
	dec := json.NewDecoder(strings.NewReader(raw))
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("text after the JSON object")
	}
	return nil
}

// jsonError places a decoding error inside text.
func jsonError(text string, from int, raw string, err error) error {
	off := len(raw)
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = int(se.Offset)
	case errors.As(err, &te):
		off = int(te.Offset)
	}
	return errorAtOffset(text, from+min(off, len(raw)), "invalid tool call JSON: %v", err)
}

func parseCommandOutput(text string) (Output, error) {
	i := strings.Index(text, CommandTrigger)
	if i < 0 {
		return Output{Text: text}, nil
	}
	cmd, err := Parse(strings.TrimRight(text[i:], " \t\r\n"), ParseOptions{})
	if err != nil {
		var se *SyntaxError
		if errors.As(err, &se) {
			line, col := se.Line, se.Column
			prefix := text[:i]
			if line == 1 {
				col += i - (strings.LastIndexByte(prefix, '\n') + 1)
			}
			line += strings.Count(prefix, "\n")
			return Output{Text: prefix}, &SyntaxError{Pos: Pos{line, col}, Msg: se.Msg, SourceLine: se.SourceLine}
		}
		return Output{Text: text[:i]}, err
	}
	out := Output{Text: text[:i], Command: cmd}
	for _, st := range cmd.Stages {
		for _, inv := range st.Calls {
			args := []byte{'{'}
			for k, p := range inv.Params {
				if k > 0 {
					args = append(args, ',')
				}
				args = appendJSONString(args, p.Key)
				args = append(args, ':')
				args = appendPlainJSON(args, p.Value)
			}
			args = append(args, '}')
			pos := inv.Pos
			if pos.Line == 1 {
				pos.Column += i - (strings.LastIndexByte(text[:i], '\n') + 1)
			}
			pos.Line += strings.Count(text[:i], "\n")
			out.Calls = append(out.Calls, Call{Name: inv.Tool(), Arguments: args, Pos: pos})
		}
	}
	return out, nil
}

// appendPlainJSON writes a value as plain JSON; a reference becomes its text
// ("$prev.level"), which only a command run resolves.
func appendPlainJSON(b []byte, v Value) []byte {
	if v.Kind == Array {
		b = append(b, '[')
		for i, it := range v.Items {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendPlainJSON(b, it)
		}
		return append(b, ']')
	}
	if v.Kind == Ref {
		return appendJSONString(b, v.String())
	}
	j, err := json.Marshal(v.Plain())
	if err != nil { // NaN or an infinity: not in any parsed command
		return appendJSONString(b, v.String())
	}
	return append(b, j...)
}

func parseJSONOutput(spec Spec, text string) (Output, error) {
	i := strings.Index(text, JSONTrigger)
	if i < 0 {
		if spec.Mode == ModeCalls {
			return Output{}, errorAtOffset(text, len(text), "expected a JSON object, found none")
		}
		return Output{Text: text}, nil
	}
	out := Output{Text: text[:i]}
	if len(spec.Tools) == 1 {
		raw := strings.TrimRight(text[i:], " \t\r\n")
		var obj map[string]json.RawMessage
		if err := decodeStrict(raw, &obj); err != nil {
			return out, jsonError(text, i, raw, err)
		}
		at := errorAtOffset(text, i, "")
		out.Calls = []Call{{Name: spec.Tools[0].Name, Arguments: json.RawMessage(raw), Pos: at.Pos}}
		return out, nil
	}
	call, err := decodeCall(text, i, len(text))
	if err != nil {
		return out, err
	}
	out.Calls = []Call{call}
	return out, nil
}

func clip(s string) string {
	if len(s) > 20 {
		return s[:20] + "…"
	}
	return s
}

// ParamsFromJSON turns a call's JSON arguments into the params tools
// validate, in the order they were written. Numbers without a fraction or
// exponent are integers; nested objects and null are refused.
func ParamsFromJSON(args json.RawMessage) ([]Param, error) {
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("arguments: %v", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("arguments: expected a JSON object, found %v", tok)
	}
	var params []Param
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("arguments: %v", err)
		}
		key := tok.(string) // object keys are strings
		if seen[key] {
			return nil, fmt.Errorf("arguments: %q is given twice", key)
		}
		seen[key] = true
		v, err := jsonToValue(dec, 0)
		if err != nil {
			return nil, fmt.Errorf("arguments: %s: %v", key, err)
		}
		params = append(params, Param{Key: key, Value: v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("arguments: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("arguments: text after the JSON object")
	}
	return params, nil
}

func jsonToValue(dec *json.Decoder, depth int) (Value, error) {
	tok, err := dec.Token()
	if err != nil {
		return Value{}, err
	}
	switch t := tok.(type) {
	case string:
		return Value{Kind: String, Str: t}, nil
	case bool:
		return Value{Kind: Bool, Bool: t}, nil
	case json.Number:
		if !strings.ContainsAny(t.String(), ".eE") {
			if n, err := t.Int64(); err == nil {
				return Value{Kind: Int, Int: n}, nil
			}
		}
		f, err := t.Float64()
		if err != nil {
			return Value{}, fmt.Errorf("number %s is out of range", t)
		}
		return Value{Kind: Float, Float: f}, nil
	case json.Delim:
		if t != '[' {
			return Value{}, errors.New("nested objects are not supported")
		}
		if depth >= MaxArrayDepth {
			return Value{}, fmt.Errorf("arrays nested deeper than %d", MaxArrayDepth)
		}
		arr := Value{Kind: Array, Items: []Value{}}
		for dec.More() {
			it, err := jsonToValue(dec, depth+1)
			if err != nil {
				return Value{}, err
			}
			arr.Items = append(arr.Items, it)
		}
		if _, err := dec.Token(); err != nil {
			return Value{}, err
		}
		return arr, nil
	case nil:
		return Value{}, errors.New("null is not a value")
	}
	return Value{}, fmt.Errorf("unexpected %v", tok)
}
