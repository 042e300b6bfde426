// Package remote holds what the remote model providers (llm/openai,
// llm/anthropic) share: one POST that streams its reply as server-sent
// events, with a first-byte timeout, an idle timeout on the stream, retries
// with backoff that honour Retry-After, a circuit breaker, and errors that
// say which provider failed and why, without ever quoting a secret.
//
// It speaks HTTP through internal/httpclient: the process's one pool of
// connections, proxies from the environment, errors without the URL.
package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/clawedge/clawedge/internal/httpclient"
	"github.com/clawedge/clawedge/internal/redact"
	"github.com/clawedge/clawedge/internal/sse"
	"github.com/clawedge/clawedge/llm"
)

// Defaults for the zero values of Config.
const (
	DefaultTimeout       = 60 * time.Second
	DefaultIdleTimeout   = 60 * time.Second
	DefaultMaxRetries    = 2
	DefaultRetryBase     = 500 * time.Millisecond
	DefaultRetryMax      = 10 * time.Second
	DefaultMaxRetryAfter = 30 * time.Second
	maxErrorBody         = 64 << 10
)

// Config of a Caller.
type Config struct {
	// Kind and Name say who failed in errors: `openai "lan": ...`.
	Kind, Name string
	// Timeout bounds connecting and then waiting for the reply's status and
	// header (a server loading a model or reading a long prompt may take a
	// while before it answers). 0: DefaultTimeout.
	Timeout time.Duration
	// IdleTimeout fails a reply stream that receives nothing for this long.
	// 0: DefaultIdleTimeout.
	IdleTimeout time.Duration
	// MaxRetries is how many times a call that failed before any of its reply
	// arrived (network error, timeout, 429, 5xx) is sent again.
	// 0: DefaultMaxRetries; negative: none.
	MaxRetries int
	// RetryBase is the first delay between attempts; it doubles up to
	// RetryMax. A Retry-After from the server replaces it, unless it asks
	// for more than MaxRetryAfter: then the call fails at once, saying so.
	RetryBase, RetryMax, MaxRetryAfter time.Duration
	// Breaker, if not nil, is consulted before every call (one per provider).
	Breaker *Breaker
	// Secrets are replaced by "[redacted]" in every error (the API key).
	Secrets []string
	// Client sends the requests; nil: httpclient's, sharing the process's
	// connections.
	Client *http.Client
	// APIError reads an error reply's body: the API's message, and whether
	// it says the request is too long for the model's context. nil: the
	// body's first line.
	APIError func(status int, body []byte) (msg string, capacity bool)
	// Setup, when set, recognises an error message that the server's setup
	// causes (llama-server started without --jinja) and says how to fix it:
	// such a reply is not retried (every retry would get it again), and the
	// fix is added to the error.
	Setup func(status int, msg string) (fix string)
}

// Caller sends requests for one provider. It is safe for concurrent use.
type Caller struct {
	cfg Config
}

// New returns a Caller; cfg's zero values are the defaults.
func New(cfg Config) *Caller {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	switch {
	case cfg.MaxRetries == 0:
		cfg.MaxRetries = DefaultMaxRetries
	case cfg.MaxRetries < 0:
		cfg.MaxRetries = 0
	}
	if cfg.RetryBase <= 0 {
		cfg.RetryBase = DefaultRetryBase
	}
	if cfg.RetryMax <= 0 {
		cfg.RetryMax = DefaultRetryMax
	}
	if cfg.MaxRetryAfter <= 0 {
		cfg.MaxRetryAfter = DefaultMaxRetryAfter
	}
	if cfg.Client == nil {
		cfg.Client = httpclient.New(httpclient.Options{})
	}
	if cfg.APIError == nil {
		cfg.APIError = func(_ int, body []byte) (string, bool) { return firstLine(body), false }
	}
	return &Caller{cfg: cfg}
}

