package grammar

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

func TestCanonicalJSONGolden(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{`@gpio/write{pin="led";value=1}`,
			`{"stages":[{"parallel":false,"calls":[{"tool":"gpio/write","namespace":"gpio","name":"write","line":1,"column":1,"params":[{"key":"pin","value":{"type":"string","value":"led"}},{"key":"value","value":{"type":"integer","value":1}}]}]}]}`},
		{`@ping{}`,
			`{"stages":[{"parallel":false,"calls":[{"tool":"ping","namespace":"","name":"ping","line":1,"column":1,"params":[]}]}]}`},
		{"[@gpio/read{pin=0x11}, @sys/uptime{}]\n->@log{v=($prev.a,2.5,-1.0e-7,no);s='<a&b>\t\"é\"\\u{2028}'}",
			`{"stages":[` +
				`{"parallel":true,"calls":[` +
				`{"tool":"gpio/read","namespace":"gpio","name":"read","line":1,"column":2,"params":[{"key":"pin","value":{"type":"integer","value":17}}]},` +
				`{"tool":"sys/uptime","namespace":"sys","name":"uptime","line":1,"column":24,"params":[]}]},` +
				`{"parallel":false,"calls":[` +
				`{"tool":"log","namespace":"","name":"log","line":2,"column":3,"params":[` +
				`{"key":"v","value":{"type":"array","items":[{"type":"reference","scope":"prev","name":"a"},{"type":"number","value":2.5},{"type":"number","value":-1e-7},{"type":"boolean","value":false}]}},` +
				`{"key":"s","value":{"type":"string","value":"<a&b>\t\"é\"\u2028"}}]}]}]}`},
	} {
		c, err := Parse(tc.src, ParseOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := CanonicalJSON(c)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tc.want {
			t.Errorf("CanonicalJSON(%q):\n got %s\nwant %s", tc.src, got, tc.want)
		}
		// encoding/json goes through MarshalJSON, pointer or not. (json.Marshal itself
		// re-escapes < > &, so compare through an Encoder that does not.)
		for _, v := range []any{c, *c} {
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			err := enc.Encode(v)
			if viaPkg := bytes.TrimSuffix(buf.Bytes(), []byte("\n")); err != nil || !bytes.Equal(viaPkg, got) {
				t.Errorf("json Encode(%T) = %s, %v; want the canonical form", v, viaPkg, err)
			}
		}
	}
}

// Everything a parse can produce must decode as JSON with the same strings.
func TestCanonicalJSONDecodes(t *testing.T) {
	for _, tc := range validCases() {
		c, err := Parse(tc.src, tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		b, err := CanonicalJSON(c)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var doc struct {
			Stages []struct {
				Parallel bool
				Calls    []struct {
					Tool         string
					Line, Column int
					Params       []struct {
						Key   string
						Value json.RawMessage
					}
				}
			}
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s: %v\n%s", tc.name, err, short(string(b)))
		}
		for i, st := range doc.Stages {
			for j, call := range st.Calls {
				want := c.Stages[i].Calls[j]
				if call.Tool != want.Tool() || call.Line != want.Pos.Line || call.Column != want.Pos.Column || len(call.Params) != len(want.Params) {
					t.Fatalf("%s: call %d.%d decoded as %+v", tc.name, i, j, call)
				}
				for k, p := range call.Params {
					wantP := want.Params[k]
					if p.Key != wantP.Key {
						t.Fatalf("%s: key %q, want %q", tc.name, p.Key, wantP.Key)
					}
					if wantP.Value.Kind == String {
						var v struct{ Value string }
						if err := json.Unmarshal(p.Value, &v); err != nil || v.Value != wantP.Value.Str {
							t.Fatalf("%s: string %q decoded as %q (%v)", tc.name, wantP.Value.Str, v.Value, err)
						}
					}
				}
			}
		}
	}
}

func TestCanonicalJSONRefusesWhatJSONCannotHold(t *testing.T) {
	for _, v := range []Value{FloatValue(math.NaN()), FloatValue(math.Inf(1)), {}, ArrayValue(IntValue(1), Value{Kind: 99})} {
		c := single("a", kv("x", v))
		if b, err := CanonicalJSON(c); err == nil {
			t.Errorf("CanonicalJSON with %+v = %s, want an error", v, b)
		}
	}
	if b, err := CanonicalJSON(nil); err != nil || string(b) != "null" {
		t.Errorf("CanonicalJSON(nil) = %s, %v", b, err)
	}
}

func TestString(t *testing.T) {
	for _, tc := range []struct {
		in   *Command
		want string
	}{
		{single("ping"), `@ping{}`},
		{single("gpio/write", kv("pin", StringValue("led")), kv("on", BoolValue(true))), `@gpio/write{pin="led";on=true}`},
		{single("a", kv("s", StringValue("q\"b\\n\n\t\r\x00\x1b\x7f'é"))), `@a{s="q\"b\\n\n\t\r\0\x1B\x7F'é"}`},
		{single("a", kv("s", StringValue("bad\xffbyte"))), `@a{s="bad\u{FFFD}byte"}`},
		{single("a", kv("f", FloatValue(1)), kv("g", FloatValue(1e21)), kv("h", FloatValue(-2.5e-8)), kv("z", FloatValue(math.Copysign(0, -1)))),
			`@a{f=1.0;g=1.0e+21;h=-2.5e-08;z=-0.0}`},
		{single("a", kv("i", IntValue(math.MinInt64)), kv("r", ref("self", "x")), kv("l", ArrayValue(IntValue(1), ArrayValue(BoolValue(false))))),
			`@a{i=-9223372036854775808;r=$self.x;l=(1,(false))}`},
		{cmd(par(call("a"), call("b")), one(call("c"))), `[@a{},@b{}]->@c{}`},
		{&Command{}, ``},
	} {
		if got := tc.in.String(); got != tc.want {
			t.Errorf("String() = %s, want %s", got, tc.want)
		}
	}
}
