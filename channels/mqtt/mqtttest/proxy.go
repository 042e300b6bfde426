package mqtttest

import (
	"io"
	"net"
	"strings"
	"sync"
	"testing"
)

// Proxy forwards TCP connections to a broker, and can cut them all at once:
// the network going away under a client, which the broker sees as a socket
// closed without DISCONNECT (so it publishes the client's will).
type Proxy struct {
	URL   string // the broker's URL with the proxy's address
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

// NewProxy listens on a free 127.0.0.1 port and forwards to b.
func (b *Broker) NewProxy(t testing.TB) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	scheme, _, _ := strings.Cut(b.URL, "://")
	p := &Proxy{URL: scheme + "://" + ln.Addr().String(), ln: ln}
	target := strings.TrimPrefix(b.URL, scheme+"://")
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, s)
			p.mu.Unlock()
			go func() { io.Copy(s, c); s.Close() }()
			go func() { io.Copy(c, s); c.Close() }()
		}
	}()
	t.Cleanup(func() { ln.Close(); p.Cut() })
	return p
}

// Cut closes every connection through the proxy; new ones are still accepted.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}
