package grammar

import (
	"strings"
	"testing"
)

// The longest call a constraint admits, written out, fits MaxReply, and a
// byte more of string does not parse: the bound is the language's own.
func TestMaxReply(t *testing.T) {
	note := ToolSpec{Name: "note/add", Params: []ArgSpec{{Name: "text", Type: TypeString, Required: true, MaxLen: 12}}}
	spec := Spec{Form: FormCommand, Mode: ModeCalls, Tools: []ToolSpec{note}}
	n, ok := MaxReply(spec)
	if !ok {
		t.Fatal("a call with a bounded string is unbounded")
	}
	c := mustCompile(t, spec)
	// Each character as the longest escape the form allows is the worst
	// case; any longest accepted call must fit.
	for _, s := range []string{strings.Repeat("a", 12), strings.Repeat(`\"`, 12), strings.Repeat("é", 12)} {
		call := `@note/add{text="` + s + `"}`
		if !accepts(c, call) {
			t.Fatalf("%q is refused", call)
		}
		if len(call) > n {
			t.Errorf("%q (%d bytes) is accepted but MaxReply says %d", call, len(call), n)
		}
	}
	if accepts(c, `@note/add{text="`+strings.Repeat("a", 13)+`"}`) {
		t.Error("a string past its bound is accepted")
	}
	for name, s := range map[string]Spec{
		"free text": {Form: FormQwen, Mode: ModeAny, Tools: []ToolSpec{note}},
		"an unbounded array": {Form: FormQwen, Mode: ModeCalls, Tools: []ToolSpec{{Name: "a/b",
			Params: []ArgSpec{{Name: "xs", Type: TypeArray, Items: &ArgSpec{Type: TypeInteger}}}}}},
	} {
		if n, ok := MaxReply(s); ok {
			t.Errorf("%s: bounded at %d", name, n)
		}
	}
}
