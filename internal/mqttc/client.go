// Package mqttc is a small MQTT 3.1.1 client: what the MQTT channel uses and
// nothing else. TCP or TLS, a login, a will, persistent sessions, QoS 0 and 1
// both ways with acknowledgements left to the handler (a command is
// acknowledged only once it is stored), keepalive, and reconnecting with
// backoff. Handlers run one at a time in arrival order on the reading
// goroutine; they must not wait for the broker.
//
// It replaces github.com/eclipse/paho.mqtt.golang, which links a websocket
// client and a SOCKS dialer whatever the broker URL (0.28 MB of the arm64
// binary with paho itself, docs/BENCHMARKS.md).
//
// Not kept across reconnects: a QoS 1 publish that was not acknowledged when
// the connection dropped fails with the connection's error rather than being
// sent again (the channel publishes its states again on every connect).
package mqttc

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"
)

// Will is the message the broker publishes when the client goes away
// without disconnecting.
type Will struct {
	Topic, Payload string
	QoS            byte
	Retain         bool
}

// Options configure a Client.
type Options struct {
	Addr         string      // host:port
	TLS          *tls.Config // nil: plain TCP
	ClientID     string
	Username     string
	Password     string // sent to the broker only
	CleanSession bool
	KeepAlive    time.Duration // default 30 s
	Will         *Will
	// ConnectTimeout bounds the dial, the TLS handshake and the CONNACK
	// (default 10 s).
	ConnectTimeout time.Duration
	// MaxBackoff bounds the wait between attempts (default 1 min); the
	// first attempt after a loss is immediate, the waits double from 1 s.
	MaxBackoff time.Duration

	// Default receives messages that match no subscription (a persistent
	// session's deliveries before the subscription is made again).
	Default func(*Message)
	// OnConnect runs, on a goroutine of its own, after each connection.
	OnConnect func()
	// OnConnectError is told of each failed attempt.
	OnConnectError func(error)
	// OnConnectionLost is told when an established connection ends.
	OnConnectionLost func(error)
}

// Message is a message received.
type Message struct {
	topic   string
	payload []byte
	qos     byte
	dup     bool
	id      uint16
	ack     sync.Once
	c       *Client
	conn    *conn
}

func (m *Message) Topic() string     { return m.topic }
func (m *Message) Payload() []byte   { return m.payload }
func (m *Message) Qos() byte         { return m.qos }
func (m *Message) Duplicate() bool   { return m.dup }
func (m *Message) MessageID() uint16 { return m.id }

// Ack acknowledges a QoS 1 message (once; QoS 0 needs none). A message not
// acknowledged is delivered again by the broker after a reconnect.
func (m *Message) Ack() {
	if m.qos == 0 {
		return
	}
	m.ack.Do(func() { m.conn.write(pubackPacket(m.id)) })
}

// Token is the outcome of a publish or a subscribe.
type Token struct {
	done   chan struct{}
	err    error
	suback bool // awaits a SUBACK, not a PUBACK
}

func newToken() *Token { return &Token{done: make(chan struct{})} }

func (t *Token) finish(err error) {
	t.err = err
	close(t.done)
}

// WaitTimeout waits up to d and reports whether the outcome is known.
func (t *Token) WaitTimeout(d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-t.done:
		return true
	case <-timer.C:
		return false
	}
}

// Error is the outcome's error, once WaitTimeout has reported it known.
func (t *Token) Error() error {
	select {
	case <-t.done:
		return t.err
	default:
		return nil
	}
}

func failed(err error) *Token {
	t := newToken()
	t.finish(err)
	return t
}

var errNotConnected = errors.New("not connected to the MQTT broker")

// Client is a connection to a broker, made again when it drops.
type Client struct {
	o Options

	mu       sync.Mutex
	cur      *conn // nil while not connected
	subs     map[string]func(*Message)
	order    []string // subscription filters in the order made
	cancel   context.CancelFunc
	loopDone chan struct{}
}

// New prepares a client; Start connects.
func New(o Options) *Client {
	if o.KeepAlive <= 0 {
		o.KeepAlive = 30 * time.Second
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = 10 * time.Second
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = time.Minute
	}
	return &Client{o: o, subs: map[string]func(*Message){}}
}

// Connect makes one connection attempt and returns its outcome; the
// connection is not made again if it drops (doctor's check).
func (c *Client) Connect() error {
	cn, err := c.dial(context.Background())
	if err != nil {
		return err
	}
	c.setConn(cn)
	go func() { c.serve(cn) }()
	return nil
}

// Start connects in the background and keeps connecting until Disconnect.
func (c *Client) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	c.mu.Lock()
	c.cancel, c.loopDone = cancel, make(chan struct{})
	done := c.loopDone
	c.mu.Unlock()
	go func() {
		defer close(done)
		c.keep(ctx)
	}()
}

