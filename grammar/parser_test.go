package grammar

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// Builders keep the tables readable.
func call(tool string, params ...Param) Invoke {
	ns, name, ok := strings.Cut(tool, "/")
	if !ok {
		ns, name = "", tool
	}
	return Invoke{Namespace: ns, Name: name, Params: params}
}
func kv(key string, v Value) Param            { return Param{Key: key, Value: v} }
func ref(scope, name string) Value            { return Value{Kind: Ref, Ref: Reference{Scope: scope, Name: name}} }
func one(c Invoke) Stage                      { return Stage{Calls: []Invoke{c}} }
func par(calls ...Invoke) Stage               { return Stage{Parallel: true, Calls: calls} }
func cmd(stages ...Stage) *Command            { return &Command{Stages: stages} }
func single(tool string, p ...Param) *Command { return cmd(one(call(tool, p...))) }

// sameCommand compares meaning, not positions. Floats compare by bits so that a
// round trip must keep -0.0 and every last digit.
func sameCommand(a, b *Command) bool {
	if len(a.Stages) != len(b.Stages) {
		return false
	}
	for i := range a.Stages {
		sa, sb := a.Stages[i], b.Stages[i]
		if sa.Parallel != sb.Parallel || len(sa.Calls) != len(sb.Calls) {
			return false
		}
		for j := range sa.Calls {
			ca, cb := sa.Calls[j], sb.Calls[j]
			if ca.Namespace != cb.Namespace || ca.Name != cb.Name || len(ca.Params) != len(cb.Params) {
				return false
			}
			for k := range ca.Params {
				if ca.Params[k].Key != cb.Params[k].Key || !sameValue(ca.Params[k].Value, cb.Params[k].Value) {
					return false
				}
			}
		}
	}
	return true
}

func sameValue(a, b Value) bool {
	if a.Kind != b.Kind {
		return false
	}
	switch a.Kind {
	case String:
		return a.Str == b.Str
	case Int:
		return a.Int == b.Int
	case Float:
		return math.Float64bits(a.Float) == math.Float64bits(b.Float)
	case Bool:
		return a.Bool == b.Bool
	case Ref:
		return a.Ref == b.Ref
	case Array:
		if len(a.Items) != len(b.Items) {
			return false
		}
		for i := range a.Items {
			if !sameValue(a.Items[i], b.Items[i]) {
				return false
			}
		}
		return true
	}
	return false
}

func nested(depth int, leaf Value) Value {
	v := leaf
	for range depth {
		v = ArrayValue(v)
	}
	return v
}

type validCase struct {
	name string
	src  string
	opts ParseOptions
	want *Command
}

