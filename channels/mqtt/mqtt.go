// Package mqtt is the MQTT channel: it makes the board's pins and sensors
// Home Assistant entities through MQTT discovery, publishes their states as
// they change, and runs the commands Home Assistant sends through the same
// call path as a console command (caller "mqtt": validated, audited before
// the effect).
//
// The client is internal/mqttc (MQTT 3.1.1): Home Assistant, Mosquitto and
// every broker a home runs speak 3.1.1, nothing here needs MQTT 5, and it has
// what the channel relies on — reconnect with backoff, a will, persistent
// sessions and manual acks (a command is acknowledged to the broker only once
// it is stored).
package mqtt

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/clawedge/clawedge/internal/mqttc"
	"github.com/clawedge/clawedge/store"
	"github.com/clawedge/clawedge/tools"
)

// Kind is the Home Assistant component an entity becomes.
type Kind string

const (
	Switch       Kind = "switch"        // an output pin: Home Assistant can set it
	BinarySensor Kind = "binary_sensor" // an input pin
	Sensor       Kind = "sensor"        // a number read by a command
)

// The payloads of on and off: Home Assistant's defaults for switch and
// binary_sensor, so the discovery configs need not override them.
const (
	On  = "ON"
	Off = "OFF"
)

// Entity is one pin or sensor published to Home Assistant.
type Entity struct {
	Name string // "relay": a topic level and part of the unique id
	Kind Kind
	// Unit and DeviceClass are a sensor's unit_of_measurement and device_class.
	Unit, DeviceClass string
	// Watch calls publish with the entity's state now and at every change
	// until ctx ends. cmd/clawedge makes it from a pin's edge events, or a
	// sensor's polled command (SensorWatch), so this package needs no hal.
	Watch func(ctx context.Context, publish func(state string)) error
}

// Device is the Home Assistant device all entities belong to.
type Device struct {
	Name, Model, SWVersion string
}

// Options configure a Channel. Password is the revealed secret: it goes to
// the broker and nowhere else (not to a log, not to an error).
type Options struct {
	Broker             string // mqtt://host:port or mqtts://host:port
	CAFile             string // mqtts: PEM roots; "" means the system's
	Username, Password string
	ClientID           string // "" means DefaultClientID of the host name
	// Prefix is the discovery prefix; "" turns discovery off (and clears the
	// entities published before).
	Prefix   string
	Node     string // topic level and device id; "" means the host name
	Device   Device
	Entities []Entity
	Runner   *tools.Runner
	Store    *store.Store
	Log      *slog.Logger
	// MaxBackoff bounds the wait between reconnect attempts (default 1 min);
	// the first attempt is immediate and the waits double from 1 s.
	MaxBackoff time.Duration
}

// Channel is a running MQTT connection.
type Channel struct {
	o        Options
	log      *slog.Logger
	base     string // clawedge/<node>
	client   *mqttc.Client
	entities map[string]Entity

	mu      sync.Mutex
	states  map[string]string        // last published state of each entity
	refused map[string]bool          // names whose commands were refused (logged once)
	subs    map[string][]chan string // automations' topic filters (subscribe.go)

	inbox *inbox
	wake  chan struct{}
}

// Caller is who MQTT commands run as: one principal, mqtt, a program (anyone
// who may publish on the broker), held by policy.channels.mqtt like any
// program's calls. It may only ever name the entities it was offered
// (commandFor); what it may do with them is the policy's.
var Caller = tools.Caller{Channel: "mqtt", User: "mqtt", Actor: tools.Program}

var nonTopic = regexp.MustCompile(`[^a-z0-9_-]+`)

// DefaultNode turns a host name into a node id: lowercase letters, digits,
// _ and -, which Home Assistant accepts in a node_id and in a unique_id.
func DefaultNode(host string) string {
	host, _, _ = strings.Cut(strings.ToLower(host), ".")
	n := strings.Trim(nonTopic.ReplaceAllString(host, "-"), "-")
	if n == "" {
		return "clawedge"
	}
	return n
}

// DefaultClientID is the client id of a board named host.
func DefaultClientID(host string) string { return "clawedge-" + DefaultNode(host) }

