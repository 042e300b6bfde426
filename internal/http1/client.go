// Package http1 is clawedge's own HTTP/1.1 client.
//
// Why not net/http: the core binary must fit an 8 MB budget on a Raspberry-Pi-class
// board, and net/http (with the HTTP/2 implementation it always links) costs about
// 1 MB of it. clawedge needs far less than net/http offers, and this package does
// exactly that:
//
//   - HTTP/1.1 over TCP, or over TLS 1.2 or later (the system's roots, or the
//     Client's; ALPN asks for http/1.1 only);
//   - a small keep-alive pool, with an idle watcher that notices a server's close;
//   - http:// proxies from HTTPS_PROXY, HTTP_PROXY and NO_PROXY (or their lower-case
//     forms): CONNECT tunnels for https, absolute-form requests for http;
//   - ctx bounds every exchange: its deadline is the connection's, its cancellation
//     closes the connection, which wakes a blocked read at once; an optional idle
//     timeout fails an exchange that receives nothing for a while;
//   - bounded status line, header fields and chunk lines; bodies framed by chunked
//     coding, Content-Length or the connection's end, streamed to the caller;
//   - retries only where harmless: see Client.Do; redirects only when asked, for GET
//     and HEAD.
//
// No compression, no cookies, no HTTP/2, no request body streaming. Errors name the
// server's host:port and what failed; they never quote a request's path or query (a
// secret such as a bot token may be in it), nor a proxy's credentials.
package http1

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

const (
	// DefaultMaxIdleConns bounds the connections kept open between requests when
	// Client.MaxIdleConns is 0.
	DefaultMaxIdleConns = 2
	// DefaultDialTimeout bounds TCP connect, a proxy's CONNECT and the TLS handshake
	// when Client.DialTimeout is 0.
	DefaultDialTimeout = 15 * time.Second
	// maxIdleTime drops a connection unused for longer, before a NAT or the server
	// forgets it silently (the server's own close is noticed by the idle watcher).
	maxIdleTime = 60 * time.Second
	// maxRedirectBody is how much of a redirect's body is read to keep its connection.
	maxRedirectBody = 64 << 10
)

// Client sends requests. Its methods are safe for concurrent use: each exchange has a
// connection to itself, taken from the idle ones or dialled, and given back when the
// response body has been read to its end. The zero value is ready to use; set the
// fields before the first request.
type Client struct {
	// RootCAs verifies servers' certificates; nil means the system's roots.
	RootCAs *x509.CertPool
	// DialTimeout bounds connecting: TCP, a proxy's CONNECT and the TLS handshake;
	// 0 means DefaultDialTimeout (never more than what is left of the ctx).
	DialTimeout time.Duration
	// MaxIdleConns bounds the connections kept for later requests, all servers
	// together; 0 means DefaultMaxIdleConns, negative keeps none.
	MaxIdleConns int
	// Getenv reads HTTPS_PROXY, HTTP_PROXY and NO_PROXY (or their lower-case forms),
	// once, at the first request; nil means os.Getenv.
	Getenv func(string) string

	once     sync.Once
	env      map[string]string
	sessions tls.ClientSessionCache
	dialer   net.Dialer

	mu   sync.Mutex
	idle []*conn // most recently used last
}

// Field is one request header field.
type Field struct{ Name, Value string }

// Request is one request.
type Request struct {
	Method string // "" means GET
	URL    string // http:// or https://
	// Header fields, sent in order after Host. Host, Content-Length,
	// Transfer-Encoding and Connection are the client's own and refused here.
	Header []Field
	Body   []byte
	// Idempotent says the request does no harm if it reaches the server twice. A
	// server may close an idle connection just as a request is sent on it; then the
	// request is sent once more, on a new connection, if nothing of it was written,
	// or if it is Idempotent and not one byte of a reply came back. Anything else is
	// the caller's to decide.
	Idempotent bool
	// IdleTimeout, if positive, fails the exchange when nothing arrives for this long,
	// from the request being sent to the body's end; the error matches
	// ErrIdleTimeout. It does not bound dialling (see Client.DialTimeout).
	IdleTimeout time.Duration
	// Redirects is how many redirects (301, 302, 303, 307, 308 with a Location) to
	// follow, for GET and HEAD only; 0 returns them to the caller. The same header
	// fields are sent to the new URL, except Authorization and Cookie when the host
	// changes. An https URL never redirects to http.
	Redirects int
}