func validCases() []validCase {
	chain64 := strings.Repeat("@a{}->", MaxCalls-1) + "@a{}"
	var want64 []Stage
	for range MaxCalls {
		want64 = append(want64, one(call("a")))
	}
	big := `@a{x="` + strings.Repeat("z", MaxInputBytes-len(`@a{x=""}`)) + `"}`

	return []validCase{
		// <tool-invoke>, <tool-name>, <identifier>, <namespaced-tool>, empty <param-list>
		{"bare name, empty params", `@ping{}`, ParseOptions{}, single("ping")},
		{"namespaced", `@gpio/write{pin="led";value=1}`, ParseOptions{},
			single("gpio/write", kv("pin", StringValue("led")), kv("value", IntValue(1)))},
		{"another board's tool", `@garage.gpio/write{pin="led";value=1}`, ParseOptions{Namespaces: []string{"garage.gpio", "gpio"}},
			single("garage.gpio/write", kv("pin", StringValue("led")), kv("value", IntValue(1)))},
		{"identifier chars", `@my-tool_2{a_b-c9=1}`, ParseOptions{}, single("my-tool_2", kv("a_b-c9", IntValue(1)))},
		{"namespace with digits", `@i2c/read_reg{addr=0x48}`, ParseOptions{}, single("i2c/read_reg", kv("addr", IntValue(0x48)))},
		{"uppercase names", `@Sys/Info{Verbose=true}`, ParseOptions{}, single("Sys/Info", kv("Verbose", BoolValue(true)))},
		{"keyword as key", `@a{true=yes;no=false}`, ParseOptions{}, single("a", kv("true", BoolValue(true)), kv("no", BoolValue(false)))},
		{"trailing semicolon", `@a{x=1;}`, ParseOptions{}, single("a", kv("x", IntValue(1)))},

		// <string-literal>
		{"double quotes", `@a{s="hello world"}`, ParseOptions{}, single("a", kv("s", StringValue("hello world")))},
		{"single quotes", `@a{s='hello'}`, ParseOptions{}, single("a", kv("s", StringValue("hello")))},
		{"empty strings", `@a{s="";t=''}`, ParseOptions{}, single("a", kv("s", StringValue("")), kv("t", StringValue("")))},
		{"other quote inside", `@a{s="it's";t='say "hi"'}`, ParseOptions{},
			single("a", kv("s", StringValue("it's")), kv("t", StringValue(`say "hi"`)))},
		{"all escapes, double", `@a{s="\"\'\\\n\t\r\0\x41\x7f\u{e9}\u{1F600}\u{0}"}`, ParseOptions{},
			single("a", kv("s", StringValue("\"'\\\n\t\r\x00A\x7fé😀\x00")))},
		{"all escapes, single", `@a{s='\'\"\\\n\t\r\0\x7E\u{10FFFF}'}`, ParseOptions{},
			single("a", kv("s", StringValue("'\"\\\n\t\r\x00~\U0010FFFF")))},
		{"raw UTF-8 and tab", "@a{s=\"h\u00e9llo\t✓ 日本\"}", ParseOptions{}, single("a", kv("s", StringValue("héllo\t✓ 日本")))},
		{"punctuation in string", `@a{s="@b{x=1}->[@c{}];$prev.x(1,2)"}`, ParseOptions{},
			single("a", kv("s", StringValue("@b{x=1}->[@c{}];$prev.x(1,2)")))},
		{"raw control char", "@a{s=\"a\x01\x7fb\"}", ParseOptions{}, single("a", kv("s", StringValue("a\x01\x7fb")))},

		// <integer>, <float>, <hex>
		{"integers", `@a{a=0;b=42;c=-17;d=007;e=-0}`, ParseOptions{},
			single("a", kv("a", IntValue(0)), kv("b", IntValue(42)), kv("c", IntValue(-17)), kv("d", IntValue(7)), kv("e", IntValue(0)))},
		{"int64 bounds", `@a{max=9223372036854775807;min=-9223372036854775808}`, ParseOptions{},
			single("a", kv("max", IntValue(math.MaxInt64)), kv("min", IntValue(math.MinInt64)))},
		{"floats", `@a{a=1.5;b=-0.25;c=0.0;d=-0.0;e=3.14159265358979}`, ParseOptions{},
			single("a", kv("a", FloatValue(1.5)), kv("b", FloatValue(-0.25)), kv("c", FloatValue(0)),
				kv("d", FloatValue(math.Copysign(0, -1))), kv("e", FloatValue(3.14159265358979)))},
		{"float exponents", `@a{a=1.0e3;b=2.5E-3;c=6.02e+23;d=-1.5e300;e=1.0e-320}`, ParseOptions{},
			single("a", kv("a", FloatValue(1000)), kv("b", FloatValue(0.0025)), kv("c", FloatValue(6.02e23)),
				kv("d", FloatValue(-1.5e300)), kv("e", FloatValue(1.0e-320)))},
		{"hex", `@a{a=0x1F;b=0XfF;c=0x0;d=0x7FFFFFFFFFFFFFFF;e=0x00ff}`, ParseOptions{},
			single("a", kv("a", IntValue(31)), kv("b", IntValue(255)), kv("c", IntValue(0)), kv("d", IntValue(math.MaxInt64)), kv("e", IntValue(255)))},

		// <boolean>
		{"booleans", `@a{a=true;b=false;c=yes;d=no}`, ParseOptions{},
			single("a", kv("a", BoolValue(true)), kv("b", BoolValue(false)), kv("c", BoolValue(true)), kv("d", BoolValue(false)))},

		// <array>
		{"array of one", `@a{x=(1)}`, ParseOptions{}, single("a", kv("x", ArrayValue(IntValue(1))))},
		{"mixed array", `@sys/exec{command="git";args=("status", '-s', 1, 2.5, no, $ctx.dir)}`, ParseOptions{},
			single("sys/exec", kv("command", StringValue("git")), kv("args", ArrayValue(
				StringValue("status"), StringValue("-s"), IntValue(1), FloatValue(2.5), BoolValue(false), ref("ctx", "dir"))))},
		{"nested arrays", `@a{m=((1,2),(3,(4)))}`, ParseOptions{},
			single("a", kv("m", ArrayValue(ArrayValue(IntValue(1), IntValue(2)), ArrayValue(IntValue(3), ArrayValue(IntValue(4))))))},
		{"nesting at the limit", "@a{x=" + strings.Repeat("(", MaxArrayDepth) + "1" + strings.Repeat(")", MaxArrayDepth) + "}", ParseOptions{},
			single("a", kv("x", nested(MaxArrayDepth, IntValue(1))))},

		// <reference>
		{"reference scopes", `@a{p=$prev.result;c=$ctx.working_dir;e=$env.HOME;s=$self.last-value}`, ParseOptions{},
			single("a", kv("p", ref("prev", "result")), kv("c", ref("ctx", "working_dir")), kv("e", ref("env", "HOME")), kv("s", ref("self", "last-value")))},

		// <tool-chain>
		{"chain", `@fs/read{path="data.json"}->@data/transform{operation="parse_json"}`, ParseOptions{},
			cmd(one(call("fs/read", kv("path", StringValue("data.json")))), one(call("data/transform", kv("operation", StringValue("parse_json")))))},
		{"chain of three", `@a{}->@b{x=$prev.y}->@c{z=$prev.w}`, ParseOptions{},
			cmd(one(call("a")), one(call("b", kv("x", ref("prev", "y")))), one(call("c", kv("z", ref("prev", "w")))))},
		{"chain at the call limit", chain64, ParseOptions{}, cmd(want64...)},

		// <tool-parallel>
		{"parallel of one", `[@a{}]`, ParseOptions{}, cmd(par(call("a")))},
		{"parallel of three", `[@gpio/read{pin=17},@gpio/read{pin=27},@sys/uptime{}]`, ParseOptions{},
			cmd(par(call("gpio/read", kv("pin", IntValue(17))), call("gpio/read", kv("pin", IntValue(27))), call("sys/uptime")))},
		{"parallel then chain", `[@a{},@b{}]->@c{x=$prev.y}`, ParseOptions{},
			cmd(par(call("a"), call("b")), one(call("c", kv("x", ref("prev", "y")))))},
		{"chain into parallel", `@a{}->[@b{},@c{}]->@d{}`, ParseOptions{},
			cmd(one(call("a")), par(call("b"), call("c")), one(call("d")))},

		// Whitespace between tokens
		{"spaces everywhere", "  @a { x = 1 ; y = ( 1 , 'b' ) ; } -> [ @b { } , @c/d { z = $env.P } ]  ", ParseOptions{},
			cmd(one(call("a", kv("x", IntValue(1)), kv("y", ArrayValue(IntValue(1), StringValue("b"))))), par(call("b"), call("c/d", kv("z", ref("env", "P")))))},
		{"tabs and CRLF", "@a{\r\n\tx=1;\r\n\ty=\"v\"\r\n}\r\n->\r\n@b{}\r\n", ParseOptions{},
			cmd(one(call("a", kv("x", IntValue(1)), kv("y", StringValue("v")))), one(call("b")))},

		// Seed examples
		{"seed read", `@fs/read{path="/etc/passwd";offset=0;limit=100}`, ParseOptions{},
			single("fs/read", kv("path", StringValue("/etc/passwd")), kv("offset", IntValue(0)), kv("limit", IntValue(100)))},
		{"seed http", `@net/http{url="https://api.example.com/data";method="GET"}`, ParseOptions{},
			single("net/http", kv("url", StringValue("https://api.example.com/data")), kv("method", StringValue("GET")))},
		{"seed write", `@fs/write{path="output.txt";content=$prev.result}`, ParseOptions{},
			single("fs/write", kv("path", StringValue("output.txt")), kv("content", ref("prev", "result")))},

		// Options
		{"known namespace", `@gpio/write{pin=1}->@ping{}`, ParseOptions{Namespaces: []string{"sys", "gpio"}},
			cmd(one(call("gpio/write", kv("pin", IntValue(1)))), one(call("ping")))},
		{"bare name with no namespaces registered", `@ping{}`, ParseOptions{Namespaces: []string{}}, single("ping")},

		// Limits
		{"input at the size limit", big, ParseOptions{}, single("a", kv("x", StringValue(strings.Repeat("z", MaxInputBytes-len(`@a{x=""}`)))))},
		{"many params", manyParams(40), ParseOptions{}, manyParamsWant(40)},
	}
}