// New checks opts and prepares the channel; Run connects.
func New(opts Options) (*Channel, error) {
	if opts.Runner == nil || opts.Store == nil {
		return nil, errors.New("mqtt: a runner and a store are required")
	}
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	host, _ := os.Hostname()
	if opts.Node == "" {
		opts.Node = DefaultNode(host)
	}
	if opts.ClientID == "" {
		opts.ClientID = DefaultClientID(host)
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = time.Minute
	}
	c := &Channel{o: opts, log: opts.Log, base: "clawedge/" + opts.Node, entities: map[string]Entity{},
		states: map[string]string{}, refused: map[string]bool{},
		wake: make(chan struct{}, 1)}
	for _, e := range opts.Entities {
		c.entities[e.Name] = e
	}
	c.inbox = &inbox{st: opts.Store, queue: "mqtt/" + opts.Node}
	if err := c.inbox.open(); err != nil {
		return nil, err
	}
	co, err := c.clientOptions()
	if err != nil {
		return nil, err
	}
	c.client = mqttc.New(co)
	return c, nil
}

// Topics of this board.
func (c *Channel) availabilityTopic() string     { return c.base + "/status" }
func (c *Channel) stateTopic(name string) string { return c.base + "/" + name + "/state" }
func (c *Channel) commandTopic(name string) string {
	return c.base + "/" + name + "/set"
}

// connOptions are what every connection of o has: the broker, TLS, the login
// and the client id.
func connOptions(o Options) (mqttc.Options, error) {
	u, err := url.Parse(o.Broker)
	if err != nil || (u.Scheme != "mqtt" && u.Scheme != "mqtts") || u.Host == "" {
		return mqttc.Options{}, fmt.Errorf("mqtt: broker %q: want mqtt://host:port or mqtts://host:port", o.Broker)
	}
	addr := u.Host
	if u.Port() == "" {
		port := "1883"
		if u.Scheme == "mqtts" {
			port = "8883"
		}
		addr += ":" + port
	}
	co := mqttc.Options{Addr: addr, ClientID: o.ClientID, Username: o.Username, ConnectTimeout: 10 * time.Second}
	if o.Username != "" {
		co.Password = o.Password
	}
	if u.Scheme == "mqtts" {
		tc := &tls.Config{MinVersion: tls.VersionTLS12}
		if o.CAFile != "" {
			pem, err := os.ReadFile(o.CAFile)
			if err != nil {
				return mqttc.Options{}, fmt.Errorf("mqtt.ca_file: %w", err)
			}
			tc.RootCAs = x509.NewCertPool()
			if !tc.RootCAs.AppendCertsFromPEM(pem) {
				return mqttc.Options{}, fmt.Errorf("mqtt.ca_file %s: no PEM certificate in it", o.CAFile)
			}
		}
		co.TLS = tc
	}
	return co, nil
}

func (c *Channel) clientOptions() (mqttc.Options, error) {
	co, err := connOptions(c.o)
	if err != nil {
		return co, err
	}
	// A persistent session: the broker keeps the QoS 1 commands sent while
	// the board is away and delivers them when it is back. A command is
	// acknowledged only once it is stored (handle).
	co.CleanSession = false
	co.MaxBackoff = c.o.MaxBackoff
	co.KeepAlive = 30 * time.Second
	co.Will = &mqttc.Will{Topic: c.availabilityTopic(), Payload: "offline", QoS: 1, Retain: true}
	co.Default = c.handle
	co.OnConnect = c.connected
	// The error names the refusal ("bad user name or password"), never the
	// credentials.
	co.OnConnectError = func(err error) {
		c.log.Warn("mqtt: cannot connect; retrying with backoff", "broker", c.o.Broker, "err", err)
	}
	co.OnConnectionLost = func(err error) {
		c.log.Warn("mqtt: connection lost; reconnecting", "broker", c.o.Broker, "err", err)
		c.setState(false)
	}
	return co, nil
}

// ErrLoginRefused is in Check's error when the broker refused the user name,
// the password or the client's authorization.
var ErrLoginRefused = mqttc.ErrLoginRefused

