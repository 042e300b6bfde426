package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
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

func (t *StreamableClient) newRequest(ctx context.Context, method string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, t.url, nil)
	if err != nil {
		return nil, err
	}
	t.header(req.Header)
	return req, nil
}

// header adds the session and the protocol version, once known.
func (t *StreamableClient) header(h http.Header) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.session != "" {
		h.Set("Mcp-Session-Id", t.session)
	}
	if t.version != "" {
		h.Set("MCP-Protocol-Version", t.version)
	}
}

func (t *StreamableClient) Write(ctx context.Context, m *Message) error {
	resp, done, err := post(ctx, t.ctx, t.http, t.url, m, func(h http.Header) {
		h.Set("Accept", "application/json, text/event-stream")
		t.header(h)
	})
	var he *HTTPError
	if errors.As(err, &he) && he.Status == http.StatusNotFound && resp.Request.Header.Get("Mcp-Session-Id") != "" {
		// The server forgot the session (it restarted): this connection is
		// over, and the client's owner connects anew.
		t.fail(fmt.Errorf("the server ended the session: %w", err))
	}
	if err != nil {
		return err
	}
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
		t.mu.Lock()
		t.session = sid
		t.mu.Unlock()
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
		req, err := t.newRequest(t.ctx, http.MethodGet)
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
		if req, err := t.newRequest(ctx, http.MethodDelete); err == nil {
			if resp, err := httpclient.Do(t.http, req); err == nil {
				resp.Body.Close()
			}
		}
		cancel()
	}
	t.fail(errors.New("closed"))
	return nil
}
