package mcp

import (
	"io"
	"strings"

	"github.com/clawedge/clawedge/internal/sse"
)

// newEventReader reads a peer's event stream: an event is one message, so a
// line and an event are bounded by MaxMessage.
func newEventReader(r io.Reader) *sse.Reader {
	er := sse.NewReader(r)
	er.MaxLine, er.MaxEvent = MaxMessage, MaxMessage
	return er
}

// isMessage says whether ev carries a JSON-RPC message (its type is
// "message", named or by default).
func isMessage(ev sse.Event) bool { return ev.Type == "" || ev.Type == "message" }

// writeEvent writes data (one message, JSON without newlines) as a
// "message" event.
func writeEvent(w io.Writer, data []byte) error {
	var b strings.Builder
	b.WriteString("event: message\n")
	for _, line := range strings.Split(string(data), "\n") {
		b.WriteString("data: " + line + "\n")
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}
