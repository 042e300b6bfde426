package sse

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

type ev struct{ typ, data string }

func readAll(in string, maxLine, maxEvent int) ([]ev, error) {
	s := NewReader(strings.NewReader(in))
	s.MaxLine, s.MaxEvent = maxLine, maxEvent
	var out []ev
	for {
		e, err := s.Next()
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return out, err
		}
		out = append(out, ev{e.Type, string(e.Data)})
	}
}

func TestSSE(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []ev
		err      error
	}{
		{"openai", "data: {\"a\":1}\n\ndata: [DONE]\n\n", []ev{{"", `{"a":1}`}, {"", "[DONE]"}}, nil},
		{"anthropic", "event: ping\ndata: {\"type\": \"ping\"}\n\nevent: message_stop\ndata: {}\n\n", []ev{{"ping", `{"type": "ping"}`}, {"message_stop", "{}"}}, nil},
		{"crlf and cr", "data: a\r\n\r\ndata: b\r\rdata: c\n\n", []ev{{"", "a"}, {"", "b"}, {"", "c"}}, nil},
		{"multi-line data", "data: a\ndata\ndata:  b\n\n", []ev{{"", "a\n\n b"}}, nil},
		{"comments and unknown fields", ": keep-alive\nid: 7\nretry: 10\nfoo\ndata:x\n\n", []ev{{"", "x"}}, nil},
		{"blank lines alone", "\n\n\r\n: hi\n\n", nil, nil},
		{"event without data is dropped", "event: a\n\ndata: b\n\n", []ev{{"", "b"}}, nil},
		{"cut inside an event", "data: a\n\ndata: b\n", []ev{{"", "a"}}, io.ErrUnexpectedEOF},
		{"cut inside a line", "data: a\n\ndata: b", []ev{{"", "a"}}, io.ErrUnexpectedEOF},
		{"line too long", "data: " + strings.Repeat("x", 100) + "\n\n", nil, ErrTooLong},
		{"event too long", strings.Repeat("data: 0123456789\n", 20) + "\n", nil, ErrTooLong},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readAll(tc.in, 64, 128)
			if !errors.Is(err, tc.err) {
				t.Fatalf("error %v, want %v", err, tc.err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("events %q, want %q", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("event %d = %q, want %q", i, got[i], tc.want[i])
				}
			}
		})
	}
}

// encode writes events as a server would, with the given line end.
func encode(evs []ev, nl string) string {
	var b strings.Builder
	for _, e := range evs {
		if e.typ != "" {
			b.WriteString("event: " + e.typ + nl)
		}
		for _, l := range strings.Split(e.data, "\n") {
			b.WriteString("data: " + l + nl)
		}
		b.WriteString(nl)
	}
	return b.String()
}

func FuzzSSE(f *testing.F) {
	f.Add([]byte("event: x\ndata: {\"a\":1}\n\ndata: [DONE]\n\n"))
	f.Add([]byte("data: a\r\n\r\ndata: b\r\r: c\n\n"))
	f.Add([]byte("data\ndata:\n\nevent\n\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		// Any input: no panic, bounded events, and an end.
		s := NewReader(bytes.NewReader(in))
		s.MaxLine, s.MaxEvent = 64, 256
		var evs []ev
		for range len(in) + 2 {
			e, err := s.Next()
			if err != nil {
				break
			}
			if len(e.Data) > 256 {
				t.Fatalf("event of %d bytes over the bound", len(e.Data))
			}
			evs = append(evs, ev{e.Type, string(e.Data)})
		}
		// Events whose fields hold no line ends survive encoding and decoding,
		// whatever the line end.
		var clean []ev
		for _, e := range evs {
			if !strings.ContainsAny(e.typ+e.data, "\r") && !strings.Contains(e.typ, "\n") {
				clean = append(clean, e)
			}
		}
		for _, nl := range []string{"\n", "\r\n", "\r"} {
			got, err := readAll(encode(clean, nl), 1<<20, 1<<20)
			if err != nil || len(got) != len(clean) {
				t.Fatalf("re-read %q with %q: %q, %v", clean, nl, got, err)
			}
			for i := range got {
				if got[i] != clean[i] {
					t.Fatalf("re-read event %d = %q, want %q", i, got[i], clean[i])
				}
			}
		}
	})
}
