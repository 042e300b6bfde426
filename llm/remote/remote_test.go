package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clawedge/clawedge/llm"
)

func TestBackoff(t *testing.T) {
	for n, want := range map[int]time.Duration{1: 100 * time.Millisecond, 2: 200 * time.Millisecond, 3: 400 * time.Millisecond, 9: time.Second} {
		for range 50 {
			d := Backoff(n, 100*time.Millisecond, time.Second)
			if d < want/2 || d > want {
				t.Fatalf("Backoff(%d) = %s, want in [%s, %s]", n, d, want/2, want)
			}
		}
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		h    map[string]string
		want time.Duration
		ok   bool
	}{
		{map[string]string{"retry-after": "3"}, 3 * time.Second, true},
		{map[string]string{"retry-after": "0.5"}, 500 * time.Millisecond, true},
		{map[string]string{"retry-after": "Sat, 21 Nov 2026 12:00:07 GMT"}, 7 * time.Second, true},
		{map[string]string{"retry-after": "Saturday, 21-Nov-26 12:00:02 GMT"}, 2 * time.Second, true},
		{map[string]string{"retry-after": "Sat Nov 21 12:00:04 2026"}, 4 * time.Second, true},
		{map[string]string{"retry-after": "Sat, 21 Nov 2026 11:00:00 GMT"}, 0, true},
		{map[string]string{"retry-after-ms": "250", "retry-after": "9"}, 250 * time.Millisecond, true},
		{map[string]string{"retry-after": "soon"}, 0, false},
		{map[string]string{"retry-after": "-1"}, 0, false},
		{map[string]string{}, 0, false},
	} {
		d, ok := RetryAfter(func(k string) string { return tc.h[k] }, now)
		if d != tc.want || ok != tc.ok {
			t.Errorf("RetryAfter(%v) = %s, %v; want %s, %v", tc.h, d, ok, tc.want, tc.ok)
		}
	}
}

func TestBreaker(t *testing.T) {
	now := time.Unix(1000, 0)
	b := &Breaker{Threshold: 2, Cooldown: 10 * time.Second, Now: func() time.Time { return now }}
	call := func(o Outcome) bool {
		done, _, ok := b.Allow()
		if ok {
			done(o)
			done(Success) // a second call is ignored
		}
		return ok
	}
	if !call(Failure) || b.Open() || !call(Failure) || !b.Open() {
		t.Fatal("two failures in a row should open the breaker")
	}
	if _, wait, ok := b.Allow(); ok || wait != 10*time.Second {
		t.Fatalf("open breaker: allowed %v, wait %s", ok, wait)
	}
	now = now.Add(11 * time.Second)
	done, _, ok := b.Allow() // the probe
	if !ok {
		t.Fatal("half-open breaker refused the probe")
	}
	if _, _, ok := b.Allow(); ok {
		t.Fatal("a second call went through while the probe is under way")
	}
	done(Failure)
	if _, _, ok := b.Allow(); ok {
		t.Fatal("a failed probe should reopen the breaker")
	}
	now = now.Add(11 * time.Second)
	if !call(Neutral) || !call(Success) || b.Open() {
		t.Fatal("a neutral probe frees the slot; a successful one closes the breaker")
	}
	if !call(Failure) || b.Open() {
		t.Fatal("the failure count starts again after a success")
	}
}

func TestWithCallIDs(t *testing.T) {
	in := []llm.Message{
		{Role: llm.RoleUser, Content: "hi"},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{Name: "a"}, {ID: "x", Name: "b"}}},
		{Role: llm.RoleTool, ToolCallID: "x", Content: "B"},
		{Role: llm.RoleTool, Content: "A"},
	}
	out := WithCallIDs(in)
	if in[1].ToolCalls[0].ID != "" || in[3].ToolCallID != "" {
		t.Fatal("input modified")
	}
	if id := out[1].ToolCalls[0].ID; id != "call_1_0" || out[3].ToolCallID != id || out[2].ToolCallID != "x" {
		t.Fatalf("ids: %+v", out)
	}
	if string(Arguments(nil)) != "{}" || string(Arguments([]byte(`{"a":1}`))) != `{"a":1}` || string(Arguments([]byte(`{"a":`))) != `"{\"a\":"` {
		t.Fatal("Arguments")
	}
}