func manyParams(n int) string {
	var b strings.Builder
	b.WriteString("@a{")
	for i := range n {
		if i > 0 {
			b.WriteByte(';')
		}
		b.WriteString("k" + string(rune('a'+i%26)) + string(rune('a'+i/26)) + "=1")
	}
	b.WriteString("}")
	return b.String()
}

func manyParamsWant(n int) *Command {
	var ps []Param
	for i := range n {
		ps = append(ps, kv("k"+string(rune('a'+i%26))+string(rune('a'+i/26)), IntValue(1)))
	}
	return single("a", ps...)
}

func TestParseValid(t *testing.T) {
	for _, tc := range validCases() {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.src, tc.opts)
			if err != nil {
				t.Fatalf("Parse(%q): %v", short(tc.src), err)
			}
			if !sameCommand(got, tc.want) {
				t.Fatalf("Parse(%q)\n got %s\nwant %s", short(tc.src), short(got.String()), short(tc.want.String()))
			}
		})
	}
}

func TestRoundTrip(t *testing.T) {
	for _, tc := range validCases() {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse(tc.src, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			text := c.String()
			again, err := Parse(text, tc.opts)
			if err != nil {
				t.Fatalf("re-parse of %q: %v", short(text), err)
			}
			if !sameCommand(c, again) {
				t.Fatalf("round trip changed the command:\n first %s\nsecond %s", short(text), short(again.String()))
			}
			if again.String() != text {
				t.Fatalf("String is not stable: %q then %q", short(text), short(again.String()))
			}
		})
	}
}

