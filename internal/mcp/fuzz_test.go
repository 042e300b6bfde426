package mcp

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"
)

// FuzzMessages feeds outside bytes to the three readers of peers' messages:
// Decode, the stdio stream and the event stream. None may panic or loop; a
// message Decode accepts encodes and decodes again to the same kind.
func FuzzMessages(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{}}}`))
	f.Add([]byte("event: endpoint\ndata: /messages?sessionId=1\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"a\",\"result\":{}}\n\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if m, err := Decode(b); err == nil {
			again, _ := json.Marshal(m)
			m2, err := Decode(again)
			if err != nil || m2.IsRequest() != m.IsRequest() || m2.IsResponse() != m.IsResponse() {
				t.Fatalf("%q decoded, but its encoding %q does not (%v)", b, again, err)
			}
		}
		s := NewStream("fuzz", bytes.NewReader(b), io.Discard, nil)
		for range len(b) + 1 {
			if _, err := s.Read(); err != nil {
				break
			}
		}
		er := newEventReader(bytes.NewReader(b))
		for range len(b) + 1 {
			ev, err := er.Next()
			if err != nil {
				break
			}
			Decode(ev.Data)
		}
	})
}
