package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/clawedge/clawedge/internal/httpclient"
)

// post sends m as JSON to url, the way both HTTP client transports send a
// message. The request lives until done is called, the caller's ctx ends or
// the transport's life ends (a reply streamed as events outlives the call
// that sent it). header adds the transport's fields. A status other than 2xx
// is an *HTTPError.
func post(ctx, life context.Context, hc *http.Client, url string, m *Message, header func(http.Header)) (resp *http.Response, done func(), err error) {
	body, err := json.Marshal(m)
	if err != nil {
		return nil, nil, err
	}
	rctx, cancel := context.WithCancel(life)
	stop := context.AfterFunc(ctx, cancel)
	done = func() { stop(); cancel() }
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		done()
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	header(req.Header)
	resp, err = httpclient.Do(hc, req)
	if err != nil {
		done()
		return nil, nil, fmt.Errorf("POST: %w", err)
	}
	done = func() { resp.Body.Close(); stop(); cancel() }
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer done()
		return resp, nil, statusError("POST", resp)
	}
	return resp, done, nil
}

// HTTPError is an unexpected HTTP status, with the start of the body (a
// server's explanation) on one line.
type HTTPError struct {
	Method string
	Status int
	Msg    string
}

func (e *HTTPError) Error() string {
	if e.Msg == "" {
		return fmt.Sprintf("%s: HTTP %d %s", e.Method, e.Status, http.StatusText(e.Status))
	}
	return fmt.Sprintf("%s: HTTP %d %s: %s", e.Method, e.Status, http.StatusText(e.Status), e.Msg)
}

func statusError(method string, resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
	return &HTTPError{Method: method, Status: resp.StatusCode, Msg: strings.Join(strings.Fields(string(b)), " ")}
}
