// Package mqtt is the MQTT channel: it makes the board's pins and sensors
// Home Assistant entities through MQTT discovery, publishes their states as
// they change, and runs the commands Home Assistant sends through the same
// call path as a console command (caller "mqtt": validated, audited before
// the effect).
//
// The client is github.com/eclipse/paho.mqtt.golang speaking MQTT 3.1.1:
// Home Assistant, Mosquitto and every broker a home runs speak it, nothing
// here needs MQTT 5, and paho has what the channel relies on — a will,
// persistent sessions, QoS 0, 1 and 2 both ways, and manual acks (a command
// is acknowledged to the broker only once it is stored). When to reconnect is
// decided here (client.go), not by paho.
package mqtt

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"golang.org/x/time/rate"

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
	// DeviceClass is the entity's device_class, for any kind ("" leaves it
	// out): a binary sensor's door or motion, a switch's outlet, a sensor's
	// temperature. Unit and StateClass are a sensor's unit_of_measurement
	// and state_class. config checks each against Home Assistant's lists.
	DeviceClass, Unit, StateClass string
	// Watch calls publish with the entity's state now and at every change
	// until ctx ends. cmd/clawedge makes it from a pin's edge events, or a
	// sensor's polled command (SensorWatch), so this package needs no hal.
	Watch func(ctx context.Context, publish func(state string)) error
	// Available, when set, gives the entity an availability of its own
	// beside the board's, for a source that can stop answering while the
	// board runs (a sensor): it calls set with whether the source answers,
	// when it first knows and at each change, until ctx ends. The entity's
	// availability topic (clawedge/<node>/<name>/availability) then says
	// online or offline, and Home Assistant shows the entity available only
	// while both it and the board's status say online (availability_mode
	// all); until the first call it shows it unavailable.
	Available func(ctx context.Context, set func(available bool)) error
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
	// the first attempt is immediate, and so is the first after a connection
	// that lasted stableAfter; the waits double from 1 s.
	MaxBackoff time.Duration
}

// Channel is a running MQTT connection.
type Channel struct {
	o        Options
	log      *slog.Logger
	base     string // clawedge/<node>
	client   paho.Client
	entities map[string]Entity
	lost     chan error // the connection's end, from paho (client.go)
	conn     atomic.Pointer[boundedConn]

	mu          sync.Mutex
	states      map[string]string // last published state of each entity
	avails      map[string]string // last availability of each entity with its own (online, offline)
	ready       bool              // discovery is sent on this connection: states may follow
	refused     map[string]bool   // names whose commands were refused (logged once; inbox.go)
	refusedFull sync.Once
	subs        map[string][]chan string // automations' topic filters (subscribe.go)
	behind      map[string]bool          // filters whose automations dropped a message (logged once)
	pending     map[paho.Token]pendingPub
	named       map[string]bool // refused packets logged (refused.go)

	inbox   *inbox
	wake    chan struct{}
	writes  *rate.Limiter // the store writes' budget (inbox.go); nil: none
	limited atomic.Uint64 // commands dropped past it
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
		states: map[string]string{}, avails: map[string]string{}, refused: map[string]bool{}, pending: map[paho.Token]pendingPub{},
		named: map[string]bool{}, lost: make(chan error, 1), wake: make(chan struct{}, 1),
		writes: rate.NewLimiter(rate.Every(writeEvery), writeBurst)}
	for _, e := range opts.Entities {
		c.entities[e.Name] = e
	}
	c.inbox = &inbox{st: opts.Store, queue: "mqtt/" + opts.Node}
	if err := c.inbox.open(); err != nil {
		return nil, err
	}
	po, err := clientOptions(opts, c.conn.Store)
	if err != nil {
		return nil, err
	}
	// A persistent session: the broker keeps the commands sent while the
	// board is away and delivers them when it is back. A command is
	// acknowledged only once it is stored (handle); paho sends the PUBACK
	// (QoS 1) or PUBREC (QoS 2) when the handler calls Ack.
	po.SetCleanSession(false)
	po.SetStore(&copyStore{}) // store.go: paho's MemoryStore races on resume
	po.SetAutoAckDisabled(true)
	po.SetOrderMatters(true) // one handler at a time, in arrival order
	po.SetKeepAlive(30 * time.Second)
	po.SetWill(c.availabilityTopic(), "offline", 1, true)
	po.SetDefaultPublishHandler(func(_ paho.Client, m paho.Message) { c.handle(m) })
	po.SetConnectionLostHandler(func(_ paho.Client, err error) {
		select {
		case c.lost <- err:
		default:
		}
	})
	c.client = paho.NewClient(po)
	return c, nil
}

// Topics of this board.
func (c *Channel) availabilityTopic() string     { return c.base + "/status" }
func (c *Channel) stateTopic(name string) string { return c.base + "/" + name + "/state" }
func (c *Channel) entityAvailabilityTopic(name string) string {
	return c.base + "/" + name + "/availability"
}
func (c *Channel) commandTopic(name string) string {
	return c.base + "/" + name + "/set"
}

