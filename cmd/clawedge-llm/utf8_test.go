//go:build llamacpp

package main

import "testing"

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