func short(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}

func TestPositions(t *testing.T) {
	src := "@gpio/write{\n  pin=\"led\";\n  value=(1,\n    $prev.x)\n}\n-> [ @b{},\n\t@c{k=yes} ]"
	c, err := Parse(src, ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, got, want Pos) {
		t.Helper()
		if got != want {
			t.Errorf("%s at %d:%d, want %d:%d", what, got.Line, got.Column, want.Line, want.Column)
		}
	}
	w := c.Stages[0].Calls[0]
	check("@gpio/write", w.Pos, Pos{1, 1})
	check("pin", w.Params[0].Pos, Pos{2, 3})
	check(`"led"`, w.Params[0].Value.Pos, Pos{2, 7})
	check("value", w.Params[1].Pos, Pos{3, 3})
	check("(", w.Params[1].Value.Pos, Pos{3, 9})
	check("1", w.Params[1].Value.Items[0].Pos, Pos{3, 10})
	check("$prev.x", w.Params[1].Value.Items[1].Pos, Pos{4, 5})
	check("@b", c.Stages[1].Calls[0].Pos, Pos{6, 6})
	check("@c", c.Stages[1].Calls[1].Pos, Pos{7, 2})
	check("k", c.Stages[1].Calls[1].Params[0].Pos, Pos{7, 5})
}

type errCase struct {
	name      string
	src       string
	opts      ParseOptions
	line, col int
	msg       string
}

