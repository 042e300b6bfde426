package telegram

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"
)

// The Bot API client's own HTTP/1.1 transport. Why not net/http: the core binary must
// fit an 8 MB budget on a Raspberry-Pi-class board, and net/http (with the HTTP/2
// implementation it always links) costs about 1.25 MB of it, while the Bot API needs
// only JSON POSTs to one host. This file is the connection pool and the exchange of
// one request for one response; http1_response.go parses responses, http1_dial.go
// connects (TCP, proxy tunnel, TLS), http1_proxy.go reads the proxy settings.
//
// Nothing here ever formats a request path: the token is in it. Errors name the
// server's host:port and what failed.

const (
	// maxIdleConns bounds the connections kept open between calls: the poller's and the
	// sender's are all the channel needs at once.
	maxIdleConns = 2
	// maxIdleTime drops a connection unused for longer, before a NAT or the server
	// forgets it silently (the server's own close is noticed by the idle watcher).
	maxIdleTime = 60 * time.Second
	// defaultDialTimeout bounds TCP connect, proxy CONNECT and the TLS handshake.
	defaultDialTimeout = 15 * time.Second
)

// h1Transport sends requests to the one server of an api_url. Its methods are safe
// for concurrent use: each call has a connection to itself, taken from the idle ones
// or dialled, and given back when the response left it reusable.
type h1Transport struct {
	secure      bool
	addr        string // host:port of the server
	host        string // the Host field
	prefix      string // api_url's path, escaped, without a trailing "/"
	where       string // how errors name the server: addr, and the proxy if any
	proxy       *h1Proxy
	tlsConf     *tls.Config
	dialer      net.Dialer
	dialTimeout time.Duration
	limit       int64 // response body cap

	mu   sync.Mutex
	idle []*h1Conn // most recently used last
}

// h1Conn is one connection.
type h1Conn struct {
	raw       net.Conn // the TCP connection: closing it wakes any read or write above it
	rw        net.Conn // raw, or the TLS client over it
	br        *bufio.Reader
	idleSince time.Time
	watch     chan error // the idle watcher's verdict; nil while in use
}

// newH1Transport checks apiURL and reads the proxy settings. Its errors quote apiURL
// (the caller scrubs them: the token may have been expanded into it).
func newH1Transport(apiURL string, o ClientOptions, limit int64) (*h1Transport, error) {
	u, err := url.Parse(apiURL)
	if err != nil {
		return nil, errors.New("bad api_url: " + err.Error())
	}
	port := u.Port()
	switch u.Scheme {
	case "https":
		port = or(port, "443")
	case "http":
		port = or(port, "80")
	default:
		return nil, errors.New("bad api_url: the scheme must be https:// or http://")
	}
	switch {
	case u.Hostname() == "":
		return nil, errors.New("bad api_url: no host")
	case u.User != nil:
		return nil, errors.New("bad api_url: it must not hold a user name or password")
	case u.RawQuery != "" || u.Fragment != "" || u.Opaque != "":
		return nil, errors.New("bad api_url: it must not have a query or fragment")
	}
	t := &h1Transport{
		secure: u.Scheme == "https",
		addr:   net.JoinHostPort(u.Hostname(), port),
		host:   u.Host,
		prefix: strings.TrimRight(u.EscapedPath(), "/"),
		limit:  limit,
		dialer: net.Dialer{}, // Happy Eyeballs for dual-stack hosts, TCP keep-alives
		tlsConf: &tls.Config{
			ServerName: u.Hostname(), // SNI, and the name verified (an IP literal: its SAN)
			MinVersion: tls.VersionTLS12,
			RootCAs:    o.RootCAs, // nil: the system's
			NextProtos: []string{"http/1.1"},
			// Resumption makes a reconnect's handshake cheap on a slow CPU.
			ClientSessionCache: tls.NewLRUClientSessionCache(4),
		},
		dialTimeout: o.DialTimeout,
	}
	if t.dialTimeout <= 0 {
		t.dialTimeout = defaultDialTimeout
	}
	t.where = t.addr
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	if t.proxy, err = proxyFromEnv(getenv, u.Scheme, u.Hostname(), port); err != nil {
		return nil, err
	}
	if t.proxy != nil {
		t.where += " via proxy " + t.proxy.addr
	}
	return t, nil
}

// h1Error is a failed exchange: where (host:port), the step, and the cause.
type h1Error struct {
	where, op string
	err       error
}

func (e *h1Error) Error() string {
	s := e.where + ": "
	if e.op != "" {
		s += e.op + ": "
	}
	return s + describe(e.err)
}

func (e *h1Error) Unwrap() error { return e.err }

func (t *h1Transport) fail(op string, err error) error {
	return &h1Error{where: t.where, op: op, err: err}
}

// describe drops what net's errors repeat (the operation, both addresses) and says
// timeouts in words.
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
	}
	return err.Error()
}

// h1Stage is how far an exchange got before it failed; it decides whether a retry
// can be harmful.
type h1Stage int

const (
	stageUnsent   h1Stage = iota // not one byte of the request was written
	stagePartSent                // the write failed part way
	stageSent                    // written; no byte of a reply came back
	stageReading                 // the reply had started
)

func (s h1Stage) String() string {
	switch s {
	case stageUnsent, stagePartSent:
		return "sending the request"
	case stageSent:
		return "awaiting the reply"
	}
	return "reading the reply"
}