// Run connects, keeps the connection, watches the entities and runs the
// commands until ctx ends; then it says offline and disconnects.
func (c *Channel) Run(ctx context.Context) error {
	c.log.Info("mqtt: connecting", "broker", c.o.Broker, "client_id", c.o.ClientID, "node", c.o.Node)
	var wg sync.WaitGroup
	wg.Go(func() { c.keep(ctx) }) // client.go: connects, and again with backoff
	for _, e := range c.o.Entities {
		wg.Go(func() { c.watch(ctx, e) })
		if e.Available != nil {
			wg.Go(func() { c.watchAvailable(ctx, e) })
		}
	}
	wg.Go(func() { c.work(ctx) })
	<-ctx.Done()
	wg.Wait()
	if c.client.IsConnectionOpen() {
		// The will covers a crash; a clean stop says it itself.
		c.client.Publish(c.availabilityTopic(), 1, true, "offline").WaitTimeout(2 * time.Second)
	}
	c.client.Disconnect(500) // ms
	c.setState(false)
	return nil
}

// connected runs after every (re)connect: subscribe, announce, publish, in
// the order Home Assistant needs them: the discovery configs first (an
// entity's state before its config is a message about nothing), then
// online, then the states. One connection keeps the order of its publishes.
func (c *Channel) connected() {
	c.log.Info("mqtt: connected", "broker", c.o.Broker)
	c.setState(true)
	// QoS 1, the qos Home Assistant publishes commands with (the discovery
	// config says so); the inbox makes them run once. Every QoS is accepted
	// whatever the subscription's: aedes delivers a message queued for an
	// absent board with the QoS it was published with, 2 to this QoS 1
	// subscription. handle stores, then acks (PUBACK for 1, PUBREC for 2).
	if t := c.client.Subscribe(c.base+"/+/set", 1, func(_ paho.Client, m paho.Message) { c.handle(m) }); !t.WaitTimeout(defaultWait) || t.Error() != nil {
		c.log.Warn("mqtt: subscribing to commands failed; reconnecting will retry", "err", t.Error())
	}
	c.resubscribe()
	if err := c.discover(); err != nil {
		c.log.Warn("mqtt: discovery", "err", err)
	}
	c.send(c.availabilityTopic(), "online")
	c.mu.Lock()
	c.ready = true
	states := maps.Clone(c.states)
	avails := maps.Clone(c.avails)
	c.mu.Unlock()
	// An entity's own availability before its state: Home Assistant keeps
	// a state it gets while the entity is unavailable, and shows it once
	// the entity is available again.
	for name, a := range avails {
		c.send(c.entityAvailabilityTopic(name), a)
	}
	for name, s := range states {
		c.send(c.stateTopic(name), s)
	}
}

// setState records the connection's state for the metrics; a connection
// lost is not ready for states until its discovery is sent again.
func (c *Channel) setState(up bool) {
	if up {
		connects.Inc()
		connectedNow.Store(1)
		return
	}
	connectedNow.Store(0)
	c.mu.Lock()
	c.ready = false
	c.mu.Unlock()
}

// publish sends an entity's state: a retained QoS 1 message when the
// connection has sent its discovery configs; until then the state is sent by
// connected().
func (c *Channel) publish(topic, payload string) {
	c.mu.Lock()
	ready := c.ready
	c.mu.Unlock()
	if ready {
		c.send(topic, payload)
	}
}

// send publishes a retained QoS 1 message when connected; a failure is logged.
func (c *Channel) send(topic, payload string) {
	if !c.client.IsConnectionOpen() {
		return
	}
	t := c.client.Publish(topic, 1, true, payload)
	c.track(t, topic, payload)
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
	c.track(t, topic, payload)
	if !t.WaitTimeout(defaultWait) {
		return fmt.Errorf("publishing to %s: no acknowledgement from the broker in %s", topic, defaultWait)
	}
	return t.Error()
}

// watch publishes an entity's state each time it changes.
func (c *Channel) watch(ctx context.Context, e Entity) {
	for ctx.Err() == nil {
		err := e.Watch(ctx, func(s string) {
			// The state is recorded and ready read at once: connected() sends
			// the states it finds when it sets ready, this sends the ones after.
			c.mu.Lock()
			same := c.states[e.Name] == s
			c.states[e.Name] = s
			ready := c.ready
			c.mu.Unlock()
			if !same && ready {
				c.send(c.stateTopic(e.Name), s)
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

// watchAvailable publishes an entity's own availability each time it
// changes: online when its source answers, offline when it does not.
func (c *Channel) watchAvailable(ctx context.Context, e Entity) {
	for ctx.Err() == nil {
		err := e.Available(ctx, func(ok bool) {
			a := "offline"
			if ok {
				a = "online"
			}
			c.mu.Lock()
			same := c.avails[e.Name] == a
			c.avails[e.Name] = a
			ready := c.ready
			c.mu.Unlock()
			if !same && ready {
				c.send(c.entityAvailabilityTopic(e.Name), a)
			}
		})
		if ctx.Err() != nil {
			return
		}
		c.log.Warn("mqtt: following an entity's availability failed; retrying in 5s", "entity", e.Name, "err", err)
		select {
		case <-time.After(5 * time.Second):
		case <-ctx.Done():
		}
	}
}
