//go:build llamacpp

package main

import (
	"slices"
	"testing"

	"github.com/clawedge/clawedge/localmodel/wire"
)

func TestCompleteUTF8(t *testing.T) {
	euro := []byte("€") // e2 82 ac
	for _, c := range []struct {
		in   []byte
		want int
	}{
		{[]byte("abc"), 3},
		{append([]byte("a"), euro[:1]...), 1},
		{append([]byte("a"), euro[:2]...), 1},
		{append([]byte("a"), euro...), 4},
		{[]byte{0xff}, 1},       // invalid: passed on
		{[]byte{0x82, 0xac}, 2}, // stray continuation bytes: passed on
		{nil, 0},
	} {
		if got := completeUTF8(c.in); got != c.want {
			t.Errorf("completeUTF8(% x) = %d, want %d", c.in, got, c.want)
		}
	}
}

// TestOutputHoldsStops: text that may begin a stop string is held back, and
// nothing of a stop string is ever sent.
func TestOutputHoldsStops(t *testing.T) {
	var sent []wire.Token
	o := output{stops: []string{"</x>"}, emit: func(tok wire.Token) { sent = append(sent, tok) }}
	texts := func() (s []string) {
		for _, tok := range sent {
			s = append(s, tok.Text)
		}
		return s
	}
	steps := []struct {
		piece string
		stop  bool
		sent  []string
	}{
		{"a", false, []string{"a"}},
		{"b<", false, []string{"a"}},                // "<" may begin the stop: the token waits
		{"/", false, []string{"a"}},                 // still a prefix of the stop
		{"y", false, []string{"a", "b<", "/", "y"}}, // not the stop after all
		{"c</", false, []string{"a", "b<", "/", "y"}},
		{"x>d", true, []string{"a", "b<", "/", "y", "c"}}, // the stop: cut before it
	}
	for i, st := range steps {
		if got := o.add(int32(i), []byte(st.piece), 1); got != st.stop {
			t.Fatalf("step %d (%q): stop = %v", i, st.piece, got)
		}
		if got := texts(); !slices.Equal(got, st.sent) {
			t.Fatalf("step %d (%q): sent %q, want %q", i, st.piece, got, st.sent)
		}
	}
	if sent[4].ID != 4 {
		t.Errorf("cut token has ID %d, want 4", sent[4].ID)
	}

	// Without a stop, flush sends what is held; a split character goes with
	// the token that completes it.
	sent = nil
	o = output{stops: []string{"zz"}, emit: func(tok wire.Token) { sent = append(sent, tok) }}
	euro := []byte("€")
	o.add(1, euro[:2], 1)
	o.add(2, append(euro[2:], 'z'), 1)
	o.flush()
	if got := texts(); !slices.Equal(got, []string{"", "€z"}) {
		t.Errorf("split character and flush: %q", got)
	}
}