// keep connects, serves the connection until it drops, and connects again
// with backoff, until ctx ends.
func (c *Client) keep(ctx context.Context) {
	wait := time.Duration(0)
	for {
		if wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return
			}
		}
		cn, err := c.dial(ctx)
		if ctx.Err() != nil {
			if cn != nil {
				cn.close(ctx.Err())
			}
			return
		}
		if err != nil {
			if c.o.OnConnectError != nil {
				c.o.OnConnectError(err)
			}
			wait = min(max(2*wait, time.Second), c.o.MaxBackoff)
			continue
		}
		wait = 0
		c.setConn(cn)
		if c.o.OnConnect != nil {
			go c.o.OnConnect()
		}
		err = c.serve(cn)
		if ctx.Err() != nil {
			return
		}
		if c.o.OnConnectionLost != nil {
			c.o.OnConnectionLost(err)
		}
	}
}

func (c *Client) setConn(cn *conn) {
	c.mu.Lock()
	c.cur = cn
	c.mu.Unlock()
}

// IsConnectionOpen reports whether the client is connected now.
func (c *Client) IsConnectionOpen() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cur != nil
}

func (c *Client) conn() *conn {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cur
}

// Disconnect says goodbye to the broker (so it does not publish the will)
// and stops reconnecting. quiesce bounds the wait for the reconnect loop.
func (c *Client) Disconnect(quiesce time.Duration) {
	c.mu.Lock()
	cancel, done, cn := c.cancel, c.loopDone, c.cur
	c.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	if cn != nil {
		cn.write(disconnectPacket)
		cn.close(errors.New("disconnected"))
	}
	if done != nil {
		select {
		case <-done:
		case <-time.After(quiesce):
		}
	}
}

// Publish sends a message; with QoS 1 the token completes on the broker's
// PUBACK.
func (c *Client) Publish(topic string, qos byte, retain bool, payload string) *Token {
	if qos > 1 || topic == "" || len(topic) > 0xffff || strings.ContainsAny(topic, "+#") {
		return failed(fmt.Errorf("mqtt: cannot publish to %q with QoS %d", topic, qos))
	}
	cn := c.conn()
	if cn == nil {
		return failed(errNotConnected)
	}
	if qos == 0 {
		return failed(cn.write(publishPacket(topic, 0, retain, 0, payload)))
	}
	t, id, err := cn.track(false)
	if err != nil {
		return failed(err)
	}
	if err := cn.write(publishPacket(topic, qos, retain, id, payload)); err != nil {
		cn.untrack(id, err)
	}
	return t
}

// Subscribe subscribes to filter; messages matching it go to h. The
// subscription is remembered for routing but not made again on a new
// connection: OnConnect does that.
func (c *Client) Subscribe(filter string, qos byte, h func(*Message)) *Token {
	if qos > 1 || filter == "" || len(filter) > 0xffff {
		return failed(fmt.Errorf("mqtt: cannot subscribe to %q with QoS %d", filter, qos))
	}
	c.mu.Lock()
	if _, ok := c.subs[filter]; !ok {
		c.order = append(c.order, filter)
	}
	c.subs[filter] = h
	cn := c.cur
	c.mu.Unlock()
	if cn == nil {
		return failed(errNotConnected)
	}
	t, id, err := cn.track(true)
	if err != nil {
		return failed(err)
	}
	if err := cn.write(subscribePacket(id, filter, qos)); err != nil {
		cn.untrack(id, err)
	}
	return t
}

// route hands m to every subscription it matches, or to Default.
func (c *Client) route(m *Message) {
	c.mu.Lock()
	var hs []func(*Message)
	for _, f := range c.order {
		if Match(f, m.topic) {
			hs = append(hs, c.subs[f])
		}
	}
	def := c.o.Default
	c.mu.Unlock()
	if len(hs) == 0 && def != nil {
		hs = append(hs, def)
	}
	for _, h := range hs {
		h(m)
	}
	if len(hs) == 0 {
		m.Ack() // nobody wants it; the broker must not send it forever
	}
}

// dial opens the connection and completes the CONNECT handshake.
func (c *Client) dial(ctx context.Context) (*conn, error) {
	ctx, cancel := context.WithTimeout(ctx, c.o.ConnectTimeout)
	defer cancel()
	d := net.Dialer{}
	nc, err := d.DialContext(ctx, "tcp", c.o.Addr)
	if err != nil {
		return nil, err
	}
	if c.o.TLS != nil {
		cfg := c.o.TLS.Clone()
		if cfg.ServerName == "" {
			cfg.ServerName, _, _ = net.SplitHostPort(c.o.Addr)
		}
		tc := tls.Client(nc, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			nc.Close()
			return nil, err
		}
		nc = tc
	}
	deadline, _ := ctx.Deadline()
	nc.SetDeadline(deadline)
	cn := &conn{nc: nc, r: bufio.NewReader(nc), inflight: map[uint16]*Token{}, next: 1, c: c}
	if _, err := nc.Write(connectPacket(&c.o)); err != nil {
		nc.Close()
		return nil, err
	}
	p, err := readPacket(cn.r)
	if err == nil && p.typ != typeConnack {
		err = fmt.Errorf("mqtt: packet type %d from the broker before CONNACK", p.typ)
	}
	if err == nil && p.code != 0 {
		err = connackError(p.code)
	}
	if err != nil {
		nc.Close()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("no CONNACK from the broker in %s", c.o.ConnectTimeout)
		}
		return nil, err
	}
	nc.SetDeadline(time.Time{})
	return cn, nil
}
