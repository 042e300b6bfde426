// Package fairlisten bounds the connections of an HTTP server so that
// strangers cannot fill them: a listener that serves at most MaxConns
// connections at once and PerPeer of one peer (an IPv4 address, an IPv6
// /64), and that makes room for a new connection by closing one that holds a
// slot without using it — a connection that has not sent a whole request yet
// (idle or half a request), or one idle between requests — instead of
// leaving the new one in the kernel's backlog behind them (which is what
// netutil.LimitListener does, so 64 idle connections kept a browser out for
// as long as the server's timeouts let them stay).
//
// A request that carries valid credentials (a paired browser's session, the
// MCP token) marks its connection trusted: such a connection, idle, is closed
// for room last, and keeps the server's keep-alive time; an untrusted one,
// idle, is closed after AnonIdle. Requests without credentials being served
// at once are bounded too (AnonBusy, half the connections by default), so
// the other half is always left to trusted requests, and one peer's to a
// quarter of that half: what strangers may hold
// is either closed for room or bounded in number and time (the server's
// ReadHeaderTimeout and ReadTimeout).
//
// Use: ln := fairlisten.New(inner, limits); srv := &http.Server{Handler:
// ln.Guard(h, trusted)}; ln.Hook(srv); srv.Serve(ln).
package fairlisten

import (
	"context"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Limits are a listener's bounds.
type Limits struct {
	// MaxConns is the connections served at once (required, > 0).
	MaxConns int
	// PerPeer is the connections of one peer at once (0: MaxConns).
	PerPeer int
	// AnonIdle is how long a connection whose last request carried no
	// credentials may stay idle between requests (0: 2 s).
	AnonIdle time.Duration
	// AnonBusy is the requests without credentials served at once, and
	// AnonBusyPerPeer those of one peer; past either they are answered 503
	// and their connection closed (0: MaxConns/2, and a quarter of AnonBusy).
	AnonBusy, AnonBusyPerPeer int
}

// The states of a connection.
const (
	fresh = iota // accepted; no whole request read yet
	busy         // a request is being served (or the connection was hijacked)
	idle         // between requests
)

// Listener is a net.Listener with fair bounds; see the package comment.
type Listener struct {
	net.Listener
	lim Limits

	mu      sync.Mutex
	conns   map[*conn]struct{}
	byPeer  map[string]int
	slot    chan struct{} // a slot was freed or may be made (buffered 1)
	done    chan struct{} // the listener is closed
	closing sync.Once

	anonBusy   int            // requests without credentials being served (under mu)
	anonByPeer map[string]int // the same by peer
	evicted    atomic.Uint64
	refused    atomic.Uint64
}

// New wraps ln.
func New(ln net.Listener, lim Limits) *Listener {
	if lim.MaxConns <= 0 {
		lim.MaxConns = 1
	}
	if lim.PerPeer <= 0 || lim.PerPeer > lim.MaxConns {
		lim.PerPeer = lim.MaxConns
	}
	if lim.AnonIdle <= 0 {
		lim.AnonIdle = 2 * time.Second
	}
	if lim.AnonBusy <= 0 {
		lim.AnonBusy = max(lim.MaxConns/2, 1)
	}
	if lim.AnonBusyPerPeer <= 0 || lim.AnonBusyPerPeer > lim.AnonBusy {
		lim.AnonBusyPerPeer = max(lim.AnonBusy/4, 1)
	}
	return &Listener{Listener: ln, lim: lim, conns: map[*conn]struct{}{}, byPeer: map[string]int{}, anonByPeer: map[string]int{},
		slot: make(chan struct{}, 1), done: make(chan struct{})}
}

// Stats are counts since the listener was made.
type Stats struct {
	Open    int    // connections open now
	Evicted uint64 // connections closed to make room for another
	Refused uint64 // connections closed at once: their peer held PerPeer busy ones
}

// Stats reports the listener's counts.
func (l *Listener) Stats() Stats {
	l.mu.Lock()
	n := len(l.conns)
	l.mu.Unlock()
	return Stats{Open: n, Evicted: l.evicted.Load(), Refused: l.refused.Load()}
}

// Close closes the inner listener and wakes an Accept waiting for a slot.
func (l *Listener) Close() error {
	l.closing.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// Accept returns the next connection once it has a slot: a free one, or one
// made by closing a connection that holds a slot without using it. When
// every slot is in use (requests being served), it waits for one to end;
// the connections behind wait in the kernel's backlog.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		nc, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		c := &conn{Conn: nc, l: l, peer: peerOf(nc.RemoteAddr())}
		if l.admit(c) {
			return c, nil
		}
		select {
		case <-l.done:
			return nil, net.ErrClosed
		default:
		}
	}
}

