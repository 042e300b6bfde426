package grammar

import (
	"fmt"
	"strings"
)

// Triggers: where a call starts in each form. In mode any the text before the
// trigger is free (it cannot contain the trigger) and the constraint takes
// over from it.
const (
	QwenTrigger    = "<tool_call>"
	CommandTrigger = "@"
	JSONTrigger    = "{"
)

// Constraint is a compiled Spec: a deterministic byte-level automaton (it
// implements Automaton) whose accepted outputs are exactly the outputs the
// spec allows. Compile it once per tool set; it is immutable and safe for
// concurrent use.
type Constraint struct {
	*dfa
	spec Spec
	root node
}

// Spec returns what the constraint was compiled from.
func (c *Constraint) Spec() Spec { return c.spec }

// Compile checks a spec and compiles it. Errors name the tool and parameter
// that cannot be expressed or satisfied.
func Compile(spec Spec) (*Constraint, error) {
	root, err := buildRoot(spec)
	if err != nil {
		return nil, err
	}
	d, err := compileNode(root)
	if err != nil {
		return nil, err
	}
	return &Constraint{dfa: d, spec: spec, root: root}, nil
}

func compileNode(root node) (d *dfa, err error) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(tooLarge); !ok {
				panic(r)
			}
			d, err = nil, errTooLarge
		}
	}()
	var a nfa
	start := a.state()
	return determinize(&a, start, a.build(root, start))
}

func (s Spec) maxCalls() int {
	if s.MaxCalls == 0 {
		return DefaultMaxCalls
	}
	return s.MaxCalls
}

func buildRoot(spec Spec) (node, error) {
	root, err := buildAnswer(spec)
	if err != nil || !spec.Think {
		return root, err
	}
	return seq{opt(thinkSection), root}, nil
}

// buildAnswer is the language of the answer proper, after any thinking.
func buildAnswer(spec Spec) (node, error) {
	if err := spec.Check(); err != nil {
		return nil, err
	}
	trigger := map[Form]string{FormQwen: QwenTrigger, FormCommand: CommandTrigger, FormJSON: JSONTrigger}[spec.Form]
	text := rule{"text", until{trigger}}
	if spec.Mode == ModeText {
		return text, nil
	}
	if len(spec.Tools) == 0 {
		if spec.Mode == ModeCalls {
			return nil, fmt.Errorf("grammar: mode calls with no tools: no output is possible")
		}
		return text, nil
	}
	var calls node
	var err error
	switch spec.Form {
	case FormQwen:
		calls, err = qwenCalls(spec.Tools, spec.maxCalls())
	case FormCommand:
		calls, err = commandCalls(spec.Tools, spec.maxCalls())
	case FormJSON:
		calls, err = jsonAnswer(spec.Tools)
	}
	if err != nil {
		return nil, err
	}
	if spec.Mode == ModeCalls {
		return calls, nil
	}
	return seq{text, opt(calls)}, nil
}

// qwenCalls: <tool_call>\n{"name": "…", "arguments": {…}}\n</tool_call>
// blocks separated by a newline, as Qwen's chat template writes them.
func qwenCalls(tools []ToolSpec, maxCalls int) (node, error) {
	call, err := jsonCall(tools)
	if err != nil {
		return nil, err
	}
	block := rule{"call", seq{lit(QwenTrigger + "\n"), call, lit("\n</tool_call>")}}
	return rule{"calls", seq{block, rep{seq{lit("\n"), block}, 0, maxCalls - 1}}}, nil
}

// jsonCall is {"name": "NAME", "arguments": {...}} for any of the tools.
func jsonCall(tools []ToolSpec) (node, error) {
	if err := checkCallTools(tools, jsonSyntax.form); err != nil {
		return nil, err
	}
	var choices alt
	for i, t := range tools {
		args, err := jsonArgs(i, t)
		if err != nil {
			return nil, err
		}
		choices = append(choices, seq{lit(jsonString(t.Name) + `, "arguments": `), args})
	}
	return seq{lit(`{"name": `), choices, lit("}")}, nil
}

// jsonAnswer is the json form: the arguments object of the only tool, or a
// {"name", "arguments"} object when there are several.
func jsonAnswer(tools []ToolSpec) (node, error) {
	if len(tools) == 1 {
		if err := checkCallTools(tools, jsonSyntax.form); err != nil {
			return nil, err
		}
		return jsonArgs(0, tools[0])
	}
	return jsonCall(tools)
}