func errCases() []errCase {
	known := ParseOptions{Namespaces: []string{"sys", "gpio", "serial"}}
	deep := "@a{x=" + strings.Repeat("(", MaxArrayDepth+1) + "1" + strings.Repeat(")", MaxArrayDepth+1) + "}"
	tooLong := `@a{x="` + strings.Repeat("a", MaxInputBytes) + `"}`
	tooLongLines := strings.Repeat("@a{}\n->", MaxInputBytes/7) + strings.Repeat("@a{}", 10)
	return []errCase{
		// Empty input and stray tokens at the start
		{"empty input", "", ParseOptions{}, 1, 1, `expected a command ("@tool{...}" or "[...]"), found end of input`},
		{"only whitespace", "  \n\t ", ParseOptions{}, 2, 3, "found end of input"},
		{"no @", "gpio/write{}", ParseOptions{}, 1, 1, `expected a command ("@tool{...}" or "[...]"), found "gpio"`},

		// Tool names
		{"@ alone", "@", ParseOptions{}, 1, 2, `expected a tool name (starting with a letter) after "@", found end of input`},
		{"@ with no name", "@{}", ParseOptions{}, 1, 2, `after "@", found "{"`},
		{"space after @", "@ gpio{}", ParseOptions{}, 1, 2, `after "@", found a space`},
		{"digits-first tool", "@1abc{}", ParseOptions{}, 1, 2, `after "@", found "1abc"`},
		{"underscore-first tool", "@_x{}", ParseOptions{}, 1, 2, `after "@", found "_x"`},
		{"namespace without name", "@gpio/{}", ParseOptions{}, 1, 7, `after "@gpio/", found "{"`},
		{"two slashes", "@gpio/write/x{}", ParseOptions{}, 1, 12, `expected "{" after "@gpio/write", found "/"`},
		{"missing {", `@gpio/write pin="x"}`, ParseOptions{}, 1, 13, `expected "{" after "@gpio/write", found "pin"`},
		{"unknown namespace", `@fs/read{path="x"}`, known, 1, 2, `unknown namespace "fs" (known: gpio, serial, sys)`},
		{"unknown namespace, none registered", `@fs/read{}`, ParseOptions{Namespaces: []string{}}, 1, 2, `unknown namespace "fs" (known: none)`},
		{"unknown board", `@hall.gpio/write{}`, known, 1, 2, `unknown namespace "hall.gpio"`},
		{"board without namespace", `@garage.write{}`, ParseOptions{}, 1, 8, `expected "{" after "@garage", found "."`},
		{"unknown namespace in later stage", "@gpio/read{pin=1}\n->@net/get{}", known, 2, 4, `unknown namespace "net"`},

		// Params
		{"missing =", `@a{x 1}`, ParseOptions{}, 1, 6, `expected "=" after "x", found "1"`},
		{"missing value", `@gpio/write{pin="led";value=}`, ParseOptions{}, 1, 29, `expected a value after "=", found "}"`},
		{"missing }", `@a{x=1`, ParseOptions{}, 1, 7, `expected ";" or "}" after the value of "x", found end of input`},
		{"missing ; between params", `@a{x=1 y=2}`, ParseOptions{}, 1, 8, `expected ";" or "}" after the value of "x", found "y"`},
		{"comma between params", `@a{x=1,y=2}`, ParseOptions{}, 1, 7, `expected ";" or "}" after the value of "x", found ","`},
		{"lone semicolon", `@a{;}`, ParseOptions{}, 1, 4, `expected a parameter name or "}", found ";"`},
		{"double semicolon", `@a{x=1;;}`, ParseOptions{}, 1, 8, `expected a parameter name or "}", found ";"`},
		{"digits-first key", `@a{1x=2}`, ParseOptions{}, 1, 4, `expected a parameter name or "}", found "1x"`},
		{"duplicate key", `@a{x=1;y=2;x=3}`, ParseOptions{}, 1, 12, `duplicate parameter "x" in "@a"`},
		// Past the size where duplicates are looked up in a map.
		{"duplicate key among many", strings.TrimSuffix(manyParams(30), "}") + ";kcb=2}", ParseOptions{}, 1, len(manyParams(30)) + 1, `duplicate parameter "kcb"`},
		{"unquoted string", `@a{x=foo}`, ParseOptions{}, 1, 6, `expected a value after "=", found "foo" (quote strings: "foo")`},
		{"junk value", `@a{x=%}`, ParseOptions{}, 1, 6, `expected a value after "=", found "%"`},
		{"lone minus", `@a{x=-}`, ParseOptions{}, 1, 6, `expected a value after "=", found "-"`},
		{"string run-on", `@a{x="a"b}`, ParseOptions{}, 1, 9, `expected ";" or "}" after the value of "x", found "b"`},

		// Strings
		{"unterminated string", `@a{x="abc}`, ParseOptions{}, 1, 6, `unterminated string: expected a closing ", found end of input`},
		{"unterminated single-quoted", `@a{x='abc"}`, ParseOptions{}, 1, 6, `expected a closing '`},
		{"raw newline in string", "@a{x=\"ab\ncd\"}", ParseOptions{}, 1, 9, "before the line break"},
		{"bad escape", `@a{x="a\qb"}`, ParseOptions{}, 1, 8, `expected an escape (\" \' \\ \n \t \r \0 \xHH \u{HEX}) after "\", found "q"`},
		{"backslash at end", `@a{x="a\`, ParseOptions{}, 1, 8, `after "\", found end of input`},
		{"short \\x", `@a{x="\x4"}`, ParseOptions{}, 1, 7, `expected two hex digits after \x, found "\""`},
		{"non-ASCII \\x", `@a{x="\xff"}`, ParseOptions{}, 1, 7, `expected \x00 to \x7F (ASCII), found \xff (write \u{FF} for U+00FF)`},
		{"\\u without brace", `@a{x="\u0041"}`, ParseOptions{}, 1, 7, `expected "{" after \u`},
		{"\\u{} empty", `@a{x="\u{}"}`, ParseOptions{}, 1, 7, `expected 1 to 6 hex digits in \u{...}, found "}"`},
		{"\\u too long", `@a{x="\u{1234567}"}`, ParseOptions{}, 1, 7, `expected 1 to 6 hex digits`},
		{"\\u unclosed", `@a{x="\u{41"}`, ParseOptions{}, 1, 12, `expected "}" to close \u{41, found "\""`},
		{"\\u surrogate", `@a{x="\u{D800}"}`, ParseOptions{}, 1, 7, `expected a Unicode scalar value in \u{...}, found \u{D800}`},
		{"\\u too big", `@a{x="\u{110000}"}`, ParseOptions{}, 1, 7, `found \u{110000}`},
		{"invalid UTF-8 in string", "@a{x=\"ok\xff\"}", ParseOptions{}, 1, 9, "expected UTF-8 text in string, found byte 0xFF"},
		{"invalid UTF-8 outside string", "@a{x=\xfe}", ParseOptions{}, 1, 6, "found byte 0xFE (not UTF-8)"},

		// Numbers
		{"int overflow", `@a{x=9223372036854775808}`, ParseOptions{}, 1, 6, `found "9223372036854775808" (out of range)`},
		{"negative int overflow", `@a{x=-9223372036854775809}`, ParseOptions{}, 1, 6, "out of range"},
		{"hex overflow", `@a{x=0x8000000000000000}`, ParseOptions{}, 1, 6, "too big for int64"},
		{"float overflow", `@a{x=1.0e999}`, ParseOptions{}, 1, 6, `expected a number within float64 range, found "1.0e999"`},
		{"empty hex", `@a{x=0x}`, ParseOptions{}, 1, 6, `found "0x" (hex digits must follow "0x")`},
		{"signed hex", `@a{x=-0x10}`, ParseOptions{}, 1, 6, `found "-0x10" (hex numbers take no sign)`},
		{"bad hex digit", `@a{x=0x1g}`, ParseOptions{}, 1, 6, `found "0x1g" (a number ends at a separator)`},
		{"dot without fraction", `@a{x=1.}`, ParseOptions{}, 1, 6, `found "1." (a digit must follow ".")`},
		{"exponent without fraction", `@a{x=1e5}`, ParseOptions{}, 1, 6, `found "1e5" (an exponent needs a fraction, as in 1.0e5)`},
		{"exponent without digits", `@a{x=1.5e+}`, ParseOptions{}, 1, 6, `found "1.5e+" (digits must follow the exponent's "e")`},
		{"two dots", `@a{x=1.2.3}`, ParseOptions{}, 1, 6, `found "1.2.3"`},
		{"number runs into letters", `@a{x=12abc}`, ParseOptions{}, 1, 6, `found "12abc" (a number ends at a separator)`},
		{"leading dot", `@a{x=.5}`, ParseOptions{}, 1, 6, `expected a value after "=", found "."`},

		// Arrays
		{"empty array", `@a{x=()}`, ParseOptions{}, 1, 7, `found ")" (an array needs at least one item)`},
		{"trailing comma in array", `@a{x=(1,)}`, ParseOptions{}, 1, 9, `expected a value after ",", found ")"`},
		{"missing comma in array", `@a{x=(1 2)}`, ParseOptions{}, 1, 9, `expected "," or ")" in an array, found "2"`},
		{"unclosed array", `@a{x=(1,2}`, ParseOptions{}, 1, 10, `expected "," or ")" in an array, found "}"`},
		{"depth over limit", deep, ParseOptions{}, 1, 6 + MaxArrayDepth, "expected arrays nested at most 16 deep"},

		// References
		{"unknown ref scope", `@a{x=$foo.y}`, ParseOptions{}, 1, 7, `unknown reference scope "foo" (expected prev, ctx, env or self)`},
		{"ref without scope", `@a{x=$}`, ParseOptions{}, 1, 7, `after "$", found "}"`},
		{"ref without dot", `@a{x=$prev}`, ParseOptions{}, 1, 11, `expected "." after "$prev", found "}"`},
		{"ref without name", `@a{x=$ctx.}`, ParseOptions{}, 1, 11, `expected a name (starting with a letter) after "$ctx.", found "}"`},
		{"ref with path", `@a{x=$prev.a.b}`, ParseOptions{}, 1, 13, `expected ";" or "}" after the value of "x", found "."`},

		// Chains and parallel blocks
		{"arrow with nothing after", `@a{x=1}->`, ParseOptions{}, 1, 10, `expected "@tool{...}" or "[" after "->", found end of input`},
		{"double arrow", `@a{}->->@b{}`, ParseOptions{}, 1, 7, `after "->", found "->"`},
		{"leading arrow", `->@a{}`, ParseOptions{}, 1, 1, `expected a command ("@tool{...}" or "[...]"), found "->"`},
		{"spaced arrow", `@a{}- >@b{}`, ParseOptions{}, 1, 5, `unexpected "-" after end of command (expected "->" or end of input)`},
		{"empty brackets", `[]`, ParseOptions{}, 1, 2, `found "]" (a parallel block needs at least one call)`},
		{"nested brackets", `[[@a{}]]`, ParseOptions{}, 1, 2, `found "[" (only calls go inside a parallel block)`},
		{"trailing comma in block", `[@a{},]`, ParseOptions{}, 1, 7, `expected "@tool{...}" after ",", found "]"`},
		{"missing comma in block", `[@a{} @b{}]`, ParseOptions{}, 1, 7, `expected "," or "]" after a call in "[...]", found "@b"`},
		{"chain inside block", `[@a{}->@b{}]`, ParseOptions{}, 1, 6, `chain whole blocks`},
		{"unclosed block", `[@a{}`, ParseOptions{}, 1, 6, `expected "," or "]" after a call in "[...]", found end of input`},
		{"string as key", `@a{"x"=1}`, ParseOptions{}, 1, 4, `expected a parameter name or "}", found string "x"`},
		{"value in block", `[1]`, ParseOptions{}, 1, 2, `expected "@tool{...}" in "[...]", found "1"`},

		// After the end
		{"junk after command", `@a{} junk`, ParseOptions{}, 1, 6, `unexpected "junk" after end of command (expected "->" or end of input)`},
		{"two calls without arrow", `@a{}@b{}`, ParseOptions{}, 1, 5, `unexpected "@b" after end of command`},
		{"extra brace", `@a{x=1}}`, ParseOptions{}, 1, 8, `unexpected "}" after end of command`},
		{"comment is not a thing", "@a{} # note", ParseOptions{}, 1, 6, `unexpected "#" after end of command`},

		// Line 2 and later
		{"missing value on line 3", "@gpio/write{\n  pin=\"led\";\n  value=\n}", ParseOptions{}, 4, 1, `expected a value after "=", found "}"`},
		{"arrow at end on line 2", "@a{}\n->\n", ParseOptions{}, 3, 1, `after "->", found end of input`},
		{"duplicate on line 2", "[@a{},\n @b{x=1;x=2}]", ParseOptions{}, 2, 9, `duplicate parameter "x" in "@b"`},
		{"bad escape on line 2", "@a{\n\tx=\"ab\\q\"}", ParseOptions{}, 2, 7, `found "q"`},
		{"unterminated on line 3", "@a{x=1;\ny=2;\nz='abc}", ParseOptions{}, 3, 3, "unterminated string"},
		{"CRLF lines", "@a{\r\nx=1;\r\ny=}\r\n", ParseOptions{}, 3, 3, `expected a value after "=", found "}"`},

		// Limits
		{"input over limit", tooLong, ParseOptions{}, 1, MaxInputBytes + 1, "expected at most 65536 bytes of input (64 KiB), found 65544 bytes"},
		// Lines are "@a{}" then "->@a{}"...; byte 65536 is the 5th of line 9363.
		{"input over limit, many lines", tooLongLines, ParseOptions{}, 9363, 5, "64 KiB"},
		{"too many calls", strings.Repeat("@a{}->", MaxCalls) + "@a{}", ParseOptions{}, 1, MaxCalls*6 + 1, "expected at most 64 calls in one command"},
		{"too many calls in a block", "[" + strings.Repeat("@a{},", MaxCalls) + "@a{}]", ParseOptions{}, 1, MaxCalls*5 + 2, "at most 64 calls"},
	}
}

func TestParseErrors(t *testing.T) {
	cases := errCases()
	if len(cases) < 35 {
		t.Fatalf("only %d error cases", len(cases))
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse(tc.src, tc.opts)
			if err == nil {
				t.Fatalf("Parse(%q) = %s, want an error", short(tc.src), short(c.String()))
			}
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("error is %T, want *SyntaxError", err)
			}
			if se.Line != tc.line || se.Column != tc.col || !strings.Contains(se.Msg, tc.msg) {
				t.Fatalf("Parse(%q):\n got %d:%d %s\nwant %d:%d ...%s...", short(tc.src), se.Line, se.Column, se.Msg, tc.line, tc.col, tc.msg)
			}
			if want := lineOf(tc.src, tc.line); se.SourceLine != want {
				t.Errorf("SourceLine = %q, want %q", short(se.SourceLine), short(want))
			}
		})
	}
}