// Error is a failed call: which provider, the HTTP status if one came back,
// the API's message, and how many attempts were made. It matches (errors.Is)
// llm.ErrUnavailable or llm.ErrCapacity when that is why it failed, and the
// context's error when the caller gave up. Its text never holds a secret.
type Error struct {
	Kind, Name string
	Status     int    // 0: no reply
	Msg        string // what went wrong, in words
	Attempts   int    // > 1 when it was retried
	Class      error  // llm.ErrUnavailable, llm.ErrCapacity or nil
	Err        error  // the cause, if any
	secrets    []string
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %q: ", e.Kind, e.Name)
	if e.Status != 0 {
		b.WriteString(strconv.Itoa(e.Status))
		if t := statusText(e.Status); t != "" {
			b.WriteString(" " + t)
		}
		if e.Msg != "" {
			b.WriteString(": ")
		}
	}
	b.WriteString(e.Msg)
	if e.Err != nil {
		if e.Msg != "" {
			b.WriteString(": ")
		}
		b.WriteString(e.Err.Error())
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " (after %d attempts)", e.Attempts)
	}
	return redact.String(b.String(), e.secrets...)
}

func (e *Error) Unwrap() []error {
	var errs []error
	if e.Class != nil {
		errs = append(errs, e.Class)
	}
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	return errs
}

// Redact returns b with this provider's secrets removed (internal/redact).
// Whatever reads a server's text into a message calls it first, before any
// cut: a key the server echoes must go whole, not be cut into a prefix.
func (c *Caller) Redact(b []byte) []byte {
	return []byte(redact.String(string(b), c.cfg.Secrets...))
}

// Errorf makes an Error of this provider.
func (c *Caller) Errorf(class error, format string, args ...any) *Error {
	return &Error{Kind: c.cfg.Kind, Name: c.cfg.Name, Class: class, Msg: fmt.Sprintf(format, args...), secrets: c.cfg.Secrets}
}

// Wrap makes an Error of this provider around err.
func (c *Caller) Wrap(class error, msg string, err error) *Error {
	return &Error{Kind: c.cfg.Kind, Name: c.cfg.Name, Class: class, Msg: msg, Err: err, secrets: c.cfg.Secrets}
}

var (
	errNoReply = errors.New("no reply in time")
	errStalled = errors.New("stream stalled")
)

// Post sends body (JSON) to url and returns the reply's event stream once a
// 200 has come back. Failures before that are retried as Config says; the
// error of the last attempt is returned.
func (c *Caller) Post(ctx context.Context, url string, header http.Header, body []byte) (*Reply, error) {
	done := func(Outcome) {}
	if b := c.cfg.Breaker; b != nil {
		d, wait, ok := b.Allow()
		if !ok {
			msg := "circuit breaker open after repeated failures; a probe is already under way"
			if wait > 0 {
				msg = fmt.Sprintf("circuit breaker open after repeated failures; next try in %s", wait.Round(time.Millisecond))
			}
			return nil, c.Errorf(llm.ErrUnavailable, "%s", msg)
		}
		done = d
	}
	for attempt := 1; ; attempt++ {
		r, err, retry, delay := c.attempt(ctx, url, header, body)
		transient := retry // the server is down or overloaded: the breaker counts it
		if err == nil {
			r.done = done
			return r, nil
		}
		err.Attempts = attempt
		if ctx.Err() != nil {
			done(Neutral)
			return nil, err
		}
		if retry && attempt <= c.cfg.MaxRetries {
			if delay < 0 {
				delay = Backoff(attempt, c.cfg.RetryBase, c.cfg.RetryMax)
			} else if delay > c.cfg.MaxRetryAfter {
				err.Msg += fmt.Sprintf(" (the server asks to retry after %s)", delay.Round(time.Second))
				retry = false
			}
			if dl, ok := ctx.Deadline(); ok && time.Until(dl) < delay {
				retry = false
			}
			if retry {
				t := time.NewTimer(delay)
				select {
				case <-t.C:
					continue
				case <-ctx.Done():
					t.Stop()
					done(Neutral)
					return nil, c.Wrap(nil, "waiting to retry", ctx.Err())
				}
			}
		}
		if transient {
			done(Failure)
		} else {
			done(Neutral)
		}
		return nil, err
	}
}

