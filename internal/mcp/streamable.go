package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/clawedge/clawedge/internal/httpclient"
)

// StreamableClient is the streamable HTTP transport of a client (MCP
// 2025-03-26 and later): each message is POSTed to the one endpoint; the
// reply to a request is JSON or an event stream; the Mcp-Session-Id the
// server gives at initialize goes with every later request; a GET event
// stream, when the server offers one, carries its notifications; Close
// DELETEs the session.
type StreamableClient struct {
	inbox
	url  string
	http *http.Client

	mu        sync.Mutex
	session   string
	version   string
	listening bool
}

// NewStreamableClient talks to the endpoint url through hc.
func NewStreamableClient(url string, hc *http.Client) *StreamableClient {
	return &StreamableClient{inbox: newInbox(), url: url, http: hc}
}

func (t *StreamableClient) newRequest(ctx context.Context, method string, body []byte) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, t.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	if t.session != "" {
		req.Header.Set("Mcp-Session-Id", t.session)
	}
	if t.version != "" {
		req.Header.Set("MCP-Protocol-Version", t.version)
	}
	t.mu.Unlock()
	return req, nil
}

func (t *StreamableClient) Write(ctx context.Context, m *Message) error {
	body, err := json.Marshal(m)
	if err != nil {
		return err
	}
	// The request lives until its reply is read, or the caller gives up, or
	// the transport closes.
	rctx, cancel := context.WithCancel(t.ctx)
	stop := context.AfterFunc(ctx, cancel)
	req, err := t.newRequest(rctx, http.MethodPost, body)
	if err != nil {
		cancel()
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := httpclient.Do(t.http, req)
	if err != nil {
		cancel()
		return fmt.Errorf("POST: %w", err)
	}
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
		t.mu.Lock()
		t.session = sid
		t.mu.Unlock()
	}
	done := func() { resp.Body.Close(); stop(); cancel() }
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer done()
		return statusError("POST", resp)
	}
	if !m.IsRequest() || resp.StatusCode == http.StatusAccepted {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		done()
		if m.Method == methodInitialized {
			go t.listen()
		}
		return nil
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		defer done()
		b, err := io.ReadAll(io.LimitReader(resp.Body, MaxMessage+1))
		if err != nil {
			return fmt.Errorf("reading the reply: %w", err)
		}
		if len(b) > MaxMessage {
			return fmt.Errorf("the reply is longer than %d bytes", MaxMessage)
		}
		r, err := Decode(b)
		if err != nil {
			return fmt.Errorf("the reply: %w", err)
		}
		t.push(r)
		return nil
	case "text/event-stream":
		go func() {
			defer done()
			if err := t.readEvents(resp.Body, m.ID); err != nil {
				// The caller learns it from an error answer rather than by waiting.
				t.push(&Message{JSONRPC: "2.0", ID: m.ID, Error: &Error{Code: CodeInternalError, Message: err.Error()}})
			}
		}()
		return nil
	default:
		done()
		return fmt.Errorf("the reply has content type %q, neither JSON nor an event stream", ct)
	}
}

// readEvents passes on the messages of an event stream; with want set, it
// is the stream of that request, and an error says when it ended unanswered.
func (t *StreamableClient) readEvents(body io.Reader, want json.RawMessage) error {
	er := newEventReader(body)
	for {
		ev, err := er.Next()
		if err != nil {
			if t.ctx.Err() != nil {
				return nil
			}
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				err = errors.New("the event stream ended")
			}
			if want != nil {
				return fmt.Errorf("%v before the answer", err)
			}
			return err
		}
		if !isMessage(ev) {
			continue
		}
		m, err := Decode(ev.Data)
		if err != nil {
			return fmt.Errorf("event stream: %w", err)
		}
		t.push(m)
		if want != nil && m.IsResponse() && idKey(m.ID) == idKey(want) {
			return nil
		}
	}
}

// listen holds the GET event stream for the server's own messages; a server
// without one answers 405, and then there is none. A stream that breaks is
// opened again after a second.
func (t *StreamableClient) listen() {
	t.mu.Lock()
	if t.listening {
		t.mu.Unlock()
		return
	}
	t.listening = true
	t.mu.Unlock()
	for t.ctx.Err() == nil {
		req, err := t.newRequest(t.ctx, http.MethodGet, nil)
		if err != nil {
			return
		}
		req.Header.Set("Accept", "text/event-stream")
		resp, err := httpclient.Do(t.http, req)
		if err == nil {
			if resp.StatusCode != http.StatusOK {
				resp.Body.Close()
				return
			}
			t.readEvents(resp.Body, nil)
			resp.Body.Close()
		}
		select {
		case <-t.ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// SetProtocolVersion is the version negotiated at initialize, sent with
// every later request.
func (t *StreamableClient) SetProtocolVersion(v string) {
	t.mu.Lock()
	t.version = v
	t.mu.Unlock()
}

func (t *StreamableClient) Close() error {
	t.mu.Lock()
	sid := t.session
	t.mu.Unlock()
	if sid != "" && t.ctx.Err() == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		if req, err := t.newRequest(ctx, http.MethodDelete, nil); err == nil {
			if resp, err := httpclient.Do(t.http, req); err == nil {
				resp.Body.Close()
			}
		}
		cancel()
	}
	t.fail(errors.New("closed"))
	return nil
}

// statusError says what an unexpected HTTP status was, with the start of
// the body (a server's explanation), on one line.
func statusError(method string, resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
	msg := strings.Join(strings.Fields(string(b)), " ")
	if msg == "" {
		return fmt.Errorf("%s: HTTP %s", method, resp.Status)
	}
	return fmt.Errorf("%s: HTTP %s: %s", method, resp.Status, msg)
}