// Response is a response whose body is read from the connection as the caller reads
// Body. Reading Body to io.EOF gives the connection back to the pool (if the server
// lets it be reused); Close before that closes the connection. Body must be closed.
type Response struct {
	Status int
	Reason string // as the server sent it, shortened; may be empty
	Header Header
	// ContentLength is the body's length from Content-Length; -1 when unknown.
	ContentLength int64
	// URL is the URL that answered: Request.URL, or where redirects led.
	URL  string
	Body io.ReadCloser
}

// StatusLine is the status code and reason: "404 Not Found".
func (r *Response) StatusLine() string {
	s := strconv.Itoa(r.Status)
	if r.Reason != "" {
		s += " " + r.Reason
	}
	return s
}

// Error is a failed exchange: where (host:port, and the proxy if any), the step, and
// the cause.
type Error struct {
	Where string
	Op    string // "sending the request", "awaiting the reply", "reading the reply"…
	Err   error
}

func (e *Error) Error() string {
	s := e.Where + ": "
	if e.Op != "" {
		s += e.Op + ": "
	}
	return s + describe(e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// ErrIdleTimeout matches (errors.Is) the error of an exchange that received nothing
// for Request.IdleTimeout.
var ErrIdleTimeout = errors.New("idle timeout")

type idleError struct{ d time.Duration }

func (e idleError) Error() string { return "nothing received for " + e.d.String() }
func (e idleError) Is(target error) bool {
	return target == ErrIdleTimeout || target == os.ErrDeadlineExceeded
}
func (e idleError) Timeout() bool { return true }

// describe drops what net's errors repeat (the operation, both addresses) and says
// timeouts in words.
func describe(err error) string {
	if oe, ok := err.(*net.OpError); ok && oe.Err != nil {
		err = oe.Err
	}
	if se, ok := err.(*os.SyscallError); ok && se.Err != nil {
		err = se.Err
	}
	if _, ok := err.(idleError); ok {
		return err.Error()
	}
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, context.DeadlineExceeded):
		return "timed out"
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	return err.Error()
}

// stage is how far an exchange got before it failed; it decides whether a retry can
// be harmful.
type stage int

const (
	stageUnsent   stage = iota // not one byte of the request was written
	stagePartSent              // the write failed part way
	stageSent                  // written; no byte of a reply came back
	stageReading               // the reply had started
)

func (s stage) String() string {
	switch s {
	case stageUnsent, stagePartSent:
		return "sending the request"
	case stageSent:
		return "awaiting the reply"
	}
	return "reading the reply"
}

// target is where a URL points.
type target struct {
	secure   bool
	hostname string // without brackets or port
	port     string
	addr     string // hostname:port, to dial
	host     string // the Host field
	path     string // the origin-form request target
	key      string // the pool's: scheme://addr
}

// parseTarget checks rawURL. Its errors never quote it.
func parseTarget(rawURL string) (*target, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		if ue, ok := err.(*url.Error); ok {
			err = ue.Err
		}
		return nil, errors.New("bad URL: " + err.Error())
	}
	t := &target{hostname: u.Hostname(), port: u.Port(), host: u.Host}
	switch u.Scheme {
	case "https":
		t.secure, t.port = true, or(t.port, "443")
	case "http":
		t.port = or(t.port, "80")
	default:
		return nil, errors.New("bad URL: the scheme must be https:// or http://")
	}
	switch {
	case t.hostname == "":
		return nil, errors.New("bad URL: no host")
	case u.User != nil:
		return nil, errors.New("bad URL: it must not hold a user name or password")
	case u.Opaque != "":
		return nil, errors.New("bad URL: not a hierarchical URL")
	}
	t.addr = net.JoinHostPort(t.hostname, t.port)
	t.key = u.Scheme + "://" + t.addr
	t.path = u.EscapedPath()
	if t.path == "" {
		t.path = "/"
	}
	if u.RawQuery != "" || u.ForceQuery {
		t.path += "?" + u.RawQuery
	}
	for i := 0; i < len(t.path); i++ {
		if t.path[i] <= ' ' || t.path[i] >= 0x7f {
			return nil, errors.New("bad URL: the path holds a space or control character")
		}
	}
	for i := 0; i < len(t.host); i++ {
		if t.host[i] <= ' ' || t.host[i] >= 0x7f {
			return nil, errors.New("bad URL: the host holds a space or control character")
		}
	}
	return t, nil
}

