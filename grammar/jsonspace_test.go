package grammar

import "testing"

// SchemaBlanks counts the JSON tokens a blank may follow in the longest value
// JSONSchema allows, and gives up where the schema bounds no length.
func TestSchemaBlanks(t *testing.T) {
	pin := ArgSpec{Name: "pin", Type: TypeString, Required: true, Enum: []string{"led", "fan"}}
	on := ArgSpec{Name: "on", Type: TypeBoolean, Required: true}
	write := ToolSpec{Name: "gpio/write", Params: []ArgSpec{pin, on}}
	list := ToolSpec{Name: "i2c/write", Params: []ArgSpec{{Name: "bytes", Type: TypeArray, Required: true, MaxItems: 4,
		Items: &ArgSpec{Type: TypeInteger}}}}
	for _, c := range []struct {
		name string
		spec Spec
		gaps int // the JSON tokens blanks may follow; -1: unbounded
	}{
		// {"pin": "led", "on": true}: "{", "}", and per member key, ":",
		// value, ",".
		{"json, one tool: its arguments", Spec{Form: FormJSON, Mode: ModeCalls, Tools: []ToolSpec{write}}, 2 + 4 + 4},
		// {"name": ..., "arguments": {...}} around the same.
		{"qwen: the call object", Spec{Form: FormQwen, Mode: ModeCalls, Tools: []ToolSpec{write}}, 2 + 4 + 3 + 10},
		// An array of at most 4 integers: "[", "]", each item and its ",".
		{"the longer of two tools", Spec{Form: FormQwen, Mode: ModeAny, Tools: []ToolSpec{write, list}}, 2 + 4 + 3 + (2 + 3 + (2 + 4*2))},
		{"an array without maxItems", Spec{Form: FormQwen, Mode: ModeCalls, Tools: []ToolSpec{{Name: "a/b",
			Params: []ArgSpec{{Name: "xs", Type: TypeArray, Items: &ArgSpec{Type: TypeInteger}}}}}}, -1},
		{"a free-form object", Spec{Form: FormQwen, Mode: ModeCalls, Tools: []ToolSpec{{Name: "a/b",
			Params: []ArgSpec{{Name: "o", Type: TypeObject, AnyProps: true}}}}}, -1},
		{"text", Spec{Form: FormQwen, Mode: ModeText, Tools: []ToolSpec{write}}, -1},
	} {
		n, ok := SchemaBlanks(c.spec)
		if c.gaps < 0 && ok || c.gaps >= 0 && (!ok || n != ServerBlank*c.gaps) {
			t.Errorf("%s: %d, %v; want %d gaps of %d", c.name, n, ok, c.gaps, ServerBlank)
		}
	}
}