// attempt makes one exchange. On failure it says whether the call may be
// retried, and after how long (negative: the backoff's choice).
func (c *Caller) attempt(ctx context.Context, url string, header http.Header, body []byte) (r *Reply, e *Error, retry bool, delay time.Duration) {
	xctx, cancel := context.WithCancelCause(ctx)
	req, err := http.NewRequestWithContext(xctx, "POST", url, bytes.NewReader(body))
	if err != nil {
		cancel(nil)
		return nil, c.Errorf(nil, "bad URL"), false, 0
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	// A completion has no effect the server keeps: sent again on a fresh
	// connection when a kept one turns out dead, it costs only tokens.
	httpclient.Replayable(req)
	first := time.AfterFunc(c.cfg.Timeout, func() { cancel(errNoReply) })
	start := time.Now()
	resp, err := httpclient.Do(c.cfg.Client, req)
	if !first.Stop() && err == nil {
		resp.Body.Close()
		err = errNoReply
	}
	if err != nil {
		cancel(nil)
		switch {
		case ctx.Err() != nil:
			return nil, c.Wrap(nil, "", ctx.Err()), false, 0
		case errors.Is(context.Cause(xctx), errNoReply) || errors.Is(err, errNoReply):
			return nil, c.Errorf(llm.ErrUnavailable, "no reply within %s", c.cfg.Timeout), true, -1
		}
		return nil, c.Wrap(llm.ErrUnavailable, "", err), true, -1
	}
	if resp.StatusCode == 200 {
		r := &Reply{c: c, ctx: ctx, xctx: xctx, cancel: cancel, resp: resp, Start: start}
		r.body = httpclient.IdleReader(resp.Body, c.cfg.IdleTimeout, func() { cancel(errStalled) })
		if ct := strings.ToLower(resp.Header.Get("Content-Type")); strings.HasPrefix(ct, "application/json") {
			// The server ignored "stream": true, or answered an error with 200.
			b, _ := io.ReadAll(io.LimitReader(r.body, maxErrorBody))
			r.Close()
			msg, _ := c.cfg.APIError(200, c.Redact(b))
			return nil, c.Errorf(nil, "the server answered without streaming: %s", msg), false, 0
		}
		r.events = sse.NewReader(r.body)
		return r, nil, false, 0
	}
	// An error reply: read its message, within the first-byte timeout.
	first.Reset(c.cfg.Timeout)
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	first.Stop()
	resp.Body.Close()
	cancel(nil)
	if ctx.Err() != nil {
		return nil, c.Wrap(nil, "", ctx.Err()), false, 0
	}
	msg, capacity := c.cfg.APIError(resp.StatusCode, c.Redact(b))
	e = &Error{Kind: c.cfg.Kind, Name: c.cfg.Name, Status: resp.StatusCode, Msg: msg, secrets: c.cfg.Secrets}
	delay = -1
	if c.cfg.Setup != nil {
		if fix := c.cfg.Setup(resp.StatusCode, msg); fix != "" {
			e.Msg += " (" + fix + ")"
			e.Class = llm.ErrUnavailable // another provider may serve
			return nil, e, false, 0
		}
	}
	switch {
	case capacity || resp.StatusCode == 413:
		e.Class = llm.ErrCapacity
	case resp.StatusCode == 429 || resp.StatusCode == 408 || resp.StatusCode >= 500:
		e.Class, retry = llm.ErrUnavailable, true
		if d, ok := RetryAfter(resp.Header.Get, time.Now()); ok {
			delay = d
		}
	case resp.StatusCode == 401 || resp.StatusCode == 403 || resp.StatusCode == 404:
		// The key, the model or the URL is wrong: nothing to retry, but
		// another provider may serve.
		e.Class = llm.ErrUnavailable
	}
	return nil, e, retry, delay
}

// Reply is a reply streaming in as server-sent events. Next reads them; the
// provider ends it with Finish (the reply was whole), Fail or Close.
type Reply struct {
	Start  time.Time // when the request was sent
	c      *Caller
	ctx    context.Context // the caller's
	xctx   context.Context // the exchange's: its cause says why it was cancelled
	cancel context.CancelCauseFunc
	resp   *http.Response
	body   io.Reader // resp.Body, failing a read that waits IdleTimeout
	events *sse.Reader
	done   func(Outcome)

	mu    sync.Mutex
	ended bool
}

// Next returns the next event. Errors are *Error: a stalled stream, a
// dropped connection, the end of the stream (io.ErrUnexpectedEOF inside an
// event; io.EOF, unwrapped, at a clean end, for the provider to judge), or
// the caller's context.
func (r *Reply) Next() (sse.Event, error) {
	ev, err := r.events.Next()
	if err == nil || err == io.EOF {
		return ev, err
	}
	switch {
	case r.ctx.Err() != nil:
		return ev, r.c.Wrap(nil, "", r.ctx.Err())
	case errors.Is(context.Cause(r.xctx), ErrClosed):
		return ev, r.c.Wrap(nil, "", ErrClosed)
	case errors.Is(context.Cause(r.xctx), errStalled):
		return ev, r.c.Errorf(llm.ErrUnavailable, "%s: nothing received for %s", errStalled, r.c.cfg.IdleTimeout)
	case errors.Is(err, sse.ErrTooLong):
		return ev, r.c.Wrap(llm.ErrUnavailable, "reading the reply", err)
	case err == io.ErrUnexpectedEOF:
		return ev, r.c.Errorf(llm.ErrUnavailable, "the reply stream was cut short")
	}
	return ev, r.c.Wrap(llm.ErrUnavailable, "", err)
}

// Header is a field of the reply's header.
func (r *Reply) Header(name string) string { return r.resp.Header.Get(name) }

// Finish ends a whole reply: the connection goes back to the pool if the
// body is at its end, and the breaker hears of a success.
func (r *Reply) Finish() {
	if r.take() {
		io.Copy(io.Discard, io.LimitReader(r.body, 4096)) // usually just the end of the body
		r.release(Success)
	}
}

// Fail ends a reply that went wrong with err: the breaker counts it as a
// failure of the server when err matches llm.ErrUnavailable and the caller
// did not give up. It returns err.
func (r *Reply) Fail(err error) error {
	if r.take() {
		if errors.Is(err, llm.ErrUnavailable) && r.ctx.Err() == nil && !errors.Is(err, ErrClosed) {
			r.release(Failure)
		} else {
			r.release(Neutral)
		}
	}
	return err
}

// Close ends the reply early (the caller stopped reading). It may be called
// at any time, from any goroutine, more than once: a Next blocked in another
// goroutine returns an error matching ErrClosed.
func (r *Reply) Close() {
	r.cancel(ErrClosed)
	if r.take() {
		r.release(Neutral)
	}
}

// ErrClosed is the error of reading a reply that was closed.
var ErrClosed = errors.New("reply stream closed")

// take reports whether the caller is the one to end the reply.
func (r *Reply) take() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended {
		return false
	}
	r.ended = true
	return true
}

