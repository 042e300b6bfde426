package channels

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// escEcho answers, and streams, text with terminal control sequences in it,
// as a tool's output or an MCP server's may hold.
type escEcho struct{ stream bool }

const evilText = "title\x1b]0;pwned\a\x1b[2J cleared\u009b31m red\rover\nsecond line\ttab"

func (e escEcho) Respond(context.Context, Message) Response { return Response{Text: evilText} }

func (e escEcho) RespondStream(_ context.Context, _ Message, emit func(string)) Response {
	if !e.stream {
		return Response{Text: evilText}
	}
	for _, piece := range strings.SplitAfter(evilText, " ") {
		emit(piece)
	}
	return Response{Text: evilText, Streamed: true}
}

// TestConsoleEscapesControlCharacters: a reply's control characters (ESC,
// BEL, CSI, CR) reach the terminal escaped, whole or streamed; newlines and
// tabs stay.
func TestConsoleEscapesControlCharacters(t *testing.T) {
	for _, stream := range []bool{false, true} {
		var out bytes.Buffer
		c := &Console{Handler: escEcho{stream: stream}, Channel: "console/stdin", User: "console"}
		if err := c.Serve(context.Background(), strings.NewReader("hi\n"), &out); err != nil {
			t.Fatal(err)
		}
		got := out.String()
		if strings.ContainsAny(got, "\x1b\a\r\u009b") {
			t.Errorf("stream %v: a control character reached the terminal: %q", stream, got)
		}
		if want := `title\x1b]0;pwned\a\x1b[2J cleared\u009b31m red\rover` + "\nsecond line\ttab"; !strings.Contains(got, want) {
			t.Errorf("stream %v: got %q, want %q in it", stream, got, want)
		}
	}
}
