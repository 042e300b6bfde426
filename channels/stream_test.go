package channels

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

// streamAgent replies with its pieces, emitted one by one, then fails if err is set.
type streamAgent struct {
	pieces []string
	err    error
}

func (a streamAgent) Reply(ctx context.Context, m Message) (string, error) {
	return a.ReplyStream(ctx, m, func(string) {})
}

func (a streamAgent) ReplyStream(_ context.Context, _ Message, emit func(string)) (string, error) {
	for _, p := range a.pieces {
		emit(p)
	}
	return strings.Join(a.pieces, ""), a.err
}

func TestConsoleStreamsAgentReplies(t *testing.T) {
	d, _ := newDispatcher(t)
	d.Agent = streamAgent{pieces: []string{"Hel", "lo\nth", "ere"}}
	var out bytes.Buffer
	c := &Console{Handler: d, Channel: "console/stdin"}
	if err := c.Serve(context.Background(), strings.NewReader("hi\n@gpio/write{pin=\"led\";value=1}\n"), &out); err != nil {
		t.Fatal(err)
	}
	if want := "Hello\nthere\nled = 1\n"; out.String() != want {
		t.Errorf("output %q, want %q", out.String(), want)
	}

	// On a terminal, line ends become CR LF inside the stream too.
	out.Reset()
	c.Terminal = true
	c.Serve(context.Background(), strings.NewReader("hi\r"), &out)
	if want := "hi\r\nHello\r\nthere\r\n"; out.String() != want {
		t.Errorf("terminal output %q, want %q", out.String(), want)
	}

	// A stream that fails part way: the error goes on its own line.
	out.Reset()
	c.Terminal = false
	d.Agent = streamAgent{pieces: []string{"Hal"}, err: errors.New("runner died")}
	c.Serve(context.Background(), strings.NewReader("hi\n"), &out)
	if want := "Hal\nerror: runner died\n"; out.String() != want {
		t.Errorf("output %q, want %q", out.String(), want)
	}

	// Respond (no emit) still returns the whole reply, not streamed.
	d.Agent = streamAgent{pieces: []string{"a", "b"}}
	if r := d.Respond(context.Background(), Message{Text: "hi"}); r.Text != "ab" || r.Streamed {
		t.Errorf("Respond = %+v", r)
	}
}