func (c *Client) init() {
	c.once.Do(func() {
		getenv := c.Getenv
		if getenv == nil {
			getenv = os.Getenv
		}
		c.env = map[string]string{}
		for _, k := range []string{"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy"} {
			c.env[k] = getenv(k)
		}
		// Resumption makes a reconnect's handshake cheap on a slow CPU.
		c.sessions = tls.NewLRUClientSessionCache(8)
	})
}

func (c *Client) getenv(k string) string { return c.env[k] }

// Do sends req and returns the response, whatever its status; its Body streams and
// must be closed. ctx bounds the whole exchange, dialling and the body included.
// Errors are *Error, or say what is wrong with req.
func (c *Client) Do(ctx context.Context, req *Request) (*Response, error) {
	c.init()
	method := or(req.Method, "GET")
	if !isToken(method) {
		return nil, errors.New("bad request method")
	}
	for _, f := range req.Header {
		if !isToken(f.Name) || strings.ContainsAny(f.Value, "\r\n\x00") {
			return nil, errors.New("bad header field " + strconv.Quote(clip(f.Name)))
		}
		switch strings.ToLower(f.Name) {
		case "host", "content-length", "transfer-encoding", "connection":
			return nil, errors.New("header field " + f.Name + " is set by the client")
		}
	}
	header, rawURL := req.Header, req.URL
	for hop := 0; ; hop++ {
		t, err := parseTarget(rawURL)
		if err != nil {
			return nil, err
		}
		resp, err := c.exchange(ctx, req, method, t, header)
		if err != nil {
			return nil, err
		}
		resp.URL = rawURL
		loc := resp.Header.Get("Location")
		if req.Redirects <= 0 || (method != "GET" && method != "HEAD") || loc == "" || !isRedirect(resp.Status) {
			return resp, nil
		}
		// Read a little of the body so that the connection can serve the next hop.
		io.Copy(io.Discard, io.LimitReader(resp.Body, maxRedirectBody))
		resp.Body.Close()
		if hop >= req.Redirects {
			return nil, &Error{Where: t.addr, Op: "following redirects", Err: errors.New("stopped after " + strconv.Itoa(req.Redirects) + " redirects")}
		}
		next, err := resolve(rawURL, loc)
		if err != nil {
			return nil, &Error{Where: t.addr, Op: "following a redirect", Err: err}
		}
		nt, err := parseTarget(next)
		if err != nil {
			return nil, &Error{Where: t.addr, Op: "following a redirect", Err: err}
		}
		if t.secure && !nt.secure {
			return nil, &Error{Where: t.addr, Op: "following a redirect", Err: errors.New("refused a redirect from https to http")}
		}
		if nt.hostname != t.hostname {
			header = dropCredentials(header)
		}
		rawURL = next
	}
}

func isRedirect(status int) bool {
	switch status {
	case 301, 302, 303, 307, 308:
		return true
	}
	return false
}

// resolve makes a Location absolute against the URL that sent it.
func resolve(base, loc string) (string, error) {
	b, err := url.Parse(base)
	if err != nil {
		return "", errors.New("bad URL")
	}
	l, err := url.Parse(strings.TrimSpace(loc))
	if err != nil {
		return "", errors.New("malformed Location")
	}
	return b.ResolveReference(l).String(), nil
}

func dropCredentials(h []Field) []Field {
	var out []Field
	for _, f := range h {
		switch strings.ToLower(f.Name) {
		case "authorization", "cookie", "proxy-authorization":
			continue
		}
		out = append(out, f)
	}
	return out
}