func jsonArgs(i int, t ToolSpec) (node, error) {
	obj, err := jsonSyntax.object(t)
	if err != nil {
		return nil, err
	}
	return rule{ruleName("args", i, t.Name), seq{lit("{"), obj, lit("}")}}, nil
}

// syntax is how a form writes a tool's parameters: keys, strings, arrays.
type syntax struct {
	key              func(string) string // a parameter's key as written before its value
	sep              string              // between parameters
	quote            func(string) string // an enum value
	char             node                // one character of a free string
	open, comma, end string              // an array
	minItems         int                 // the fewest items an array can be written with
	// nested: objects and unions can be written (the JSON forms). The
	// command language has neither, and the tools' validation of its values
	// does not either.
	nested bool
	form   Form // which of a tool's parameters it writes (ToolSpec.callParams)
}

var jsonSyntax = syntax{
	key: func(name string) string { return jsonString(name) + ": " }, sep: ", ",
	quote: jsonString, char: jsonChar, open: "[", comma: ", ", end: "]", nested: true, form: FormJSON,
}

// The command language has no empty array: at least one item.
var commandSyntax = syntax{
	key: func(name string) string { return name + "=" }, sep: ";",
	quote: func(s string) string { return Value{Kind: String, Str: s}.String() },
	char:  commandChar, open: "(", comma: ",", end: ")", minItems: 1, form: FormCommand,
}

// object is the parameters of a tool, in the spec's order, without braces.
func (x syntax) object(t ToolSpec) (node, error) {
	obj, err := x.fields(t.callParams(x.form), 0)
	if err != nil {
		return nil, fmt.Errorf("grammar: tool %s: %w", t.Name, err)
	}
	return obj, nil
}

// fields is the properties of an object (a tool's parameters at depth 0), in
// order, without braces.
func (x syntax) fields(params []ArgSpec, depth int) (node, error) {
	fields := make([]field, 0, len(params))
	for _, p := range params {
		v, err := x.value(p, depth)
		if err != nil {
			return nil, fmt.Errorf("parameter %s: %w", p.Name, err)
		}
		fields = append(fields, field{key: x.key(p.Name), value: v, required: p.Required})
	}
	return object{sep: x.sep, fields: fields}, nil
}

// value is one parameter's value; depth counts the objects and arrays it is in.
func (x syntax) value(p ArgSpec, depth int) (node, error) {
	if (p.Type == TypeObject || p.Type == TypeAnyOf || p.Type == TypeAny || len(p.Values) > 0) && !x.nested {
		what := map[ArgType]string{TypeObject: "an object", TypeAnyOf: "a union of types", TypeAny: "any JSON value"}[p.Type]
		if len(p.Values) > 0 {
			what = "a choice of JSON values"
		}
		return nil, fmt.Errorf("%s cannot be written in the command language (use the qwen or json form)", what)
	}
	if depth > MaxNesting {
		return nil, fmt.Errorf("nested deeper than %d objects and arrays", MaxNesting)
	}
	if len(p.Values) > 0 {
		var choices alt
		for i, v := range p.Values {
			text, err := jsonLiteral(v)
			if err != nil {
				return nil, fmt.Errorf("value %d: %w", i+1, err)
			}
			choices = append(choices, lit(text))
		}
		return choices, nil
	}
	switch p.Type {
	case "string":
		if len(p.Enum) > 0 {
			var choices alt
			for _, e := range p.Enum {
				choices = append(choices, lit(x.quote(e)))
			}
			return choices, nil
		}
		return seq{lit(`"`), rep{x.char, 0, maxLen(p.MaxLen)}, lit(`"`)}, nil
	case "integer", "number":
		return numberNode(p.Type == "integer", p.Min, p.Max)
	case "boolean":
		return alt{lit("true"), lit("false")}, nil
	case "array":
		item, err := x.value(*p.Items, depth+1)
		if err != nil {
			return nil, fmt.Errorf("items: %w", err)
		}
		return list(x.open, x.comma, x.end, item, max(p.MinItems, x.minItems), p.MaxItems), nil
	case "object":
		if p.AnyProps {
			return freeObject(FreeDepth), nil
		}
		obj, err := x.fields(p.Props, depth+1)
		if err != nil {
			return nil, err
		}
		return seq{lit("{"), obj, lit("}")}, nil
	case "any":
		return freeValue(FreeDepth), nil
	case "any_of":
		var choices alt
		for i, c := range p.AnyOf {
			v, err := x.value(c, depth)
			if err != nil {
				return nil, fmt.Errorf("choice %d: %w", i+1, err)
			}
			choices = append(choices, v)
		}
		return choices, nil
	}
	return nil, fmt.Errorf("unknown type %q", p.Type)
}

