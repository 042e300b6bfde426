package anthropic

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/clawedge/clawedge/internal/sse"
	"github.com/clawedge/clawedge/llm/remote"
)

// FuzzDecode feeds whatever a server might stream to the event decoder: it
// must never panic, and a reply it accepts has calls with JSON arguments.
func FuzzDecode(f *testing.F) {
	f.Add([]byte("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"m\",\"usage\":{\"input_tokens\":3}}}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"gpio__write\",\"input\":{}}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"pin\\\":\"}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"1}\"}}\n\n" +
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":9}}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"))
	f.Add([]byte("event: content_block_start\ndata: {\"index\":1,\"content_block\":{\"type\":\"text\",\"text\":\"hi\"}}\n\nevent: error\ndata: {\"error\":{\"message\":\"x\"}}\n\n"))
	p, err := New(Options{Options: remote.Options{Model: "m", APIKey: "k"}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		s := &stream{p: p, blocks: map[int]*block{}}
		events := sse.NewReader(bytes.NewReader(in))
		for {
			ev, err := events.Next()
			if err != nil {
				break
			}
			_, done, err := s.decode(ev.Type, ev.Data)
			if err != nil {
				return
			}
			if done {
				break
			}
		}
		for _, c := range s.final().ToolCalls {
			if !json.Valid(c.Arguments) {
				t.Fatalf("call %q: arguments %q are not JSON", c.Name, c.Arguments)
			}
		}
	})
}
