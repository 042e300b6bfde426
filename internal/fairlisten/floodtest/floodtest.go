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

// Hold opens idle connections to addr, then half ones, and keeps them open
// until the test ends; it returns how many were made. Of the idle ones,
// every other one sends request (a whole HTTP/1.1 request, such as
// "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n") and then nothing, never
// reading the answer (a keep-alive connection left idle), and the others send
// nothing at all. The half ones send a request line and a header but never
// the blank line that ends the request.
func Hold(t testing.TB, addr, request string, idle, half int) int {
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
		c.SetWriteDeadline(time.Now().Add(5 * time.Second))
		switch {
		case i >= idle:
			io.WriteString(c, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
		case i%2 == 0 && request != "":
			io.WriteString(c, request)
		}
	}
	return made
}
