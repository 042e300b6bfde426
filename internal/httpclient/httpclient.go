// Package httpclient makes clawedge's HTTP clients (Telegram, the remote model
// providers, model and update downloads), all on net/http and all built here,
// so that timeouts, proxies, TLS and the connection pool are set in one place:
//
//   - proxies from HTTPS_PROXY, HTTP_PROXY and NO_PROXY (or their lower-case
//     forms), as net/http and curl read them; loopback is never proxied;
//   - connecting (TCP, a proxy's CONNECT, the TLS handshake) is bounded by
//     DialTimeout; everything after is the caller's ctx (a streamed reply has
//     no overall bound: see IdleReader for a stall);
//   - a small pool: the daemon holds a Telegram long poll and now and then a
//     model call, so a few idle connections, dropped after IdleConnTimeout,
//     keep its memory and goroutines low (each open connection costs two);
//   - redirects only when asked, for GET and HEAD, never from https to http;
//   - errors (see Do) name the server's host:port and never its URL: a bot
//     token is in Telegram's paths, a signature in a download's query.
package httpclient

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

const (
	// DialTimeout bounds TCP connect, a proxy's CONNECT and the TLS handshake.
	DialTimeout = 15 * time.Second
	// IdleConnTimeout drops a connection unused for longer, before a NAT or
	// the server forgets it silently.
	IdleConnTimeout = 60 * time.Second
	// MaxIdleConns bounds the connections kept between requests, all servers
	// together; MaxIdleConnsPerHost each server's (the Telegram poller's and
	// sender's).
	MaxIdleConns        = 4
	MaxIdleConnsPerHost = 2
	// MaxHeaderBytes bounds a reply's status line and header.
	MaxHeaderBytes = 64 << 10
)

// Options make a client. The zero value is what the daemon uses.
type Options struct {
	// RootCAs verifies servers' certificates; nil means the system's roots.
	RootCAs *x509.CertPool
	// Getenv reads the proxy settings, once, when the client is made; nil
	// means os.Getenv.
	Getenv func(string) string
	// Redirects is how many redirects to follow, for GET and HEAD only; 0
	// returns them to the caller. net/http keeps the request's header fields,
	// except credentials to another host.
	Redirects int
}

var (
	sharedOnce sync.Once
	shared     *http.Transport
)

// New returns a client. Clients made without RootCAs or Getenv share one
// Transport: one pool of connections for the whole process.
func New(o Options) *http.Client {
	var t *http.Transport
	if o.RootCAs == nil && o.Getenv == nil {
		sharedOnce.Do(func() { shared = NewTransport(nil, os.Getenv) })
		t = shared
	} else {
		t = NewTransport(o.RootCAs, o.Getenv)
	}
	return &http.Client{Transport: t, CheckRedirect: checkRedirect(o.Redirects)}
}

// NewTransport makes a Transport of its own (a test's, with its CA and
// environment); getenv nil means os.Getenv.
func NewTransport(rootCAs *x509.CertPool, getenv func(string) string) *http.Transport {
	if getenv == nil {
		getenv = os.Getenv
	}
	d := &net.Dialer{Timeout: DialTimeout, KeepAlive: 30 * time.Second}
	return &http.Transport{
		Proxy:       proxyFunc(getenv),
		DialContext: d.DialContext,
		// Resumption makes a reconnect's handshake cheap on a slow CPU.
		TLSClientConfig:        &tls.Config{RootCAs: rootCAs, MinVersion: tls.VersionTLS12, ClientSessionCache: tls.NewLRUClientSessionCache(8)},
		TLSHandshakeTimeout:    DialTimeout,
		MaxIdleConns:           MaxIdleConns,
		MaxIdleConnsPerHost:    MaxIdleConnsPerHost,
		IdleConnTimeout:        IdleConnTimeout,
		MaxResponseHeaderBytes: MaxHeaderBytes,
		ExpectContinueTimeout:  time.Second,
	}
}

// checkRedirect follows up to n redirects of a GET or HEAD, never from https
// to http. Its errors never quote a URL.
func checkRedirect(n int) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		first, last := via[0], via[len(via)-1]
		switch {
		case n <= 0 || (first.Method != "GET" && first.Method != "HEAD"):
			return http.ErrUseLastResponse
		case len(via) > n:
			return errors.New("stopped after " + strconv.Itoa(n) + " redirects")
		case last.URL.Scheme == "https" && req.URL.Scheme != "https":
			return errors.New("refused a redirect from https to http")
		}
		return nil
	}
}

// Error is a failed exchange: the server (and the proxy, if any), and the
// cause, without the URL.
type Error struct {
	Where string // host:port, and " via proxy host:port"
	Err   error
}

func (e *Error) Error() string { return e.Where + ": " + describe(e.Err) }
func (e *Error) Unwrap() error { return e.Err }

// Do sends req with c. Its error, if any, is an *Error: net/http's errors
// quote the whole URL, which may hold a secret.
func Do(c *http.Client, req *http.Request) (*http.Response, error) {
	resp, err := c.Do(req)
	if err == nil {
		return resp, nil
	}
	at := req
	if ue, ok := err.(*url.Error); ok {
		err = ue.Err
		// A redirect may have led elsewhere: the URL that failed is ue's.
		if u, perr := url.Parse(ue.URL); perr == nil && u.Host != "" {
			at = &http.Request{URL: u}
		}
	}
	where := hostPort(at.URL)
	if t, ok := c.Transport.(*http.Transport); ok && t.Proxy != nil {
		if p, perr := t.Proxy(at); perr == nil && p != nil {
			where += " via proxy " + hostPort(p)
		}
	}
	return nil, &Error{Where: where, Err: err}
}

func hostPort(u *url.URL) string { return net.JoinHostPort(u.Hostname(), portOf(u)) }

// portOf is u's port, or its scheme's.
func portOf(u *url.URL) string {
	switch {
	case u.Port() != "":
		return u.Port()
	case u.Scheme == "https":
		return "443"
	case u.Scheme == "socks5" || u.Scheme == "socks5h":
		return "1080"
	}
	return "80"
}

// describe drops what net's errors repeat (the operation, both addresses) and
// says timeouts in words.
func describe(err error) string {
	if oe, ok := err.(*net.OpError); ok && oe.Err != nil {
		err = oe.Err
	}
	if se, ok := err.(*os.SyscallError); ok && se.Err != nil {
		err = se.Err
	}
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, context.DeadlineExceeded):
		return "timed out"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case err == io.EOF:
		return "the connection closed before a reply"
	}
	s, cut := strings.CutPrefix(err.Error(), "net/http: HTTP/1.x transport connection broken: ")
	if cut {
		s = "bad reply: " + s
	}
	return s
}

// Replayable marks req as safe to send twice: net/http then sends it again on
// a new connection when a kept one turns out dead before any reply came back.
// Nothing is added on the wire (an empty X-Idempotency-Key is not sent).
func Replayable(req *http.Request) {
	req.Header["X-Idempotency-Key"] = nil
}
