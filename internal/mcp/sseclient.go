package mcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/clawedge/clawedge/internal/httpclient"
)

// SSEClient is the older HTTP+SSE transport of a client (MCP 2024-11-05):
// a GET event stream first announces, in an "endpoint" event, the URL to
// POST messages to, and then carries the server's messages.
type SSEClient struct {
	inbox
	http     *http.Client
	endpoint string
}

// DialSSE opens the event stream at u and waits (within ctx) for the endpoint.
func DialSSE(ctx context.Context, u string, hc *http.Client) (*SSEClient, error) {
	t := &SSEClient{inbox: newInbox(), http: hc}
	base, err := url.Parse(u)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(t.ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	stop := context.AfterFunc(ctx, t.cancel) // until the endpoint is known
	resp, err := httpclient.Do(hc, req)
	if err != nil {
		stop()
		t.cancel()
		return nil, fmt.Errorf("GET: %w", err)
	}
	fail := func(err error) (*SSEClient, error) {
		stop()
		resp.Body.Close()
		t.cancel()
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return fail(statusError("GET", resp))
	}
	er := newEventReader(resp.Body)
	for t.endpoint == "" {
		ev, err := er.Next()
		if err != nil {
			if ctx.Err() != nil {
				err = ctx.Err()
			}
			return fail(fmt.Errorf("waiting for the endpoint event: %w", err))
		}
		if ev.Type != "endpoint" {
			continue
		}
		ep, err := base.Parse(string(bytes.TrimSpace(ev.Data)))
		if err != nil {
			return fail(fmt.Errorf("the endpoint event: %w", err))
		}
		// Messages go where the stream came from, not to a host it names.
		if ep.Scheme != base.Scheme || ep.Host != base.Host {
			return fail(fmt.Errorf("the endpoint event names another server (%s)", ep.Host))
		}
		t.endpoint = ep.String()
	}
	if !stop() {
		return fail(ctx.Err())
	}
	go func() {
		defer resp.Body.Close()
		for {
			ev, err := er.Next()
			if err != nil {
				if err == io.EOF || err == io.ErrUnexpectedEOF {
					err = errors.New("the event stream ended")
				}
				t.fail(err)
				return
			}
			if !isMessage(ev) {
				continue
			}
			m, err := Decode(ev.Data)
			if err != nil {
				t.fail(fmt.Errorf("event stream: %w", err))
				return
			}
			t.push(m)
		}
	}()
	return t, nil
}

func (t *SSEClient) Write(ctx context.Context, m *Message) error {
	resp, done, err := post(ctx, t.ctx, t.http, t.endpoint, m, func(http.Header) {})
	if err != nil {
		return err
	}
	defer done()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // the answer comes on the event stream
	return nil
}

func (t *SSEClient) Close() error {
	t.fail(errors.New("closed"))
	return nil
}