// admit finds c a slot, waiting while none can be made; false: c was closed
// (its peer holds PerPeer connections serving requests, or the listener
// closed). A peer at its bound does not make Accept wait: that would hold
// every other peer's connections back too.
func (l *Listener) admit(c *conn) bool {
	l.mu.Lock()
	for {
		var victim *conn
		switch {
		case l.lim.PerPeer < l.lim.MaxConns && l.byPeer[c.peer] >= l.lim.PerPeer:
			if victim = l.victimLocked(c.peer); victim == nil {
				l.mu.Unlock()
				c.Conn.Close()
				l.refused.Add(1)
				return false
			}
		case len(l.conns) >= l.lim.MaxConns:
			victim = l.victimLocked("")
		default:
			c.state, c.since = fresh, time.Now()
			l.conns[c] = struct{}{}
			l.byPeer[c.peer]++
			l.mu.Unlock()
			return true
		}
		if victim != nil {
			l.dropLocked(victim)
			l.evicted.Add(1)
			l.mu.Unlock()
			victim.Conn.Close()
			l.mu.Lock()
			continue
		}
		// Every slot is serving a request: wait for one to end.
		l.mu.Unlock()
		select {
		case <-l.slot:
		case <-l.done:
			c.Conn.Close()
			return false
		}
		l.mu.Lock()
	}
}

// victimLocked picks the connection to close for room, among peer's ("":
// all): untrusted connections idle or without a whole request first, then
// trusted idle ones; of those, the peer holding the most, then the one
// unused for longest. nil: every one is serving a request.
func (l *Listener) victimLocked(peer string) *conn {
	var best *conn
	rank := func(c *conn) int {
		if c.trusted {
			return 1
		}
		return 0
	}
	for c := range l.conns {
		if c.state == busy || (peer != "" && c.peer != peer) {
			continue
		}
		if best == nil {
			best = c
			continue
		}
		if r, rb := rank(c), rank(best); r != rb {
			if r < rb {
				best = c
			}
			continue
		}
		if n, nb := l.byPeer[c.peer], l.byPeer[best.peer]; n != nb {
			if n > nb {
				best = c
			}
			continue
		}
		if c.since.Before(best.since) {
			best = c
		}
	}
	return best
}

// dropLocked forgets c and frees its slot.
func (l *Listener) dropLocked(c *conn) {
	if _, ok := l.conns[c]; !ok {
		return
	}
	delete(l.conns, c)
	if l.byPeer[c.peer]--; l.byPeer[c.peer] <= 0 {
		delete(l.byPeer, c.peer)
	}
	if c.timer != nil {
		c.timer.Stop()
	}
	select {
	case l.slot <- struct{}{}:
	default:
	}
}

// conn is an accepted connection with its state.
type conn struct {
	net.Conn
	l    *Listener
	peer string

	// under l.mu
	state   int
	trusted bool      // its last request carried credentials
	since   time.Time // the last change of state
	timer   *time.Timer
	epoch   uint64 // counts states; a late timer of an old idle period does nothing
}

func (c *conn) Close() error {
	c.l.mu.Lock()
	c.l.dropLocked(c)
	c.l.mu.Unlock()
	return c.Conn.Close()
}