func TestAPIMessage(t *testing.T) {
	for body, want := range map[string][2]string{
		`{"error":{"message":"too long","type":"invalid_request_error","code":"context_length_exceeded"}}`: {"too long", "context_length_exceeded"},
		`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`:                      {"Overloaded", "overloaded_error"},
		`{"error":"model not found"}`: {"model not found", ""},
		"<html>\nbad gateway":         {"<html>", ""},
	} {
		if m, c := APIMessage([]byte(body)); m != want[0] || c != want[1] {
			t.Errorf("APIMessage(%s) = %q, %q", body, m, c)
		}
	}
}

// server answers with the handlers in turn, the last one for any request after.
func server(t *testing.T, hs ...http.HandlerFunc) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(n.Add(1)) - 1
		hs[min(i, len(hs)-1)](w, r)
	}))
	t.Cleanup(s.Close)
	return s, &n
}

func eventStream(events ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, e := range events {
			fmt.Fprintf(w, "data: %s\n\n", e)
			w.(http.Flusher).Flush()
		}
	}
}

func status(code int, body string, h ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(h); i += 2 {
			w.Header().Set(h[i], h[i+1])
		}
		w.WriteHeader(code)
		io.WriteString(w, body)
	}
}

func readEvents(r *Reply) ([]string, error) {
	var out []string
	for {
		ev, err := r.Next()
		if err == io.EOF {
			r.Finish()
			return out, nil
		}
		if err != nil {
			return out, r.Fail(err)
		}
		out = append(out, string(ev.Data))
	}
}

func TestPostRetries(t *testing.T) {
	const key = "sk-very-secret-key-123"
	s, n := server(t,
		status(429, `{"error":{"message":"slow down"}}`, "Retry-After", "0.2"),
		status(503, `{"error":{"message":"busy, key sk-very-secret-key-123"}}`),
		eventStream("a", "b"))
	c := New(Config{Kind: "openai", Name: "lan", RetryBase: 10 * time.Millisecond, Secrets: []string{key},
		APIError: func(_ int, b []byte) (string, bool) { m, _ := APIMessage(b); return m, false }})
	start := time.Now()
	r, err := c.Post(context.Background(), s.URL, nil, []byte("{}"))
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 200*time.Millisecond {
		t.Errorf("Retry-After 0.2 not honoured: succeeded after %s", d)
	}
	if evs, err := readEvents(r); err != nil || strings.Join(evs, ",") != "a,b" || n.Load() != 3 {
		t.Fatalf("events %q, %v after %d requests", evs, err, n.Load())
	}

	// Retries exhausted: the last error, with the status, the API's message,
	// the attempts, and no key.
	s, n = server(t, status(500, `{"error":{"message":"boom sk-very-secret-key-123"}}`))
	c = New(Config{Kind: "openai", Name: "lan", RetryBase: time.Millisecond, MaxRetries: 2, Secrets: []string{key},
		APIError: func(_ int, b []byte) (string, bool) { m, _ := APIMessage(b); return m, false }})
	_, err = c.Post(context.Background(), s.URL, nil, nil)
	if err == nil || !errors.Is(err, llm.ErrUnavailable) || n.Load() != 3 {
		t.Fatalf("err %v after %d requests", err, n.Load())
	}
	if want := `openai "lan": 500 Internal Server Error: boom [redacted] (after 3 attempts)`; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}

	// A Retry-After longer than allowed is not waited for.
	s, n = server(t, status(429, "no", "Retry-After", "120"))
	c = New(Config{Kind: "openai", Name: "lan"})
	if _, err = c.Post(context.Background(), s.URL, nil, nil); err == nil || n.Load() != 1 || !strings.Contains(err.Error(), "asks to retry after 2m0s") {
		t.Fatalf("err %v after %d requests", err, n.Load())
	}

	// A 400 is not retried, and a context-length error is ErrCapacity.
	s, n = server(t, status(400, "too long"))
	c = New(Config{Kind: "openai", Name: "lan", APIError: func(_ int, b []byte) (string, bool) { return string(b), true }})
	if _, err = c.Post(context.Background(), s.URL, nil, nil); !errors.Is(err, llm.ErrCapacity) || errors.Is(err, llm.ErrUnavailable) || n.Load() != 1 {
		t.Fatalf("err %v after %d requests", err, n.Load())
	}
}