// Check connects to o's broker once, with o's login and TLS settings, and
// disconnects: doctor's test. It uses a client id of its own — a second
// connection with the daemon's id would make the broker drop the daemon's.
func Check(o Options, timeout time.Duration) error {
	host, _ := os.Hostname()
	o.ClientID = DefaultClientID(host) + "-doctor"
	co, err := connOptions(o)
	if err != nil {
		return err
	}
	co.CleanSession, co.ConnectTimeout = true, timeout
	cl := mqttc.New(co)
	if err := cl.Connect(); err != nil {
		return err
	}
	cl.Disconnect(100 * time.Millisecond)
	return nil
}

func (c *Channel) setState(up bool) {
	if up {
		connects.Inc()
		connectedNow.Store(1)
	} else {
		connectedNow.Store(0)
	}
}

// Run connects, keeps the connection, watches the entities and runs the
// commands until ctx ends; then it says offline and disconnects.
func (c *Channel) Run(ctx context.Context) error {
	c.log.Info("mqtt: connecting", "broker", c.o.Broker, "client_id", c.o.ClientID, "node", c.o.Node)
	c.client.Start() // it retries by itself; connected() runs on each success
	var wg sync.WaitGroup
	for _, e := range c.o.Entities {
		wg.Go(func() { c.watch(ctx, e) })
	}
	wg.Go(func() { c.work(ctx) })
	<-ctx.Done()
	wg.Wait()
	if c.client.IsConnectionOpen() {
		// The will covers a crash; a clean stop says it itself.
		c.client.Publish(c.availabilityTopic(), 1, true, "offline").WaitTimeout(2 * time.Second)
	}
	c.client.Disconnect(500 * time.Millisecond)
	c.setState(false)
	return nil
}

// connected runs after every (re)connect: subscribe, announce, publish.
func (c *Channel) connected() {
	c.log.Info("mqtt: connected", "broker", c.o.Broker)
	c.setState(true)
	if t := c.client.Subscribe(c.base+"/+/set", 1, c.handle); !t.WaitTimeout(10*time.Second) || t.Error() != nil {
		c.log.Warn("mqtt: subscribing to commands failed; reconnecting will retry", "err", t.Error())
	}
	c.resubscribe()
	if err := c.discover(); err != nil {
		c.log.Warn("mqtt: discovery", "err", err)
	}
	c.publish(c.availabilityTopic(), "online")
	c.mu.Lock()
	states := make(map[string]string, len(c.states))
	for k, v := range c.states {
		states[k] = v
	}
	c.mu.Unlock()
	for name, s := range states {
		c.publish(c.stateTopic(name), s)
	}
}

// publish sends a retained QoS 1 message when connected; while not, the
// state is sent again by connected().
func (c *Channel) publish(topic, payload string) {
	if !c.client.IsConnectionOpen() {
		return
	}
	t := c.client.Publish(topic, 1, true, payload)
	go func() {
		if t.WaitTimeout(10*time.Second) && t.Error() != nil {
			c.log.Warn("mqtt: publish failed", "topic", topic, "err", t.Error())
		}
	}()
}

// defaultWait bounds waiting for the broker's acknowledgement of a publish.
const defaultWait = 10 * time.Second

// publishWait publishes a retained QoS 1 message and waits for the broker's
// acknowledgement.
func (c *Channel) publishWait(topic, payload string) error {
	t := c.client.Publish(topic, 1, true, payload)
	if !t.WaitTimeout(defaultWait) {
		return fmt.Errorf("publishing to %s: no acknowledgement from the broker in %s", topic, defaultWait)
	}
	return t.Error()
}

// watch publishes an entity's state each time it changes.
func (c *Channel) watch(ctx context.Context, e Entity) {
	for ctx.Err() == nil {
		err := e.Watch(ctx, func(s string) {
			c.mu.Lock()
			same := c.states[e.Name] == s
			c.states[e.Name] = s
			c.mu.Unlock()
			if !same {
				c.publish(c.stateTopic(e.Name), s)
			}
		})
		if ctx.Err() != nil {
			return
		}
		c.log.Warn("mqtt: watching an entity failed; retrying in 5s", "entity", e.Name, "err", err)
		select {
		case <-time.After(5 * time.Second):
		case <-ctx.Done():
		}
	}
}
