package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/clawedge/clawedge/grammar"
)

func TestRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	req := Request{ID: 7, Op: OpGenerate, Generate: &Generate{Prompt: "héllo <|im_end|>", MaxTokens: 3, Stop: []string{"\n"}, Sampling: Sampling{Temperature: 0.7, Seed: 42}}}
	if err := w.Write(req); err != nil {
		t.Fatal(err)
	}
	w.Write(Response{ID: 7, Type: TypeDone, Done: &Done{Reason: "eog", ReusedTokens: 12}})
	var got Request
	if err := Read(&buf, &got); err != nil {
		t.Fatal(err)
	}
	if got.ID != 7 || got.Generate.Prompt != req.Generate.Prompt || got.Generate.Sampling.Seed != 42 {
		t.Errorf("request round trip: %+v", got)
	}
	var resp Response
	if err := Read(&buf, &resp); err != nil || resp.Done.ReusedTokens != 12 {
		t.Errorf("response round trip: %+v %v", resp, err)
	}
	if err := Read(&buf, &resp); err != io.EOF {
		t.Errorf("at the end: %v, want io.EOF", err)
	}
}

func TestConstraintRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	spec := &grammar.Spec{Form: grammar.FormQwen, Mode: grammar.ModeCalls, Tools: []grammar.ToolSpec{
		{Name: "gpio.write", Params: []grammar.ArgSpec{{Name: "pin", Type: "string", Required: true, Enum: []string{"led"}}}}}}
	NewWriter(&buf).Write(Request{ID: 1, Op: OpGenerate, Generate: &Generate{Prompt: "p", Constraint: spec}})
	if !strings.Contains(buf.String(), `"constraint":{"form":"qwen","mode":"calls"`) {
		t.Errorf("constraint on the wire: %s", buf.Bytes()[4:])
	}
	var got Request
	if err := Read(&buf, &got); err != nil {
		t.Fatal(err)
	}
	c := got.Generate.Constraint
	if c == nil || c.Form != spec.Form || c.Mode != spec.Mode || len(c.Tools) != 1 || c.Tools[0].Params[0].Enum[0] != "led" {
		t.Errorf("constraint round trip: %+v", c)
	}
	// Unconstrained requests do not mention it.
	buf.Reset()
	NewWriter(&buf).Write(Request{ID: 2, Op: OpGenerate, Generate: &Generate{Prompt: "p"}})
	if strings.Contains(buf.String(), "constraint") {
		t.Errorf("unconstrained request: %s", buf.Bytes()[4:])
	}
}

func TestMalformed(t *testing.T) {
	frame := func(n uint32, body string) []byte {
		b := binary.BigEndian.AppendUint32(nil, n)
		return append(b, body...)
	}
	for name, in := range map[string][]byte{
		"short header": {0, 0},
		"too long":     frame(MaxFrame+1, ""),
		"short body":   frame(10, "{}"),
		"not json":     frame(3, "abc"),
	} {
		var r Request
		if err := Read(bytes.NewReader(in), &r); !errors.Is(err, ErrFrame) {
			t.Errorf("%s: %v, want ErrFrame", name, err)
		}
	}
	if err := NewWriter(io.Discard).Write(Tokenize{Text: strings.Repeat("x", MaxFrame)}); err == nil {
		t.Error("oversized frame written")
	}
}

func TestConcurrentWritesStayFramed(t *testing.T) {
	var buf bytes.Buffer
	var mu sync.Mutex
	w := NewWriter(writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return buf.Write(p) }))
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			w.Write(Response{ID: uint64(i), Type: TypeToken, Token: &Token{Text: strings.Repeat("ab", i*100)}})
		})
	}
	wg.Wait()
	for range 50 {
		var r Response
		if err := Read(&buf, &r); err != nil || len(r.Token.Text) != int(r.ID)*200 {
			t.Fatalf("frame %+v: %v", r.ID, err)
		}
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func FuzzRead(f *testing.F) {
	var buf bytes.Buffer
	NewWriter(&buf).Write(Request{ID: 1, Op: OpLoad, Load: &Load{Path: "m.gguf"}})
	f.Add(buf.Bytes())
	f.Add([]byte{0, 0, 0, 2, '{', '}'})
	f.Add([]byte{255, 255, 255, 255})
	f.Fuzz(func(t *testing.T, in []byte) {
		r := bytes.NewReader(in)
		for {
			var req Request
			if err := Read(r, &req); err != nil {
				return
			}
		}
	})
}