func TestTimeouts(t *testing.T) {
	block := make(chan struct{})
	t.Cleanup(func() { close(block) })
	// No header in time: retried, then a clear error.
	s, n := server(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	})
	c := New(Config{Kind: "anthropic", Name: "claude", Timeout: 100 * time.Millisecond, MaxRetries: 1, RetryBase: time.Millisecond})
	_, err := c.Post(context.Background(), s.URL, nil, nil)
	if !errors.Is(err, llm.ErrUnavailable) || !strings.Contains(err.Error(), `anthropic "claude": no reply within 100ms (after 2 attempts)`) || n.Load() != 2 {
		t.Fatalf("err %v after %d requests", err, n.Load())
	}

	// A stream that stalls: the idle timeout, not retried.
	s, n = server(t, func(w http.ResponseWriter, r *http.Request) {
		eventStream("a")(w, r)
		select {
		case <-block:
		case <-r.Context().Done():
		}
	})
	c = New(Config{Kind: "anthropic", Name: "claude", IdleTimeout: 150 * time.Millisecond})
	r, err := c.Post(context.Background(), s.URL, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	evs, err := readEvents(r)
	if len(evs) != 1 || !errors.Is(err, llm.ErrUnavailable) || err.Error() != `anthropic "claude": stream stalled: nothing received for 150ms` {
		t.Fatalf("events %q, err %v", evs, err)
	}
	if d := time.Since(start); d < 150*time.Millisecond || d > 2*time.Second {
		t.Errorf("stall noticed after %s", d)
	}

	// The caller's cancellation is the context's error, not a failure.
	ctx, cancel := context.WithCancel(context.Background())
	b := &Breaker{Threshold: 1}
	c = New(Config{Kind: "anthropic", Name: "claude", Breaker: b})
	r, err = c.Post(ctx, s.URL, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(50*time.Millisecond, cancel)
	if _, err = readEvents(r); !errors.Is(err, context.Canceled) || errors.Is(err, llm.ErrUnavailable) || b.Open() {
		t.Fatalf("cancelled: %v, breaker open %v", err, b.Open())
	}
}

func TestBreakerFailsFast(t *testing.T) {
	s, n := server(t, status(502, "down"), status(502, "down"), eventStream("ok"))
	b := &Breaker{Threshold: 2, Cooldown: 200 * time.Millisecond}
	c := New(Config{Kind: "openai", Name: "lan", MaxRetries: -1, Breaker: b})
	for range 2 {
		if _, err := c.Post(context.Background(), s.URL, nil, nil); !errors.Is(err, llm.ErrUnavailable) {
			t.Fatal(err)
		}
	}
	_, err := c.Post(context.Background(), s.URL, nil, nil)
	if !errors.Is(err, llm.ErrUnavailable) || !strings.Contains(err.Error(), "circuit breaker open") || n.Load() != 2 {
		t.Fatalf("open breaker: %v after %d requests", err, n.Load())
	}
	time.Sleep(250 * time.Millisecond)
	r, err := c.Post(context.Background(), s.URL, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := readEvents(r); err != nil || b.Open() {
		t.Fatalf("probe: %v, open %v", err, b.Open())
	}
}

// Issue 11 item 2: a key the server echoes across a cut (the API's message at
// 500 bytes, the first line at 300, the body read at maxErrorBody) leaves no
// prefix of 8 bytes or more in the error.
func TestErrorsNeverShowPartOfTheKey(t *testing.T) {
	const key = "sk-abcdefghijklmnopqrstuvwxyz0123456"
	var bodies []string
	for cut := 0; cut < len(key); cut += 3 {
		bodies = append(bodies,
			`{"error":{"message":"`+strings.Repeat("x", 499-cut)+" "+key+`"}}`,
			strings.Repeat("y", 299-cut)+" "+key,
			strings.Repeat("z", maxErrorBody-cut)+key)
	}
	for _, body := range bodies {
		s, _ := server(t, status(400, body))
		c := New(Config{Kind: "openai", Name: "lan", Secrets: []string{key},
			APIError: func(_ int, b []byte) (string, bool) { m, _ := APIMessage(b); return m, false }})
		_, err := c.Post(context.Background(), s.URL, nil, nil)
		if err == nil || strings.Contains(err.Error(), key[:8]) {
			t.Fatalf("error %q", err)
		}
	}
}
