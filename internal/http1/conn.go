package http1

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"net"
	"os"
	"time"
)

// Connections: dialling (TCP, a proxy tunnel, TLS), one exchange on a connection, and
// the pool of idle ones.

// conn is one connection.
type conn struct {
	key       string   // target.key: which server it talks to
	raw       net.Conn // the TCP connection: closing it wakes any read or write above it
	rw        net.Conn // raw, or the TLS client over it
	br        *bufio.Reader
	idleSince time.Time
	watch     chan error // the idle watcher's verdict; nil while in use

	// While in use: the exchange's deadline (ctx's; zero: none) and idle timeout.
	deadline    time.Time
	idleTimeout time.Duration
}

// Read reads for br, refreshing the idle deadline first when there is one.
func (c *conn) Read(p []byte) (int, error) {
	if c.idleTimeout > 0 {
		c.raw.SetReadDeadline(c.limit())
	}
	return c.rw.Read(p)
}

// limit is the earlier of the exchange's deadline and the idle one from now.
func (c *conn) limit() time.Time {
	dl := time.Now().Add(c.idleTimeout)
	if !c.deadline.IsZero() && c.deadline.Before(dl) {
		return c.deadline
	}
	return dl
}

// ctxExpired reports whether the exchange's own deadline has passed (then a timeout
// is ctx's, not the idle timeout).
func (c *conn) ctxExpired() bool {
	return !c.deadline.IsZero() && !time.Now().Before(c.deadline)
}

// roundTrip writes req and reads the head of the response. The connection's deadline
// is ctx's; ctx's end closes the connection, which wakes a read blocked in a long
// poll at once. On success the ctx watch stays until the body is done: stop removes
// it.
func (c *conn) roundTrip(ctx context.Context, req []byte, noBody bool, idle time.Duration) (m *message, stop func() bool, st stage, err error) {
	c.deadline, _ = ctx.Deadline()
	c.idleTimeout = idle
	c.raw.SetDeadline(c.deadline)
	if idle > 0 {
		c.raw.SetWriteDeadline(c.limit())
	}
	unwatch := context.AfterFunc(ctx, func() { c.raw.Close() })
	defer func() {
		if err != nil {
			unwatch()
			if errors.Is(err, os.ErrDeadlineExceeded) && idle > 0 && !c.ctxExpired() {
				err = idleError{idle}
			}
		}
	}()
	if n, err := c.rw.Write(req); err != nil {
		if n == 0 {
			return nil, nil, stageUnsent, err
		}
		return nil, nil, stagePartSent, err
	}
	if _, err := c.br.Peek(1); err != nil {
		return nil, nil, stageSent, err
	}
	m, err = readResponse(c.br, noBody)
	if err != nil {
		return nil, nil, stageReading, err
	}
	return m, unwatch, stageReading, nil
}

// get returns an idle connection to t that is still good, or a new one; reused says
// which.
func (cl *Client) get(ctx context.Context, t *target, px *proxy, where string) (c *conn, reused bool, err error) {
	for {
		cl.mu.Lock()
		c = nil
		for i := len(cl.idle) - 1; i >= 0; i-- {
			if cl.idle[i].key == t.key {
				c = cl.idle[i]
				cl.idle = append(cl.idle[:i], cl.idle[i+1:]...)
				break
			}
		}
		cl.mu.Unlock()
		if c == nil {
			break
		}
		if c.reclaim() {
			return c, true, nil
		}
	}
	c, err = cl.dial(ctx, t, px, where)
	return c, false, err
}

// put keeps c for the next request, or closes it if enough are kept. While idle, a
// watcher reads from it: a server closing it (or sending anything unasked) is noticed
// there, rather than by the next request.
func (cl *Client) put(c *conn) {
	c.raw.SetDeadline(time.Time{})
	c.deadline, c.idleTimeout = time.Time{}, 0
	max := cl.MaxIdleConns
	if max == 0 {
		max = DefaultMaxIdleConns
	}
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if len(cl.idle) >= max {
		c.close()
		return
	}
	c.idleSince = time.Now()
	c.watch = make(chan error, 1)
	go cl.watchIdle(c, c.watch)
	cl.idle = append(cl.idle, c)
}

