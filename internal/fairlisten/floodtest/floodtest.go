// Package floodtest holds connections open to a server under test the way a
// stranger filling its slots would: idle ones, and ones that sent half a
// request. Tests only; 127.0.0.1 only.
package floodtest

import (
	"io"
	"net"
	"testing"
	"time"
)

// Hold opens idle connections to addr that send nothing, then half ones that
// send a request line and a header but never the blank line that ends the
// request, and keeps them open until the test ends. It returns how many
// were made.
func Hold(t testing.TB, addr string, idle, half int) int {
	t.Helper()
	if h, _, _ := net.SplitHostPort(addr); h != "127.0.0.1" {
		t.Fatalf("floodtest: %s: only 127.0.0.1", addr)
	}
	made := 0
	for i := range idle + half {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Logf("floodtest: connection %d: %v", i, err)
			continue
		}
		t.Cleanup(func() { c.Close() })
		made++
		if i >= idle {
			c.SetWriteDeadline(time.Now().Add(5 * time.Second))
			io.WriteString(c, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
		}
	}
	return made
}
