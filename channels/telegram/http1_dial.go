package telegram

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"net"
	"os"
	"time"
)

// dial opens a new connection for the Bot API client's transport (http1.go): TCP to
// the server or its proxy, a CONNECT tunnel through the proxy for https, then TLS
// (1.2 or later, the system's roots unless ClientOptions.RootCAs, SNI). It is bounded
// by ctx and by the transport's dial timeout.
func (t *h1Transport) dial(ctx context.Context) (*h1Conn, error) {
	dctx, cancel := context.WithTimeout(ctx, t.dialTimeout)
	defer cancel()
	to := t.addr
	if t.proxy != nil {
		to = t.proxy.addr
	}
	raw, err := t.dialer.DialContext(dctx, "tcp", to)
	if err != nil {
		return nil, t.fail(dialOp(err), err)
	}
	rw, err := t.handshake(dctx, raw)
	if err != nil {
		raw.Close()
		if dctx.Err() != nil {
			// The end of dctx closed the connection; say that, not "use of closed…".
			return nil, t.fail("connecting", dctx.Err())
		}
		return nil, err
	}
	return &h1Conn{raw: raw, rw: rw, br: bufio.NewReader(rw)}, nil
}

// handshake sets up the tunnel and TLS on a fresh TCP connection.
func (t *h1Transport) handshake(ctx context.Context, raw net.Conn) (net.Conn, error) {
	dl, _ := ctx.Deadline()
	raw.SetDeadline(dl)
	stop := context.AfterFunc(ctx, func() { raw.Close() })
	defer stop()
	if t.proxy != nil && t.secure {
		if err := t.proxy.connect(raw, t.addr); err != nil {
			return nil, t.fail(dialOp(err), err)
		}
	}
	rw := raw
	if t.secure {
		tc := tls.Client(raw, t.tlsConf)
		if err := tc.HandshakeContext(ctx); err != nil {
			return nil, t.fail("TLS handshake", err)
		}
		if p := tc.ConnectionState().NegotiatedProtocol; p != "" && p != "http/1.1" {
			return nil, t.fail("TLS handshake", errors.New("the server chose protocol "+p))
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