// watchIdle reads from an idle connection until reclaim wakes it with a deadline.
// Anything else (the server's close, or bytes nobody asked for) makes the connection
// useless: it is closed and dropped from the pool at once.
func (cl *Client) watchIdle(c *conn, verdict chan<- error) {
	_, err := c.br.Peek(1)
	if err == nil {
		err = errors.New("data arrived on an idle connection")
	}
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		c.close()
		cl.mu.Lock()
		for i, o := range cl.idle {
			if o == c {
				cl.idle = append(cl.idle[:i], cl.idle[i+1:]...)
				break
			}
		}
		cl.mu.Unlock()
	}
	verdict <- err
}

// reclaim stops the idle watcher and reports whether c is still usable.
func (c *conn) reclaim() bool {
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

// CloseIdleConnections closes every idle connection.
func (cl *Client) CloseIdleConnections() {
	cl.mu.Lock()
	idle := cl.idle
	cl.idle = nil
	cl.mu.Unlock()
	for _, c := range idle {
		c.close()
		<-c.watch
	}
}

// close closes the TCP connection; a TLS close_notify is not worth a write that could
// block on a dead peer.
func (c *conn) close() { c.raw.Close() }

// dial opens a new connection to t: TCP to the server or its proxy, a CONNECT tunnel
// through the proxy for https, then TLS (1.2 or later, SNI). It is bounded by ctx and
// by the dial timeout.
func (cl *Client) dial(ctx context.Context, t *target, px *proxy, where string) (*conn, error) {
	timeout := cl.DialTimeout
	if timeout <= 0 {
		timeout = DefaultDialTimeout
	}
	dctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	to := t.addr
	if px != nil {
		to = px.addr
	}
	// The zero net.Dialer: Happy Eyeballs for dual-stack hosts, TCP keep-alives.
	raw, err := cl.dialer.DialContext(dctx, "tcp", to)
	if err != nil {
		return nil, &Error{Where: where, Op: dialOp(err), Err: err}
	}
	rw, err := cl.handshake(dctx, raw, t, px, where)
	if err != nil {
		raw.Close()
		if dctx.Err() != nil {
			// The end of dctx closed the connection; say that, not "use of closed…".
			return nil, &Error{Where: where, Op: "connecting", Err: dctx.Err()}
		}
		return nil, err
	}
	c := &conn{key: t.key, raw: raw, rw: rw}
	c.br = bufio.NewReaderSize(c, 16<<10)
	return c, nil
}

// handshake sets up the tunnel and TLS on a fresh TCP connection.
func (cl *Client) handshake(ctx context.Context, raw net.Conn, t *target, px *proxy, where string) (net.Conn, error) {
	dl, _ := ctx.Deadline()
	raw.SetDeadline(dl)
	stop := context.AfterFunc(ctx, func() { raw.Close() })
	defer stop()
	if px != nil && t.secure {
		if err := px.connect(raw, t.addr); err != nil {
			return nil, &Error{Where: where, Op: dialOp(err), Err: err}
		}
	}
	rw := raw
	if t.secure {
		tc := tls.Client(raw, &tls.Config{
			ServerName:         t.hostname, // SNI, and the name verified (an IP literal: its SAN)
			MinVersion:         tls.VersionTLS12,
			RootCAs:            cl.RootCAs, // nil: the system's
			NextProtos:         []string{"http/1.1"},
			ClientSessionCache: cl.sessions,
		})
		if err := tc.HandshakeContext(ctx); err != nil {
			return nil, &Error{Where: where, Op: "TLS handshake", Err: err}
		}
		if p := tc.ConnectionState().NegotiatedProtocol; p != "" && p != "http/1.1" {
			return nil, &Error{Where: where, Op: "TLS handshake", Err: errors.New("the server chose protocol " + p)}
		}
		rw = tc
	}
	if !stop() {
		return nil, ctx.Err()
	}
	raw.SetDeadline(time.Time{})
	return rw, nil
}

// dialOp names the step in a dial error only where the cause alone would not say it:
// "connection refused" does, "timed out" does not.
func dialOp(err error) string {
	if errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) {
		return "connecting"
	}
	return ""
}