func (c *conn) set(state int) {
	l := c.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.conns[c]; !ok {
		return
	}
	c.state, c.since = state, time.Now()
	c.epoch++
	if state != busy { // an Accept waiting for a slot may make one now
		select {
		case l.slot <- struct{}{}:
		default:
		}
	}
	if c.timer != nil {
		c.timer.Stop()
		c.timer = nil
	}
	if state == idle && !c.trusted {
		epoch := c.epoch
		c.timer = time.AfterFunc(l.lim.AnonIdle, func() {
			l.mu.Lock()
			_, open := l.conns[c]
			stale := !open || c.epoch != epoch
			if !stale {
				l.dropLocked(c)
			}
			l.mu.Unlock()
			if !stale {
				c.Conn.Close()
			}
		})
	}
}

// peerOf is the peer a remote address counts as: an IPv4 address, an IPv6
// /64 (one host may hold a whole /64), or "" for other networks.
func peerOf(a net.Addr) string {
	ta, ok := a.(*net.TCPAddr)
	if !ok {
		return ""
	}
	if v4 := ta.IP.To4(); v4 != nil {
		return v4.String()
	}
	return ta.IP.Mask(net.CIDRMask(64, 128)).String()
}

// connOf is the listener's conn under c (a *tls.Conn's), nil if none.
func connOf(c net.Conn) *conn {
	for range 4 {
		if fc, ok := c.(*conn); ok {
			return fc
		}
		u, ok := c.(interface{ NetConn() net.Conn })
		if !ok {
			return nil
		}
		c = u.NetConn()
	}
	return nil
}

type ctxKey struct{}

// Hook sets srv's ConnState and ConnContext (keeping any set before) so that
// the listener sees each connection's requests; call it before srv.Serve(l).
func (l *Listener) Hook(srv *http.Server) {
	prevState, prevCtx := srv.ConnState, srv.ConnContext
	srv.ConnState = func(nc net.Conn, s http.ConnState) {
		if c := connOf(nc); c != nil && c.l == l {
			switch s {
			case http.StateActive, http.StateHijacked:
				c.set(busy)
			case http.StateIdle:
				c.set(idle)
			case http.StateClosed:
				c.Close()
			}
		}
		if prevState != nil {
			prevState(nc, s)
		}
	}
	srv.ConnContext = func(ctx context.Context, nc net.Conn) context.Context {
		if prevCtx != nil {
			ctx = prevCtx(ctx, nc)
		}
		if c := connOf(nc); c != nil && c.l == l {
			ctx = context.WithValue(ctx, ctxKey{}, c)
		}
		return ctx
	}
}

// takeAnon counts one more request without credentials of peer; false:
// AnonBusy or AnonBusyPerPeer are reached.
func (l *Listener) takeAnon(peer string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.anonBusy >= l.lim.AnonBusy || l.anonByPeer[peer] >= l.lim.AnonBusyPerPeer {
		return false
	}
	l.anonBusy++
	l.anonByPeer[peer]++
	return true
}

func (l *Listener) giveAnon(peer string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.anonBusy--
	if l.anonByPeer[peer]--; l.anonByPeer[peer] <= 0 {
		delete(l.anonByPeer, peer)
	}
}

// Guard wraps h: trusted (nil: never) says whether a request carries valid
// credentials, which marks its connection trusted until its next request.
// Past AnonBusy requests without credentials served at once, or
// AnonBusyPerPeer of one peer (so that one peer dripping request bodies
// cannot take them all), the next is answered 503 and its connection closed.
func (l *Listener) Guard(h http.Handler, trusted func(*http.Request) bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, _ := r.Context().Value(ctxKey{}).(*conn)
		ok := trusted != nil && trusted(r)
		peer := ""
		if c != nil {
			peer = c.peer
			l.mu.Lock()
			c.trusted = ok
			l.mu.Unlock()
		}
		if !ok {
			if !l.takeAnon(peer) {
				w.Header().Set("Connection", "close")
				w.Header().Set("Retry-After", "1")
				http.Error(w, "busy: too many requests without credentials at once", http.StatusServiceUnavailable)
				return
			}
			defer l.giveAnon(peer)
		}
		h.ServeHTTP(w, r)
	})
}
