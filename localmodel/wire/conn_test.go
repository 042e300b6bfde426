package wire

import (
	"errors"
	"io"
	"testing"
)

// fakeRunner is the runner's side of a Conn over two pipes: it answers what
// the test tells it to.
type fakeRunner struct {
	reqs *io.PipeReader // what the client sends
	out  *io.PipeWriter // what the runner writes
	w    *Writer
}

func newConnPair(t *testing.T, buffer int, end func(error) error) (*Conn, *fakeRunner) {
	t.Helper()
	reqR, reqW := io.Pipe()
	outR, outW := io.Pipe()
	t.Cleanup(func() { reqR.Close(); outW.Close() })
	return NewConn(reqW, outR, buffer, end), &fakeRunner{reqs: reqR, out: outW, w: NewWriter(outW)}
}

func (f *fakeRunner) next(t *testing.T) Request {
	t.Helper()
	var req Request
	if err := Read(f.reqs, &req); err != nil {
		t.Fatal(err)
	}
	return req
}

// Answers are routed by ID, whatever their order; a request's channel closes
// after its final answer; tokens before it arrive in order.
func TestConnRoutes(t *testing.T) {
	c, f := newConnPair(t, 8, nil)
	type sent struct {
		id uint64
		ch <-chan Response
	}
	got := make(chan sent, 2)
	go func() {
		for _, op := range []string{OpGenerate, OpHealth} {
			id, ch, err := c.Send(Request{Op: op})
			if err != nil {
				t.Error(err)
			}
			got <- sent{id, ch}
		}
	}()
	gen, health := f.next(t), f.next(t)
	g, h := <-got, <-got
	if gen.ID != g.id || health.ID != h.id || g.id == h.id {
		t.Fatalf("IDs: sent %d, %d; runner saw %d, %d", g.id, h.id, gen.ID, health.ID)
	}
	f.w.Write(Response{ID: gen.ID, Type: TypeToken, Token: &Token{Text: "a"}})
	f.w.Write(Response{ID: health.ID, Type: TypeOK, Health: &Health{Busy: true}})
	f.w.Write(Response{ID: 999, Type: TypeOK}) // nobody's: dropped
	f.w.Write(Response{ID: gen.ID, Type: TypeToken, Token: &Token{Text: "b"}})
	f.w.Write(Response{ID: gen.ID, Type: TypeDone, Done: &Done{Reason: "eog"}})
	if r := <-h.ch; r.Health == nil || !r.Health.Busy {
		t.Errorf("health answer %+v", r)
	}
	if _, open := <-h.ch; open {
		t.Error("the health channel is open after its final answer")
	}
	var text string
	for r := range g.ch {
		if r.Token != nil {
			text += r.Token.Text
		}
	}
	if text != "ab" {
		t.Errorf("tokens %q, want ab", text)
	}
}

// Call skips tokens, turns an "error" answer into an error, and returns
// ErrCancelled when cancelled first.
func TestConnCall(t *testing.T) {
	c, f := newConnPair(t, 8, nil)
	go func() {
		req := f.next(t)
		f.w.Write(Response{ID: req.ID, Type: TypeToken, Token: &Token{}})
		f.w.Write(Response{ID: req.ID, Type: TypeError, Error: "no model loaded"})
		f.next(t) // the cancelled one: never answered
	}()
	if resp, err := c.Call(Request{Op: OpTokenize}, nil); err == nil || err.Error() != "no model loaded" || resp.Type != TypeError {
		t.Errorf("error answer: %+v, %v", resp, err)
	}
	cancel := make(chan struct{})
	close(cancel)
	if _, err := c.Call(Request{Op: OpStats}, cancel); !errors.Is(err, ErrCancelled) {
		t.Errorf("cancelled call: %v", err)
	}
}

// When the runner's output ends, end says why (the client reaps its process
// there) before any waiting request is told, and later sends get the same.
func TestConnEnd(t *testing.T) {
	died := errors.New("the runner died: exit status 2")
	var endSaw error
	c, f := newConnPair(t, 8, func(readErr error) error { endSaw = readErr; return died })
	go func() {
		f.next(t)
		f.out.Close()
	}()
	if _, err := c.Call(Request{Op: OpLoad}, nil); err != died {
		t.Errorf("a call waiting when the runner died: %v", err)
	}
	<-c.Ended()
	if !errors.Is(endSaw, io.EOF) || c.Err() != died {
		t.Errorf("end saw %v; Err %v", endSaw, c.Err())
	}
	if _, _, err := c.Send(Request{Op: OpHealth}); err != died {
		t.Errorf("send after the end: %v", err)
	}
}