// jsonChar is one character of a JSON string: printable ASCII but '"' and
// '\', any non-ASCII character, or an escape. Each counts as one character
// for max_len, as tools count runes.
var jsonChar node = alt{
	class{{0x20, 0x21}, {0x23, 0x5B}, {0x5D, 0x7E}},
	utf8Char{},
	seq{lit(`\`), alt{
		class{{'"', '"'}, {'\\', '\\'}, {'/', '/'}, {'b', 'b'}, {'f', 'f'}, {'n', 'n'}, {'r', 'r'}, {'t', 't'}},
		// other control characters, written \u00XX
		seq{lit("u00"), class{{'0', '1'}}, class{{'0', '9'}, {'a', 'f'}, {'A', 'F'}}},
	}},
}

// commandCalls: @ns/name{key=value;...} invocations chained with "->".
func commandCalls(tools []ToolSpec, maxCalls int) (node, error) {
	if err := checkCallTools(tools, FormCommand); err != nil {
		return nil, err
	}
	var choices alt
	for i, t := range tools {
		if err := commandName(t.Name, ""); err != nil {
			return nil, err
		}
		for _, p := range t.Params {
			if err := commandName(t.Name, p.Name); err != nil {
				return nil, err
			}
		}
		obj, err := commandSyntax.object(t)
		if err != nil {
			return nil, err
		}
		choices = append(choices, rule{ruleName("invoke", i, t.Name), seq{lit(t.Name + "{"), obj, lit("}")}})
	}
	invoke := rule{"invoke", seq{lit(CommandTrigger), choices}}
	return rule{"calls", seq{invoke, rep{seq{lit("->"), invoke}, 0, maxCalls - 1}}}, nil
}

// commandName checks that a tool name (and a parameter key) survive the
// command language's lexer unchanged.
func commandName(tool, key string) error {
	src := "@" + tool + "{}"
	if key != "" {
		src = "@" + tool + "{" + key + "=1}"
	}
	cmd, err := Parse(src, ParseOptions{})
	if err != nil || cmd.Stages[0].Calls[0].Tool() != tool || (key != "" && cmd.Stages[0].Calls[0].Params[0].Key != key) {
		if key != "" {
			return fmt.Errorf("grammar: tool %s: parameter %q cannot be written in the command language", tool, key)
		}
		return fmt.Errorf("grammar: tool %q cannot be written in the command language", tool)
	}
	return nil
}

// commandChar is one character of a double-quoted command-language string.
var commandChar node = alt{
	class{{0x20, 0x21}, {0x23, 0x5B}, {0x5D, 0x7E}},
	utf8Char{},
	seq{lit(`\`), class{{'"', '"'}, {'\\', '\\'}, {'n', 'n'}, {'r', 'r'}, {'t', 't'}}},
}

// list is open item (sep item)* close with a bounded count; maxItems 0 is
// no limit.
func list(open, sep, close string, item node, minItems, maxItems int) node {
	more := -1
	if maxItems > 0 {
		more = maxItems - 1
	}
	tail := rep{seq{lit(sep), item}, max(minItems-1, 0), more}
	body := seq{item, tail}
	if minItems == 0 {
		return seq{lit(open), opt(body), lit(close)}
	}
	return seq{lit(open), body, lit(close)}
}

func maxLen(n int) int {
	if n <= 0 {
		return -1
	}
	return n
}

// jsonString quotes s as JSON without HTML escaping, the way models write it.
func jsonString(s string) string { return string(appendJSONString(nil, s)) }

// ruleName makes a unique GBNF rule name for a tool: letters, digits, dashes.
func ruleName(prefix string, i int, tool string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s-%d-", prefix, i)
	for _, r := range tool {
		if r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	return b.String()
}

// Size is the memory the compiled automaton takes, in bytes: what a caller
// that budgets constraints (an MCP server's tools) counts.
func (c *Constraint) Size() int { return 4*len(c.table) + len(c.accept) }