func lineOf(src string, n int) string {
	lines := strings.Split(src, "\n")
	return strings.TrimSuffix(lines[n-1], "\r")
}

func TestErrorText(t *testing.T) {
	_, err := Parse(`@gpio/write{pin="led";value=}`, ParseOptions{})
	if got, want := err.Error(), `line 1, column 29: expected a value after "=", found "}"`; got != want {
		t.Fatalf("Error() = %q, want %q", got, want)
	}
}

func TestCaret(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{`@gpio/write{pin="led";value=}`,
			"@gpio/write{pin=\"led\";value=}\n" +
				"                            ^"},
		// A tab is copied so the caret lines up however wide tabs are shown.
		{"@a{\n\tx=}",
			"\tx=}\n" +
				"\t  ^"},
		// Columns count bytes; "é" is two bytes but one character on screen.
		{`@a{s="é";t=}`,
			"@a{s=\"é\";t=}\n" +
				"           ^"},
		// At the end of the input the caret sits one past the last character.
		{"@a{x=1}->",
			"@a{x=1}->\n" +
				"         ^"},
		{"@a{x=1}\r\n->\r\n",
			"\n" +
				"^"},
		// A long line (issue 11 item 19) shows the window around the column, caret still
		// right; at the start or end only one side is cut.
		{`@a{s="` + strings.Repeat("x", 60000) + `";t=}`,
			"…" + strings.Repeat("x", 75) + `";t=}` + "\n" +
				strings.Repeat(" ", 1+75+4) + "^"},
		{`@a{s="` + strings.Repeat("é", 50) + `";t=}`,
			"…" + strings.Repeat("é", 38) + `";t=}` + "\n" +
				strings.Repeat(" ", 1+38+4) + "^"},
		{`@a{s="` + strings.Repeat("x", 100) + `";t=;u="` + strings.Repeat("y", 100) + `"}`,
			"…" + strings.Repeat("x", 36) + `";t=;u="` + strings.Repeat("y", 36) + "…\n" +
				strings.Repeat(" ", 1+36+4) + "^"},
		{`@a{t=}` + strings.Repeat(" ", 60000),
			`@a{t=}` + strings.Repeat(" ", 74) + "…\n" +
				"     ^"},
	} {
		_, err := Parse(tc.src, ParseOptions{})
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Fatalf("Parse(%q): %v", tc.src, err)
		}
		if got := se.Caret(); got != tc.want {
			t.Errorf("Parse(%q).Caret():\n%s\nwant:\n%s", tc.src, got, tc.want)
		}
	}
}
