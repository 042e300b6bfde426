package grammar

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

func f64(f float64) *float64 { return &f }

var gpioWrite = ToolSpec{Name: "gpio/write", Params: []ArgSpec{
	{Name: "pin", Type: "string", Required: true, Enum: []string{"led", "relay"}},
	{Name: "level", Type: "boolean", Required: true},
	{Name: "ms", Type: "integer", Min: f64(1), Max: f64(500)},
	{Name: "note", Type: "string", MaxLen: 3},
}}

var sysStatus = ToolSpec{Name: "sys/status"}

func accepts(a Automaton, s string) bool {
	st := a.Start()
	for i := 0; i < len(s); i++ {
		if st = a.Next(st, s[i]); st == Dead {
			return false
		}
	}
	return a.Accepting(st)
}

// alive says whether s can still be continued into a valid output.
func alive(a Automaton, s string) bool {
	st := a.Start()
	for i := 0; i < len(s) && st != Dead; i++ {
		st = a.Next(st, s[i])
	}
	return st != Dead
}

func mustCompile(t *testing.T, spec Spec) *Constraint {
	t.Helper()
	c, err := Compile(spec)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestQwenFormAcceptsExactlyValidCalls(t *testing.T) {
	c := mustCompile(t, Spec{Form: FormQwen, Mode: ModeAny, Tools: []ToolSpec{gpioWrite, sysStatus}})
	call := func(body string) string { return "<tool_call>\n" + body + "\n</tool_call>" }
	good := []string{
		"",
		"Hello there.",
		"naïve ✓ text\n",
		call(`{"name": "gpio/write", "arguments": {"pin": "led", "level": true}}`),
		"Turning it on.\n" + call(`{"name": "gpio/write", "arguments": {"pin": "relay", "level": false, "ms": 500}}`),
		call(`{"name": "gpio/write", "arguments": {"pin": "led", "level": true, "note": "a\"é"}}`) + "\n" + call(`{"name": "sys/status", "arguments": {}}`),
		call(`{"name": "gpio/write", "arguments": {"pin": "led", "level": true, "note": "\n\u001f"}}`),
	}
	for _, s := range good {
		if !accepts(c, s) {
			t.Errorf("refused %q", s)
		}
	}
	bad := []string{
		"text <tool_call> more text",
		call(`{"name": "gpio/read", "arguments": {"pin": "led"}}`),                                 // not allowed
		call(`{"name": "gpio/write", "arguments": {"level": true, "pin": "led"}}`),                 // key order
		call(`{"name": "gpio/write", "arguments": {"pin": "led"}}`),                                // required missing
		call(`{"name": "gpio/write", "arguments": {"pin": "door", "level": true}}`),                // not in enum
		call(`{"name": "gpio/write", "arguments": {"pin": "led", "level": 1}}`),                    // type
		call(`{"name": "gpio/write", "arguments": {"pin": "led", "level": true, "ms": 0}}`),        // below min
		call(`{"name": "gpio/write", "arguments": {"pin": "led", "level": true, "ms": 501}}`),      // above max
		call(`{"name": "gpio/write", "arguments": {"pin": "led", "level": true, "ms": 05}}`),       // leading zero
		call(`{"name": "gpio/write", "arguments": {"pin": "led", "level": true, "note": "abcd"}}`), // max_len
		call(`{"name": "gpio/write", "arguments": {"pin": "led", "level": true, "note": "a` + "\n" + `"}}`),
		call(`{"name": "gpio/write", "arguments": {"pin": "led", "level": true, "note": "\x"}}`),
		call(`{"name": "gpio/write", "arguments": {"pin": "led", "level": true, "note": "` + "\xff" + `"}}`),
		call(`{"name": "sys/status", "arguments": {}}`) + " trailing",
		"<tool_call>\n{\"name\": \"sys/status\", \"arguments\": {}}", // not closed
	}
	for _, s := range bad {
		if accepts(c, s) {
			t.Errorf("accepted %q", s)
		}
	}
	text := mustCompile(t, Spec{Form: FormQwen, Mode: ModeText, Tools: []ToolSpec{gpioWrite}})
	if accepts(text, call(`{"name": "sys/status", "arguments": {}}`)) || !accepts(text, "plain <tool text") {
		t.Error("mode text: the trigger must be refused and other text accepted")
	}
	calls := mustCompile(t, Spec{Form: FormQwen, Mode: ModeCalls, Tools: []ToolSpec{gpioWrite}})
	if accepts(calls, "") || accepts(calls, "x") {
		t.Error("mode calls accepted an output without a call")
	}
}

func TestToolsNotAllowedCannotBeEmitted(t *testing.T) {
	for _, form := range []Form{FormQwen, FormCommand, FormJSON} {
		c := mustCompile(t, Spec{Form: form, Mode: ModeCalls, Tools: []ToolSpec{sysStatus, {Name: "gpio/read"}}})
		prefix := map[Form]string{FormQwen: "<tool_call>\n{\"name\": \"", FormCommand: "@", FormJSON: "{\"name\": \""}[form]
		if !alive(c, prefix+"gpio/read") || !alive(c, prefix+"sys/") {
			t.Errorf("%s: an allowed name is refused", form)
		}
		for _, name := range []string{"gpio/write", "gpio/readx", "sys/reboot", "i2c/"} {
			if alive(c, prefix+name) {
				t.Errorf("%s: %s can be emitted", form, name)
			}
		}
	}
}

func TestCommandForm(t *testing.T) {
	c := mustCompile(t, Spec{Form: FormCommand, Mode: ModeAny, Tools: []ToolSpec{gpioWrite, sysStatus, {Name: "i2c/write", Params: []ArgSpec{
		{Name: "data", Type: "array", Required: true, Items: &ArgSpec{Type: "integer", Min: f64(0), Max: f64(255)}, MaxItems: 3}}}}})
	for _, s := range []string{
		"",
		"ok",
		`@gpio/write{pin="led";level=true}`,
		`On it. @gpio/write{pin="relay";level=false;ms=20}->@sys/status{}`,
		`@i2c/write{data=(1,255,0)}`,
		`@gpio/write{pin="led";level=true;note="\"\\\n"}`,
	} {
		if !accepts(c, s) {
			t.Errorf("refused %q", s)
		}
		if _, err := ParseOutput(c.Spec(), s); err != nil {
			t.Errorf("%q: %v", s, err)
		}
	}
	for _, s := range []string{
		"mail me@home",
		`@gpio/write{level=true;pin="led"}`,
		`@i2c/write{data=()}`,
		`@i2c/write{data=(1,2,3,4)}`,
		`@i2c/write{data=(256)}`,
		`@gpio/write{pin='led';level=true}`,
	} {
		if accepts(c, s) {
			t.Errorf("accepted %q", s)
		}
	}
}

func TestJSONForm(t *testing.T) {
	one := mustCompile(t, Spec{Form: FormJSON, Mode: ModeCalls, Tools: []ToolSpec{gpioWrite}})
	if !accepts(one, `{"pin": "led", "level": false, "ms": 7}`) || accepts(one, `{"name": "gpio/write", "arguments": {}}`) {
		t.Error("json form with one tool must be that tool's arguments object")
	}
	out, err := ParseOutput(one.Spec(), `{"pin": "led", "level": false}`)
	if err != nil || len(out.Calls) != 1 || out.Calls[0].Name != "gpio/write" {
		t.Fatalf("ParseOutput = %+v, %v", out, err)
	}
	two := mustCompile(t, Spec{Form: FormJSON, Mode: ModeCalls, Tools: []ToolSpec{gpioWrite, sysStatus}})
	if !accepts(two, `{"name": "sys/status", "arguments": {}}`) {
		t.Error("json form with several tools must be a name/arguments object")
	}
}

// TestNumberRanges checks the digit automaton against exact arithmetic on
// every decimal with up to 3 fraction digits around the bounds, compared
// the way tools validate (as float64).
func TestNumberRanges(t *testing.T) {
	cases := []struct {
		integer  bool
		min, max *float64
	}{
		{false, f64(0.2), f64(0.7)}, {false, f64(-1.5), f64(2.25)}, {true, f64(-40), f64(-3)},
		{false, f64(-0.001), f64(0)}, {true, f64(98), f64(1203)}, {false, f64(5), f64(30.5)},
		{true, f64(-7), f64(7)}, {false, f64(-12.75), f64(-0.5)}, {false, f64(1), f64(1)},
		{true, f64(0), f64(0)}, {false, f64(-3), f64(9.999)},
	}
	for _, tc := range cases {
		n, err := numberNode(tc.integer, tc.min, tc.max)
		if err != nil {
			t.Fatal(err)
		}
		d, err := compileNode(n)
		if err != nil {
			t.Fatal(err)
		}
		for i := -2000; i <= 2000; i++ {
			for _, s := range decimalsAround(i) {
				if tc.integer && strings.Contains(s, ".") {
					if accepts(d, s) {
						t.Errorf("integer %v..%v accepted %q", *tc.min, *tc.max, s)
					}
					continue
				}
				// as tools validate: the float64 the text parses to
				r, _ := strconv.ParseFloat(s, 64)
				want := r >= *tc.min && r <= *tc.max
				if got := accepts(d, s); got != want {
					t.Errorf("range [%v, %v] integer=%v: %q accepted=%v, want %v", *tc.min, *tc.max, tc.integer, s, got, want)
				}
			}
		}
	}
	if _, err := numberNode(true, f64(1.2), f64(1.8)); err == nil {
		t.Error("no integer in [1.2, 1.8]: want an error")
	}
}

// decimalsAround(i) are the plain decimals i/100 and a few forms of it.
func decimalsAround(i int) []string {
	sign := ""
	if i < 0 {
		sign, i = "-", -i
	}
	var out []string
	if i%100 == 0 {
		out = append(out, fmt.Sprintf("%s%d", sign, i/100), fmt.Sprintf("%s%d.0", sign, i/100))
	}
	out = append(out, fmt.Sprintf("%s%d.%02d", sign, i/100, i%100), fmt.Sprintf("%s%d.%02d1", sign, i/100, i%100))
	return out
}

func TestUnsatisfiableSpecsAreCompileErrors(t *testing.T) {
	for name, tool := range map[string]ToolSpec{
		"min above max":    {Name: "a", Params: []ArgSpec{{Name: "x", Type: "number", Min: f64(3), Max: f64(2)}}},
		"no integer":       {Name: "a", Params: []ArgSpec{{Name: "x", Type: "integer", Required: true, Min: f64(0.1), Max: f64(0.9)}}},
		"enum too long":    {Name: "a", Params: []ArgSpec{{Name: "x", Type: "string", Enum: []string{"long"}, MaxLen: 2}}},
		"enum on integer":  {Name: "a", Params: []ArgSpec{{Name: "x", Type: "integer", Enum: []string{"1"}}}},
		"items count":      {Name: "a", Params: []ArgSpec{{Name: "x", Type: "array", Items: &ArgSpec{Type: "boolean"}, MinItems: 3, MaxItems: 2}}},
		"array no items":   {Name: "a", Params: []ArgSpec{{Name: "x", Type: "array"}}},
		"unknown type":     {Name: "a", Params: []ArgSpec{{Name: "x", Type: "tuple"}}},
		"empty union":      {Name: "a", Params: []ArgSpec{{Name: "x", Type: "any_of"}}},
		"repeated prop":    {Name: "a", Params: []ArgSpec{{Name: "x", Type: "object", Props: []ArgSpec{{Name: "y", Type: "boolean"}, {Name: "y", Type: "boolean"}}}}},
		"too deep":         {Name: "a", Params: []ArgSpec{deepObject(MaxNesting + 1)}},
		"duplicate params": {Name: "a", Params: []ArgSpec{{Name: "x", Type: "boolean"}, {Name: "x", Type: "boolean"}}},
	} {
		if _, err := Compile(Spec{Form: FormQwen, Mode: ModeCalls, Tools: []ToolSpec{tool}}); err == nil {
			t.Errorf("%s: compiled", name)
		} else if !strings.Contains(err.Error(), "a") {
			t.Errorf("%s: error %q does not name the tool", name, err)
		}
	}
	if _, err := Compile(Spec{Form: FormQwen, Mode: ModeCalls}); err == nil {
		t.Error("mode calls without tools compiled")
	}
	if _, err := Compile(Spec{Form: FormCommand, Mode: ModeCalls, Tools: []ToolSpec{{Name: "bad name"}}}); err == nil {
		t.Error("a name the command language cannot write compiled")
	}
	if _, err := Compile(Spec{Form: "yaml", Mode: ModeCalls}); err == nil {
		t.Error("unknown form compiled")
	}
}

func TestParseOutputErrorsSayWhere(t *testing.T) {
	spec := Spec{Form: FormQwen, Mode: ModeAny}
	for text, want := range map[string]string{
		"hi\n<tool_call>\n{\"name\": \"x\", \"arguments\": {}}":                "line 2, column 1",
		"hi\n<tool_call>\n{\"name\": \"x\", \"arguments\": [1]}\n</tool_call>": "not a JSON object",
		"<tool_call>\n{\"name\": \"x\" \"arguments\": {}}\n</tool_call>":       "line 2",
		"<tool_call>\n{\"arguments\": {}}\n</tool_call>":                       "no \"name\"",
		"<tool_call>\n{\"name\": \"x\"}\n</tool_call> then text":               "expected <tool_call>",
	} {
		_, err := ParseOutput(spec, text)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want it to mention %q", text, err, want)
		}
	}
	out, err := ParseOutput(Spec{Form: FormCommand, Mode: ModeAny}, "ok\n@gpio/write{pin=}")
	if err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("command error %v (%+v): want line 2", err, out)
	}
}