// exchange sends one request to t and reads the head of its response.
func (c *Client) exchange(ctx context.Context, req *Request, method string, t *target, header []Field) (*Response, error) {
	scheme := "http"
	if t.secure {
		scheme = "https"
	}
	px, err := proxyFromEnv(c.getenv, scheme, t.hostname, t.port)
	if err != nil {
		return nil, err
	}
	where := t.addr
	if px != nil {
		where += " via proxy " + px.addr
	}
	wire := buildRequest(method, t, px, header, req.Body)
	for attempt := 1; ; attempt++ {
		cn, reused, err := c.get(ctx, t, px, where)
		if err != nil {
			return nil, err
		}
		m, stop, st, err := cn.roundTrip(ctx, wire, method == "HEAD", req.IdleTimeout)
		if err == nil {
			return c.respond(ctx, cn, m, stop, where), nil
		}
		cn.close()
		if ctx.Err() != nil {
			return nil, &Error{Where: where, Op: st.String(), Err: ctx.Err()}
		}
		if reused && attempt == 1 && (st == stageUnsent || (req.Idempotent && st == stageSent)) {
			continue
		}
		return nil, &Error{Where: where, Op: st.String(), Err: err}
	}
}

// buildRequest makes the bytes of a request.
func buildRequest(method string, t *target, px *proxy, header []Field, body []byte) []byte {
	rt := t.path
	if px != nil && !t.secure {
		rt = "http://" + t.host + rt // absolute form, for a plain proxy
	}
	n := len(method) + len(rt) + len(t.host) + len(body) + 64
	for _, f := range header {
		n += len(f.Name) + len(f.Value) + 4
	}
	b := make([]byte, 0, n)
	b = append(b, method...)
	b = append(b, ' ')
	b = append(b, rt...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, t.host...)
	b = append(b, "\r\n"...)
	if px != nil && !t.secure && px.auth != "" {
		b = append(b, "Proxy-Authorization: "...)
		b = append(b, px.auth...)
		b = append(b, "\r\n"...)
	}
	for _, f := range header {
		b = append(b, f.Name...)
		b = append(b, ": "...)
		b = append(b, f.Value...)
		b = append(b, "\r\n"...)
	}
	if len(body) > 0 || (method != "GET" && method != "HEAD" && method != "DELETE" && method != "OPTIONS") {
		b = append(b, "Content-Length: "...)
		b = strconv.AppendInt(b, int64(len(body)), 10)
		b = append(b, "\r\n"...)
	}
	b = append(b, "\r\n"...)
	return append(b, body...)
}

// respond wraps the body of m; a body already at its end gives the connection back
// at once.
func (c *Client) respond(ctx context.Context, cn *conn, m *message, stop func() bool, where string) *Response {
	b := &body{c: c, cn: cn, r: m.body, keep: m.keep, stop: stop, ctx: ctx, where: where}
	if m.body.done() {
		b.finish()
		b.err = io.EOF
	}
	return &Response{Status: m.status, Reason: m.reason, Header: m.header, ContentLength: m.length, Body: b}
}

// body is a Response's Body.
type body struct {
	c     *Client
	cn    *conn
	r     bodyReader
	keep  bool
	stop  func() bool // unregisters the ctx watch that closes the connection
	ctx   context.Context
	where string
	err   error // sticky, for Read

	mu   sync.Mutex
	over bool // the connection was given back or closed
}

func (b *body) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	n, err := b.r.Read(p)
	switch {
	case err == io.EOF:
		b.err = io.EOF
		b.finish()
	case err != nil:
		if b.ctx.Err() != nil {
			err = b.ctx.Err()
		} else if errors.Is(err, os.ErrDeadlineExceeded) && b.cn.idleTimeout > 0 && !b.cn.ctxExpired() {
			err = idleError{b.cn.idleTimeout}
		}
		b.err = &Error{Where: b.where, Op: stageReading.String(), Err: err}
		b.abort()
	}
	return n, b.err
}

// Close gives the connection back if the body was read to its end, and closes it if
// not.
func (b *body) Close() error {
	b.abort()
	return nil
}

func (b *body) finish() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.over {
		return
	}
	b.over = true
	if b.stop() && b.keep { // false: ctx ended and closed the connection, if only just
		b.c.put(b.cn)
	} else {
		b.cn.close()
	}
}

func (b *body) abort() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.over {
		return
	}
	b.over = true
	b.stop()
	b.cn.close()
}
