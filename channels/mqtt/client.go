package mqtt

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
)

// The broker connection: paho does the protocol (MQTT 3.1.1), this file
// decides when to connect. paho's own reconnect is off: it starts its backoff
// again from zero after every accepted CONNECT, so a broker that accepts the
// connection and then drops it (a packet over its max_packet_size, a QoS it
// does not like) gets hundreds of connects a second. Here a connection that
// ends within stableAfter of being accepted counts as a failed attempt, and
// the wait keeps doubling.

// stableAfter is how long a connection must last for the next attempt to be
// immediate again.
const stableAfter = 30 * time.Second

// connectTimeout bounds the dial, the TLS handshake and the CONNACK.
const connectTimeout = 10 * time.Second

// ErrLoginRefused is in Check's error (and the connect errors logged) when
// the broker refused the user name, the password or the client's
// authorization (CONNACK return codes 4 and 5).
var ErrLoginRefused = errors.New("the broker refused the login")

// brokerAddr is o's broker as host:port, and whether it is mqtts.
func brokerAddr(o Options) (addr string, tlsOn bool, err error) {
	u, err := url.Parse(o.Broker)
	if err != nil || (u.Scheme != "mqtt" && u.Scheme != "mqtts") || u.Host == "" {
		return "", false, fmt.Errorf("mqtt: broker %q: want mqtt://host:port or mqtts://host:port", o.Broker)
	}
	addr = u.Host
	if u.Port() == "" {
		port := "1883"
		if u.Scheme == "mqtts" {
			port = "8883"
		}
		addr += ":" + port
	}
	return addr, u.Scheme == "mqtts", nil
}

// tlsConfig is the TLS of an mqtts broker: o's CA file, or the system's roots.
func tlsConfig(o Options, addr string) (*tls.Config, error) {
	host, _, _ := net.SplitHostPort(addr)
	tc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: host}
	if o.CAFile != "" {
		pem, err := os.ReadFile(o.CAFile)
		if err != nil {
			return nil, fmt.Errorf("mqtt.ca_file: %w", err)
		}
		tc.RootCAs = x509.NewCertPool()
		if !tc.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("mqtt.ca_file %s: no PEM certificate in it", o.CAFile)
		}
	}
	return tc, nil
}

// clientOptions are what every connection of o has: the broker, TLS, the
// login and the client id. The connection is opened here, not by paho, so
// that a proxy named in the environment (paho honours all_proxy) is not
// involved (the broker is on the home network), and so that what the broker
// sends is bounded (wire.go); opened, when set, is told of each connection.
func clientOptions(o Options, opened func(*boundedConn)) (*paho.ClientOptions, error) {
	addr, tlsOn, err := brokerAddr(o)
	if err != nil {
		return nil, err
	}
	var tc *tls.Config
	if tlsOn {
		if tc, err = tlsConfig(o, addr); err != nil {
			return nil, err
		}
	}
	po := paho.NewClientOptions()
	// The scheme is only a label: the connection is opened by the function
	// below, whatever it says.
	po.AddBroker("tcp://" + addr)
	po.SetClientID(o.ClientID)
	po.SetProtocolVersion(4) // 3.1.1, never a fallback to 3.1
	if o.Username != "" {
		po.SetUsername(o.Username)
		po.SetPassword(o.Password)
	}
	po.SetAutoReconnect(false)
	po.SetConnectRetry(false)
	po.SetConnectTimeout(connectTimeout)
	po.SetWriteTimeout(connectTimeout)
	po.SetCustomOpenConnectionFn(func(*url.URL, paho.ClientOptions) (net.Conn, error) {
		ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
		defer cancel()
		var d net.Dialer
		nc, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return nil, err
		}
		if tc != nil {
			t := tls.Client(nc, tc)
			if err := t.HandshakeContext(ctx); err != nil {
				nc.Close()
				return nil, err
			}
			nc = t
		}
		bc := newBoundedConn(nc)
		if opened != nil {
			opened(bc)
		}
		return bc, nil
	})
	return po, nil
}

// connectError turns a failed CONNECT into the error logged: a refused login
// is ErrLoginRefused, named by its return code, never with the credentials.
func connectError(t paho.Token) error {
	err := t.Error()
	if err == nil {
		return nil
	}
	if ct, ok := t.(*paho.ConnectToken); ok {
		switch ct.ReturnCode() {
		case 4:
			return fmt.Errorf("%w: bad user name or password", ErrLoginRefused)
		case 5:
			return fmt.Errorf("%w: not authorized", ErrLoginRefused)
		}
	}
	return err
}

// connect makes one connection attempt, bounded by connectTimeout and ctx.
func connect(ctx context.Context, cl paho.Client) error {
	t := cl.Connect()
	timer := time.NewTimer(2*connectTimeout + time.Second)
	defer timer.Stop()
	select {
	case <-t.Done():
		return connectError(t)
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return fmt.Errorf("no CONNACK from the broker in %s", 2*connectTimeout)
	}
}

// Check connects to o's broker once, with o's login and TLS settings, and
// disconnects: doctor's test. It uses a client id of its own — a second
// connection with the daemon's id would make the broker drop the daemon's.
func Check(o Options, timeout time.Duration) error {
	host, _ := os.Hostname()
	o.ClientID = DefaultClientID(host) + "-doctor"
	po, err := clientOptions(o, nil)
	if err != nil {
		return err
	}
	po.SetCleanSession(true)
	cl := paho.NewClient(po)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := connect(ctx, cl); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("no answer from the broker in %s", timeout)
		}
		return err
	}
	cl.Disconnect(100)
	return nil
}

// nextWait is the wait before the attempt after one that failed.
func nextWait(wait, limit time.Duration) time.Duration {
	return min(max(2*wait, time.Second), limit)
}

// keep connects, serves the connection until it is lost, and connects again,
// until ctx ends. connected runs after each accepted CONNECT.
func (c *Channel) keep(ctx context.Context) {
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
		select { // a loss reported for the previous connection is done with
		case <-c.lost:
		default:
		}
		if err := connect(ctx, c.client); err != nil {
			if ctx.Err() != nil {
				return
			}
			wait = nextWait(wait, c.o.MaxBackoff)
			// The error names the refusal ("bad user name or password"),
			// never the credentials.
			c.log.Warn("mqtt: cannot connect; retrying with backoff", "broker", c.o.Broker, "err", err, "retry_in", wait)
			continue
		}
		up := time.Now()
		c.connected()
		var err error
		select {
		case err = <-c.lost:
		case <-ctx.Done():
			return
		}
		c.setState(false)
		lived := time.Since(up)
		if lived < stableAfter {
			wait = nextWait(wait, c.o.MaxBackoff)
		} else {
			wait = 0
		}
		if bc := c.conn.Load(); bc != nil && bc.tooLarge() != nil {
			err = bc.tooLarge() // what paho says is only that its read failed
		}
		c.log.Warn("mqtt: connection lost; reconnecting", "broker", c.o.Broker, "err", err,
			"lived", lived.Round(time.Millisecond), "retry_in", wait)
		c.suspect(lived)
	}
}