func (r *Reply) release(o Outcome) {
	r.resp.Body.Close()
	r.cancel(nil)
	if r.done != nil {
		r.done(o)
	}
}

func firstLine(b []byte) string {
	b = bytes.TrimSpace(b)
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b = b[:i]
	}
	return redact.Clip(string(b), 300)
}

// APIMessage finds the message in a JSON error body of the shapes the model
// APIs use: {"error": {"message": ..., "type": ..., "code": ...}},
// {"error": "..."} or {"message": ...}; otherwise the body's first line. It
// returns the message and the error's type or code, if any.
func APIMessage(body []byte) (msg, code string) {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(body, &v) != nil {
		return firstLine(body), ""
	}
	var obj struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    any    `json:"code"`
	}
	var s string
	switch {
	case json.Unmarshal(v.Error, &obj) == nil && obj.Message != "":
		code = obj.Type
		if c, ok := obj.Code.(string); ok && c != "" {
			code = c
		}
		return clip(obj.Message), code
	case json.Unmarshal(v.Error, &s) == nil && s != "":
		return clip(s), ""
	case v.Message != "":
		return clip(v.Message), ""
	}
	return firstLine(body), ""
}

func clip(s string) string { return redact.Clip(s, 500) }

func statusText(code int) string {
	switch code {
	case 400:
		return "Bad Request"
	case 401:
		return "Unauthorized"
	case 403:
		return "Forbidden"
	case 404:
		return "Not Found"
	case 408:
		return "Request Timeout"
	case 413:
		return "Payload Too Large"
	case 422:
		return "Unprocessable Entity"
	case 429:
		return "Too Many Requests"
	case 500:
		return "Internal Server Error"
	case 502:
		return "Bad Gateway"
	case 503:
		return "Service Unavailable"
	case 504:
		return "Gateway Timeout"
	case 529:
		return "Overloaded"
	}
	return ""
}
