package openai

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/clawedge/clawedge/internal/sse"
	"github.com/clawedge/clawedge/llm/remote"
)

// FuzzDecode feeds whatever a server might stream to the chunk decoder: it
// must never panic, and a reply it accepts has calls with JSON arguments.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`data: {"model":"m","choices":[{"delta":{"content":"hi","tool_calls":[{"index":0,"id":"c","function":{"name":"gpio__write","arguments":"{\"a\""}}]}}]}` + "\n\n" +
		`data: {"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":":1}"}}]},"finish_reason":"tool_calls"}]}` + "\n\n" +
		`data: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4,"prompt_tokens_details":{"cached_tokens":1}}}` + "\n\n" +
		"data: [DONE]\n\n"))
	f.Add([]byte(`data: {"choices":[{"delta":{"tool_calls":[{"id":"a","function":{"name":"x","arguments":"{}"}},{"id":"b","function":{"name":"y","arguments":"{"}}]}}]}` + "\n\n"))
	f.Add([]byte(`data: {"error":{"message":"boom","code":500}}` + "\n\n"))
	p, err := New(Options{Options: remote.Options{Model: "m"}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		s := &stream{p: p, calls: map[int]int{}}
		events := sse.NewReader(bytes.NewReader(in))
		for {
			ev, err := events.Next()
			if err != nil {
				break
			}
			_, done, err := s.decode(ev.Data)
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
