package channels

import (
	"context"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// slowEcho answers after wait, streaming n pieces of size bytes first.
type slowEcho struct {
	wait    time.Duration
	n, size int // pieces streamed before the answer to "flood" (only)
}

func (s slowEcho) Respond(ctx context.Context, m Message) Response {
	return s.RespondStream(ctx, m, func(string) {})
}

func (s slowEcho) RespondStream(ctx context.Context, m Message, emit func(string)) Response {
	// Only the stuck client is flooded: a healthy one that had to read 4 MiB
	// within the write timeout's 200 ms per write lost its connection on a
	// loaded machine (CI, load average 15), and the test took that for the
	// slot still held.
	for range s.n {
		if m.Text != "flood" {
			break
		}
		emit(strings.Repeat("x", s.size))
	}
	select {
	case <-time.After(s.wait):
	case <-ctx.Done():
	}
	return Response{Text: "got " + m.Text}
}

// serveBounded serves h with the given bounds until the test ends.
func serveBounded(t *testing.T, h Handler, s ControlSocket) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s.Handler, s.Path = h, filepath.Join(t.TempDir(), ControlSocketName)
	ln, err := s.Listen()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { s.Serve(ctx, ln); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return s.Path
}

// sendWithin sends line on a new connection and returns the reply, failing
// the test when none comes within d.
func sendWithin(t *testing.T, path, line string, d time.Duration) ControlReply {
	t.Helper()
	c := dialControl(t, path, "alice")
	c.conn.SetReadDeadline(time.Now().Add(d))
	r, err := c.Send(line)
	if err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	return r
}

// Past MaxConns a connection is told the socket is busy, as a line's reply
// and as an op's error; once one ends, a new one is served.
func TestControlSocketBoundsConnections(t *testing.T) {
	path := serveBounded(t, slowEcho{}, ControlSocket{MaxConns: 2})
	held := []*ControlClient{dialControl(t, path, "a"), dialControl(t, path, "b")}
	for _, c := range held { // served: each holds a slot
		if r, err := c.Send("hi"); err != nil || r.Text != "got hi" {
			t.Fatalf("held connection: %+v, %v", r, err)
		}
	}
	r := sendWithin(t, path, "hi", 2*time.Second)
	if !r.Failed || !strings.Contains(r.Text, "busy") {
		t.Errorf("third connection: %+v, want a refusal saying the socket is busy", r)
	}
	if _, err := dialControl(t, path, "c").Op("status", nil); err == nil || !strings.Contains(err.Error(), "busy") {
		t.Errorf("an op on the third connection: %v, want busy", err)
	}
	held[0].Close()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if r := sendWithin(t, path, "again", 2*time.Second); !r.Failed && r.Text == "got again" {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("no slot freed after a connection closed: %+v", r)
		}
	}
}

// A connection that sends nothing is closed after IdleTimeout; a call that
// runs longer than that is not idleness; ControlClient dials again by itself
// after the daemon closed an idle connection.
func TestControlSocketIdleTimeout(t *testing.T) {
	path := serveBounded(t, slowEcho{wait: 300 * time.Millisecond}, ControlSocket{IdleTimeout: 100 * time.Millisecond})
	raw, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	raw.SetReadDeadline(time.Now().Add(5 * time.Second))
	start := time.Now()
	if _, err := raw.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("a connection that sent nothing: read %v, want EOF (closed by the daemon)", err)
	}
	t.Logf("closed after %v", time.Since(start))

	c := dialControl(t, path, "alice")
	if r, err := c.Send("long"); err != nil || r.Text != "got long" {
		t.Errorf("a call of 300 ms with an idle timeout of 100 ms: %+v, %v", r, err)
	}
	// The daemon closes the connection once it has been idle 100 ms: wait for
	// it (a loaded machine may take longer than that to get there).
	for deadline := time.Now().Add(5 * time.Second); !peerClosed(c.conn); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the idle connection is still open after 5 s")
		}
	}
	if r, err := c.Send("later"); err != nil || r.Text != "got later" {
		t.Errorf("after the idle close: %+v, %v; want the client to dial again", r, err)
	}
}

// A client that does not read its reply loses its connection after
// WriteTimeout, and with it the slot it held.
func TestControlSocketWriteTimeout(t *testing.T) {
	// 4 MiB of pieces: more than the socket's buffers hold.
	path := serveBounded(t, slowEcho{n: 64, size: 64 << 10}, ControlSocket{MaxConns: 1, WriteTimeout: 200 * time.Millisecond})
	stuck, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer stuck.Close()
	if _, err := io.WriteString(stuck, `{"text":"flood"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // the daemon is writing, the client reads nothing
	// Until the write times out, a new client is refused (told it is busy,
	// or, racing the close, finding the connection closed); then it is served.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		c := dialControl(t, path, "alice")
		c.conn.SetReadDeadline(time.Now().Add(2 * time.Second))
		r, err := c.Send("hi")
		if err == nil && !r.Failed && r.Text == "got hi" {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("the stuck client still holds the only slot: %+v, %v", r, err)
		}
	}
}