func TestGBNFAndSchemaFromTheSameSpec(t *testing.T) {
	spec := Spec{Form: FormQwen, Mode: ModeAny, Tools: []ToolSpec{gpioWrite, sysStatus}}
	g, err := GBNF(spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"root ::= ", `"\"gpio/write\", \"arguments\": "`, `"\"led\""`, "{0,3}", "<tool_call>\\n"} {
		if !strings.Contains(g, want) {
			t.Errorf("GBNF lacks %s:\n%s", want, g)
		}
	}
	s, err := JSONSchema(spec)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"anyOf":[{"type":"object","properties":{"name":{"const":"gpio/write"},"arguments":{"type":"object","properties":{"pin":{"type":"string","enum":["led","relay"]},"level":{"type":"boolean"},"ms":{"type":"integer","minimum":1,"maximum":500},"note":{"type":"string","maxLength":3}},"required":["pin","level"],"additionalProperties":false}},"required":["name","arguments"],"additionalProperties":false},{"type":"object","properties":{"name":{"const":"sys/status"},"arguments":{"type":"object","properties":{},"additionalProperties":false}},"required":["name","arguments"],"additionalProperties":false},{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"],"additionalProperties":false}]}`
	if string(s) != want {
		t.Errorf("schema:\n%s\nwant\n%s", s, want)
	}
	if _, err := JSONSchema(Spec{Form: FormQwen, Mode: ModeText, Tools: spec.Tools}); err == nil {
		t.Error("mode text has no schema")
	}
}

func TestCompileIsDeterministicAndBounded(t *testing.T) {
	spec := Spec{Form: FormQwen, Mode: ModeAny, Tools: []ToolSpec{gpioWrite, sysStatus}}
	a, b := mustCompile(t, spec), mustCompile(t, spec)
	if a.NumStates() != b.NumStates() {
		t.Fatal("two compilations differ")
	}
	rng := rand.New(rand.NewPCG(7, 7))
	for i := 0; i < 1000; i++ {
		s, c := a.Start(), byte(rng.IntN(256))
		if a.Next(s, c) != b.Next(s, c) {
			t.Fatal("two compilations differ")
		}
	}
	huge := ToolSpec{Name: "t"}
	for i := 0; i < 300; i++ {
		huge.Params = append(huge.Params, ArgSpec{Name: fmt.Sprintf("p%d", i), Type: "string", MaxLen: 4000})
	}
	if _, err := Compile(Spec{Form: FormQwen, Mode: ModeCalls, Tools: []ToolSpec{huge}}); err == nil || !strings.Contains(err.Error(), "states") {
		t.Errorf("a huge spec: %v, want a too-many-states error", err)
	}
}

// One writer serves the schema a server enforces and the one a model is shown: the
// same properties in the same order, closed or open, and in the compact form an
// optional parameter keeps only its type and enum.
func TestToolSchemaForms(t *testing.T) {
	lo, hi := 1.0, 500.0
	tool := ToolSpec{Name: "gpio/pulse", Params: []ArgSpec{
		{Name: "pin", Doc: "the pin", Type: "string", Required: true, Enum: []string{"led"}},
		{Name: "ms", Doc: "how long. Whole milliseconds", Type: "integer", Min: &lo, Max: &hi, Default: 100}}}
	server, err := ParamsSchema(tool)
	if err != nil {
		t.Fatal(err)
	}
	props := `{"type":"object","properties":{"pin":{"type":"string","description":"the pin","enum":["led"]},"ms":{"type":"integer","description":"how long. Whole milliseconds","minimum":1,"maximum":500,"default":100}},"required":["pin"]`
	if string(server) != props+`,"additionalProperties":false}` {
		t.Errorf("server:\n%s", server)
	}
	if shown := ToolSchema(tool, SchemaOptions{}); string(shown) != props+"}" {
		t.Errorf("shown:\n%s", shown)
	}
	compact := ToolSchema(tool, SchemaOptions{Compact: true, Brief: func(s string) string { return s[:3] }})
	if want := `{"type":"object","properties":{"pin":{"type":"string","enum":["led"]},"ms":{"type":"integer"}},"required":["pin"]}`; string(compact) != want {
		t.Errorf("compact:\n%s", compact)
	}
}

// deepObject is {"x": {"x": ... true}} with n objects.
func deepObject(n int) ArgSpec {
	p := ArgSpec{Name: "x", Type: "boolean", Required: true}
	for i := 0; i < n; i++ {
		p = ArgSpec{Name: "x", Type: "object", Required: true, Props: []ArgSpec{p}}
	}
	return p
}

// editFile has what real MCP schemas have: an array of objects, a nested
// object with optional fields, and a union of simple types.
var editFile = ToolSpec{Name: "fs/edit", Params: []ArgSpec{
	{Name: "edits", Type: "array", Required: true, MaxItems: 3, Items: &ArgSpec{Type: "object", Props: []ArgSpec{
		{Name: "old", Type: "string", Required: true},
		{Name: "new", Type: "string", Required: true},
	}}},
	{Name: "opts", Type: "object", Props: []ArgSpec{
		{Name: "dry", Type: "boolean"},
		{Name: "depth", Type: "integer", Min: f64(0), Max: f64(9)},
	}},
	{Name: "flag", Type: "any_of", AnyOf: []ArgSpec{{Type: "boolean"}, {Type: "string", Enum: []string{"auto"}}}},
}}

func TestNestedObjectsAndUnions(t *testing.T) {
	c := mustCompile(t, Spec{Form: FormJSON, Mode: ModeCalls, Tools: []ToolSpec{editFile}})
	for _, s := range []string{
		`{"edits": []}`,
		`{"edits": [{"old": "a", "new": "b"}]}`,
		`{"edits": [{"old": "a", "new": "b"}, {"old": "", "new": "\n"}], "opts": {}}`,
		`{"edits": [], "opts": {"dry": true, "depth": 9}, "flag": "auto"}`,
		`{"edits": [], "flag": false}`,
	} {
		if !accepts(c, s) {
			t.Errorf("rejects %s", s)
		}
	}
	for _, s := range []string{
		`{"opts": {}}`,                          // edits is required
		`{"edits": [{"old": "a"}]}`,             // new is required
		`{"edits": [{"new": "b", "old": "a"}]}`, // out of order
		`{"edits": [], "opts": {"depth": 10}}`,
		`{"edits": [], "flag": "manual"}`,
		`{"edits": [], "flag": 1}`,
		`{"edits": [{"old": "a", "new": "b"}, {"old": "a", "new": "b"}, {"old": "a", "new": "b"}, {"old": "a", "new": "b"}]}`,
	} {
		if accepts(c, s) {
			t.Errorf("accepts %s", s)
		}
	}
	deep := ToolSpec{Name: "a", Params: []ArgSpec{deepObject(MaxNesting)}}
	c = mustCompile(t, Spec{Form: FormJSON, Mode: ModeCalls, Tools: []ToolSpec{deep}})
	want := `{"x": ` + strings.Repeat(`{"x": `, MaxNesting) + "true" + strings.Repeat("}", MaxNesting+1)
	if !accepts(c, want) {
		t.Errorf("rejects %s", want)
	}
	_, err := Compile(Spec{Form: FormCommand, Mode: ModeCalls, Tools: []ToolSpec{editFile}})
	if err == nil || !strings.Contains(err.Error(), "command language") || !strings.Contains(err.Error(), "edits") {
		t.Errorf("command form: %v, want a refusal naming the parameter and the language", err)
	}
	if _, err := GBNF(Spec{Form: FormQwen, Mode: ModeCalls, Tools: []ToolSpec{editFile}}); err != nil {
		t.Errorf("GBNF: %v", err)
	}
	schema := string(ToolSchema(editFile, SchemaOptions{Closed: true}))
	for _, part := range []string{`"items":{"type":"object","properties":{"old":`, `"required":["old","new"],"additionalProperties":false}`, `"anyOf":[{"type":"boolean"},{"type":"string","enum":["auto"]}]`} {
		if !strings.Contains(schema, part) {
			t.Errorf("schema %s lacks %s", schema, part)
		}
	}
}

// Another board's tool (docs/boards.md) is a name like any: the command
// form takes exactly the remote calls offered, and what it takes parses.
func TestAnotherBoardsToolsInTheConstraint(t *testing.T) {
	remote := gpioWrite
	remote.Name = "garage.gpio/write"
	if err := remote.Check(); err != nil {
		t.Fatal(err)
	}
	c := mustCompile(t, Spec{Form: FormCommand, Mode: ModeAny, Tools: []ToolSpec{gpioWrite, remote}})
	for _, s := range []string{`@garage.gpio/write{pin="led";level=true}`, `@gpio/write{pin="led";level=true}->@garage.gpio/write{pin="relay";level=false}`} {
		if !accepts(c, s) {
			t.Errorf("refused %q", s)
		}
		if _, err := ParseOutput(c.Spec(), s); err != nil {
			t.Errorf("%q: %v", s, err)
		}
	}
	for _, s := range []string{`@hall.gpio/write{pin="led";level=true}`, `@garage.sys/status{}`, `@garage/write{pin="led";level=true}`, `@garage.gpio.x/write{}`} {
		if accepts(c, s) {
			t.Errorf("accepted %q", s)
		}
	}
	for _, bad := range []string{"garage..gpio/write", "a.b.c/write", ".gpio/write", "garage./write"} {
		if (ToolSpec{Name: bad}).Check() == nil {
			t.Errorf("the name %q checks", bad)
		}
	}
}