// request builds the bytes of a POST of a JSON body to path (under api_url's).
func (t *h1Transport) request(path string, body []byte) ([]byte, error) {
	target := t.prefix + path
	for i := 0; i < len(target); i++ {
		if target[i] <= ' ' || target[i] >= 0x7f {
			return nil, errors.New("api_url or token holds a space or control character")
		}
	}
	if t.proxy != nil && !t.secure {
		target = "http://" + t.host + target // absolute form, for a plain proxy
	}
	b := make([]byte, 0, len(target)+len(body)+200)
	b = append(b, "POST "...)
	b = append(b, target...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, t.host...)
	b = append(b, "\r\nUser-Agent: clawedge\r\nAccept: application/json\r\nContent-Type: application/json\r\nContent-Length: "...)
	b = appendInt(b, len(body))
	if t.proxy != nil && !t.secure && t.proxy.auth != "" {
		b = append(b, "\r\nProxy-Authorization: "...)
		b = append(b, t.proxy.auth...)
	}
	b = append(b, "\r\n\r\n"...)
	return append(b, body...), nil
}

func appendInt(b []byte, n int) []byte {
	var d [20]byte
	i := len(d)
	for {
		i--
		d[i] = byte('0' + n%10)
		if n /= 10; n == 0 {
			break
		}
	}
	return append(b, d[i:]...)
}

// post sends one request and returns its response. ctx bounds the whole exchange,
// dialling included. retrySafe says the method may reach the server twice without
// harm (getMe, getUpdates).
//
// A server may close an idle connection just as a request is sent on it. Then the
// request is sent once more on a new connection, if the server cannot have acted on
// it (nothing was written), or if it is retry-safe and no byte of a reply came back.
// Anything else is returned: a sendMessage is never repeated here (the channel
// decides, see Channel.sendOne).
func (t *h1Transport) post(ctx context.Context, path string, body []byte, retrySafe bool) (*h1Response, error) {
	req, err := t.request(path, body)
	if err != nil {
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		c, reused, err := t.get(ctx)
		if err != nil {
			return nil, err
		}
		r, stage, err := c.roundTrip(ctx, req, t.limit)
		if err == nil {
			if r.keep {
				t.put(c)
			} else {
				c.close()
			}
			return r, nil
		}
		c.close()
		if ctx.Err() != nil {
			return nil, t.fail(stage.String(), ctx.Err())
		}
		if reused && attempt == 1 && (stage == stageUnsent || (retrySafe && stage == stageSent)) {
			continue
		}
		return nil, t.fail(stage.String(), err)
	}
}

// roundTrip writes req and reads the response. The connection's deadline is ctx's;
// ctx's end closes the connection, which wakes a read blocked in a long poll at once.
func (c *h1Conn) roundTrip(ctx context.Context, req []byte, limit int64) (r *h1Response, stage h1Stage, err error) {
	dl, _ := ctx.Deadline() // zero: none
	c.raw.SetDeadline(dl)
	stop := context.AfterFunc(ctx, func() { c.raw.Close() })
	defer func() {
		if !stop() && r != nil {
			r.keep = false // closed under us, if only just
		}
	}()
	if n, err := c.rw.Write(req); err != nil {
		if n == 0 {
			return nil, stageUnsent, err
		}
		return nil, stagePartSent, err
	}
	if _, err := c.br.Peek(1); err != nil {
		return nil, stageSent, err
	}
	r, err = readResponse(c.br, limit)
	if err != nil {
		return nil, stageReading, err
	}
	return r, stageReading, nil
}

// get returns an idle connection that is still good, or a new one; reused says which.
func (t *h1Transport) get(ctx context.Context) (c *h1Conn, reused bool, err error) {
	for {
		t.mu.Lock()
		n := len(t.idle)
		if n == 0 {
			t.mu.Unlock()
			break
		}
		c = t.idle[n-1]
		t.idle = t.idle[:n-1]
		t.mu.Unlock()
		if c.reclaim() {
			return c, true, nil
		}
	}
	c, err = t.dial(ctx)
	return c, false, err
}

// put keeps c for the next call, or closes it if enough are kept. While idle, a
// watcher reads from it: a server closing it (or sending anything unasked) is noticed
// there, rather than by the next request.
func (t *h1Transport) put(c *h1Conn) {
	c.raw.SetDeadline(time.Time{})
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.idle) >= maxIdleConns {
		c.close()
		return
	}
	c.idleSince = time.Now()
	c.watch = make(chan error, 1)
	go t.watch(c, c.watch)
	t.idle = append(t.idle, c)
}

// watch reads from an idle connection until reclaim wakes it with a deadline. Anything
// else (the server's close, or bytes nobody asked for) makes the connection useless:
// it is closed and dropped from the pool at once.
func (t *h1Transport) watch(c *h1Conn, verdict chan<- error) {
	_, err := c.br.Peek(1)
	if err == nil {
		err = errors.New("data arrived on an idle connection")
	}
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		c.close()
		t.mu.Lock()
		for i, o := range t.idle {
			if o == c {
				t.idle = append(t.idle[:i], t.idle[i+1:]...)
				break
			}
		}
		t.mu.Unlock()
	}
	verdict <- err
}

// reclaim stops the idle watcher and reports whether c is still usable.
func (c *h1Conn) reclaim() bool {
	c.raw.SetReadDeadline(time.Unix(1, 0)) // wakes the watcher's read
	err := <-c.watch
	c.watch = nil
	if !errors.Is(err, os.ErrDeadlineExceeded) || time.Since(c.idleSince) > maxIdleTime {
		c.close()
		return false
	}
	c.raw.SetReadDeadline(time.Time{})
	return true
}

// closeIdle closes every idle connection.
func (t *h1Transport) closeIdle() {
	t.mu.Lock()
	idle := t.idle
	t.idle = nil
	t.mu.Unlock()
	for _, c := range idle {
		c.close()
		<-c.watch
	}
}

// close closes the TCP connection; a TLS close_notify is not worth a write that could
// block on a dead peer.
func (c *h1Conn) close() { c.raw.Close() }
