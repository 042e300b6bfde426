package mqtt

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawedge/clawedge/channels"
	"github.com/clawedge/clawedge/channels/mqtt/mqtttest"
	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/store"
	"github.com/clawedge/clawedge/tools"
)

// relayTool is gpio/write on one simulated output: it records its writes and
// wakes the entity's watcher, the way hal.Pin.WaitForWrite does.
type relayTool struct {
	mu     sync.Mutex
	level  int64
	writes int
	ch     chan struct{}
}

func newRelay() *relayTool { return &relayTool{ch: make(chan struct{})} }

func (r *relayTool) Spec() grammar.ToolSpec {
	return grammar.ToolSpec{Name: "gpio/write", Doc: "Drive an output.", Params: []grammar.ArgSpec{
		{Name: "pin", Type: grammar.TypeString, Required: true, Enum: []string{"relay"}},
		{Name: "value", Type: grammar.TypeInteger, Required: true, Min: tools.Float(0), Max: tools.Float(1)}}}
}

func (r *relayTool) Run(_ context.Context, a grammar.Args) (tools.Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.level = a.Int("value")
	r.writes++
	close(r.ch)
	r.ch = make(chan struct{})
	return tools.Result{Text: "ok"}, nil
}

func (r *relayTool) state() (string, chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.level == 1 {
		return On, r.ch
	}
	return Off, r.ch
}

func (r *relayTool) count() int { r.mu.Lock(); defer r.mu.Unlock(); return r.writes }

func (r *relayTool) watch(ctx context.Context, publish func(string)) error {
	for {
		s, ch := r.state()
		publish(s)
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// syncBuffer is a log destination safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

type harness struct {
	relay *relayTool
	pub   *PublishTool
	st    *store.Store
	log   *syncBuffer
	ch    *Channel
	stop  func()
}

// start runs a Channel exposing the relay (switch), or opts.Entities,
// against b.
func start(t *testing.T, b *mqtttest.Broker, st *store.Store, relay *relayTool, opts Options) *harness {
	t.Helper()
	reg := tools.NewRegistry()
	h := &harness{relay: relay, pub: &PublishTool{}, st: st, log: &syncBuffer{}}
	if err := reg.Register(relay, h.pub); err != nil {
		t.Fatal(err)
	}
	if b != nil { // nil: opts.Broker names another broker (aedes)
		if opts.Broker == "" {
			opts.Broker = b.URL
		}
		opts.CAFile = b.CAFile
	}
	opts.Node, opts.Prefix = "garage", "homeassistant"
	opts.Device = Device{Name: "garage", Model: "clawedge on sim", SWVersion: "test"}
	opts.Runner = &tools.Runner{Registry: reg, Audit: st}
	opts.Store = st
	opts.Log = slog.New(slog.NewTextHandler(h.log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if opts.MaxBackoff == 0 {
		opts.MaxBackoff = time.Second
	}
	if opts.Entities == nil {
		opts.Entities = []Entity{{Name: "relay", Kind: Switch, Watch: relay.watch}}
	}
	ch, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	h.ch = ch
	h.pub.Bind(ch)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ch.Run(ctx) }()
	h.stop = func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("the channel did not stop")
		}
	}
	t.Cleanup(func() {
		if ctx.Err() == nil {
			h.stop()
		}
	})
	return h
}

func openStore(t *testing.T, dir string) *store.Store {
	t.Helper()
	st, err := store.Open(dir, store.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func wait(t *testing.T, s *mqtttest.Subscriber, what string, match func(mqtttest.Message) bool) mqtttest.Message {
	t.Helper()
	m, ok := s.Wait(10*time.Second, match)
	if !ok {
		t.Fatalf("no %s; received %+v", what, s.Messages())
	}
	return m
}

func is(topic, payload string) func(mqtttest.Message) bool {
	return func(m mqtttest.Message) bool { return m.Topic == topic && m.Payload == payload }
}

// TestSetRunsOnceAndSurvivesBrokerRestart: a set message runs the command once, as
// caller mqtt with an audit entry; the state follows; a restart of the broker
// brings the board back (availability and states republished); a command sent
// while the board is offline is delivered by the broker afterwards and runs once.
func TestSetRunsOnceAndSurvivesBrokerRestart(t *testing.T) {
	t.Parallel() // each test has its own broker; most of their time is waiting on it
	b := mqtttest.Start(t, mqtttest.Options{})
	ha := b.Subscribe(t, "clawedge/#")
	st := openStore(t, t.TempDir())
	defer st.Close()
	h := start(t, b, st, newRelay(), Options{})
	wait(t, ha, "online", is("clawedge/garage/status", "online"))
	wait(t, ha, "the initial state", is("clawedge/garage/relay/state", Off))

	b.Publish(t, "clawedge/garage/relay/set", On, false)
	wait(t, ha, "state ON", is("clawedge/garage/relay/state", On))
	if n := h.relay.count(); n != 1 {
		t.Fatalf("the relay was written %d times, want 1", n)
	}
	entries, err := st.Tail(10)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Channel != "mqtt" || entries[0].Who != "mqtt" ||
		entries[0].Command != `@gpio/write{pin="relay";value=1}` {
		t.Fatalf("audit = %+v", entries)
	}

	// The broker restarts: the channel reconnects and says online again.
	// mosquitto_sub reconnects and subscribes again by itself; what the channel
	// republishes arrives live (not retained).
	before := len(ha.Messages())
	b.Restart(t)
	for _, want := range []mqtttest.Message{{Topic: "clawedge/garage/status", Payload: "online"},
		{Topic: "clawedge/garage/relay/state", Payload: On}} {
		if _, ok := ha.WaitAfter(before, 10*time.Second, func(m mqtttest.Message) bool { return m == want }); !ok {
			t.Fatalf("%+v not republished after the broker restart; received %+v\n%s", want, ha.Messages()[before:], h.log)
		}
	}

	// Offline: the channel stops; a command published with QoS 1 waits in the
	// broker's copy of the persistent session and runs when the board is back.
	h.stop()
	wait(t, ha, "offline", is("clawedge/garage/status", "offline"))
	b.Publish(t, "clawedge/garage/relay/set", Off, false)
	before = len(ha.Messages())
	h = start(t, b, st, h.relay, Options{})
	if _, ok := ha.WaitAfter(before, 10*time.Second, is("clawedge/garage/relay/state", Off)); !ok {
		t.Fatalf("the command sent while offline did not run\n%s", h.log)
	}
	h.stop()
	if n := h.relay.count(); n != 2 {
		t.Fatalf("the relay was written %d times, want 2\n%s", n, h.log)
	}
}

// fakeMsg is an MQTT delivery, for the dedupe rules.
type fakeMsg struct {
	dup     bool
	id      uint16
	topic   string
	payload string
}

func (m fakeMsg) Duplicate() bool   { return m.dup }
func (m fakeMsg) Qos() byte         { return 1 }
func (m fakeMsg) Topic() string     { return m.topic }
func (m fakeMsg) MessageID() uint16 { return m.id }
func (m fakeMsg) Payload() []byte   { return []byte(m.payload) }

// TestInboxDedupe: a redelivery (DUP) of a stored command is dropped, across a
// reopen of the store (a crash before the acknowledgement); a new message that
// reuses the packet id is not.
func TestInboxDedupe(t *testing.T) {
	t.Parallel() // each test has its own broker; most of their time is waiting on it
	dir := t.TempDir()
	st := openStore(t, dir)
	in := &inbox{st: st, queue: "mqtt/x"}
	if err := in.open(); err != nil {
		t.Fatal(err)
	}
	m := fakeMsg{id: 7, topic: "clawedge/x/relay/set", payload: On}
	for i, tc := range []struct {
		msg  fakeMsg
		want bool
	}{
		{m, true},
		{fakeMsg{dup: true, id: 7, topic: m.topic, payload: On}, false},  // the broker resends it
		{fakeMsg{dup: true, id: 7, topic: m.topic, payload: Off}, true},  // another message
		{fakeMsg{dup: false, id: 7, topic: m.topic, payload: Off}, true}, // a new one, id reused
	} {
		if i == 1 { // a crash: the store is reopened
			st.Close()
			st = openStore(t, dir)
			in = &inbox{st: st, queue: "mqtt/x"}
			if err := in.open(); err != nil {
				t.Fatal(err)
			}
		}
		got, err := in.add(tc.msg)
		if err != nil || got != tc.want {
			t.Errorf("delivery %d (%+v): added %v, %v; want %v", i, tc.msg, got, err, tc.want)
		}
	}
	items, err := st.QueueItems("mqtt/x", 0)
	if err != nil || len(items) != 3 {
		t.Errorf("%d items queued (%v), want 3", len(items), err)
	}
	st.Close()
}

// TestRefusedOnceAndDiscoveryCleared: a set for a name not exposed is refused and
// logged once; an entity removed from the config gets an empty retained config.
func TestRefusedOnceAndDiscoveryCleared(t *testing.T) {
	t.Parallel() // each test has its own broker; most of their time is waiting on it
	b := mqtttest.Start(t, mqtttest.Options{})
	ha := b.Subscribe(t, "#")
	st := openStore(t, t.TempDir())
	defer st.Close()
	relay := newRelay()
	door := Entity{Name: "door", Kind: BinarySensor, Watch: func(ctx context.Context, publish func(string)) error {
		publish(Off)
		<-ctx.Done()
		return ctx.Err()
	}}
	h := start(t, b, st, relay, Options{Entities: []Entity{{Name: "relay", Kind: Switch, Watch: relay.watch}, door}})
	wait(t, ha, "the door's config", func(m mqtttest.Message) bool {
		return m.Topic == "homeassistant/binary_sensor/garage/door/config" && m.Payload != ""
	})
	wait(t, ha, "online", is("clawedge/garage/status", "online"))
	for range 3 {
		b.Publish(t, "clawedge/garage/heater/set", On, false)
		b.Publish(t, "clawedge/garage/door/set", On, false)
	}
	b.Publish(t, "clawedge/garage/relay/set", On, false) // processed after the refused ones
	wait(t, ha, "state ON", is("clawedge/garage/relay/state", On))
	h.stop()
	log := h.log.String()
	if n := strings.Count(log, "command refused"); n != 2 || !strings.Contains(log, `\"heater\" is not exposed`) {
		t.Errorf("refusals logged %d times, want 2 (once per name):\n%s", n, log)
	}
	if relay.count() != 1 {
		t.Errorf("relay written %d times", relay.count())
	}

	// The door is no longer configured: its config is cleared, the relay's stays.
	start(t, b, st, relay, Options{})
	wait(t, ha, "the door's config cleared", is("homeassistant/binary_sensor/garage/door/config", ""))
	cfg, ok := ha.Last("homeassistant/switch/garage/relay/config")
	var c map[string]any
	if !ok || json.Unmarshal([]byte(cfg.Payload), &c) != nil {
		t.Fatalf("relay config: %+v", cfg)
	}
}

// TestTLSAndPassword: over mqtts with the test CA and a password, discovery
// configs pass Home Assistant's required keys; the password appears in no log
// line, neither when it works nor when the broker refuses it.
func TestTLSAndPassword(t *testing.T) {
	t.Parallel() // each test has its own broker; most of their time is waiting on it
	const user, pass = "clawedge", "s3cret-mqtt-pass"
	b := mqtttest.Start(t, mqtttest.Options{TLS: true, Username: user, Password: pass})
	ha := b.Subscribe(t, "homeassistant/#")
	st := openStore(t, t.TempDir())
	defer st.Close()
	relay := newRelay()
	h := start(t, b, st, relay, Options{Username: user, Password: pass})
	m := wait(t, ha, "the relay's config", func(m mqtttest.Message) bool { return strings.HasSuffix(m.Topic, "/relay/config") })
	comp, p, err := mqtttest.CheckDiscovery(m)
	if err != nil || comp != "switch" || p["command_topic"] != "clawedge/garage/relay/set" || p["state_topic"] != "clawedge/garage/relay/state" {
		t.Fatalf("%s %v: %v", comp, p, err)
	}
	h.stop()

	bad := start(t, b, st, relay, Options{Username: user, Password: "wrong-password-xyz"})
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(bad.log.String(), "cannot connect") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	bad.stop()
	if !strings.Contains(bad.log.String(), "not authorized") {
		t.Errorf("the refusal is not logged:\n%s", bad.log)
	}
	for _, l := range []string{h.log.String(), bad.log.String()} {
		if strings.Contains(l, pass) || strings.Contains(l, "wrong-password-xyz") {
			t.Errorf("a password reached the log:\n%s", l)
		}
	}
}

// TestInterruptedCommandNotRerun: after a crash, a stored command whose call had
// begun (its audit intent recorded) is reported and not run again; one stored
// but not begun runs.
func TestInterruptedCommandNotRerun(t *testing.T) {
	t.Parallel() // each test has its own broker; most of their time is waiting on it
	b := mqtttest.Start(t, mqtttest.Options{})
	st := openStore(t, t.TempDir())
	defer st.Close()
	in := &inbox{st: st, queue: "mqtt/garage"}
	if err := in.open(); err != nil {
		t.Fatal(err)
	}
	for i, p := range []string{On, Off} {
		if ok, err := in.add(fakeMsg{id: uint16(i + 1), topic: "clawedge/garage/relay/set", payload: p}); !ok || err != nil {
			t.Fatal(ok, err)
		}
	}
	// The crash came after the first command's intent, before its effect.
	if _, err := st.QueueIntent("mqtt/garage", 1, "mqtt", "mqtt", `@gpio/write{pin="relay";value=1}`); err != nil {
		t.Fatal(err)
	}
	relay := newRelay()
	h := start(t, b, st, relay, Options{})
	deadline := time.Now().Add(10 * time.Second)
	for relay.count() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	h.stop()
	if n := relay.count(); n != 1 || relay.level != 0 {
		t.Errorf("relay written %d times, level %d; want once, by the OFF command only\n%s", n, relay.level, h.log)
	}
	if !strings.Contains(h.log.String(), "interrupted by the last stop is not run again") {
		t.Errorf("the interrupted command is not reported:\n%s", h.log)
	}
	if items, _ := st.QueueItems("mqtt/garage", 0); len(items) != 0 {
		t.Errorf("%d items left in the queue", len(items))
	}
}

// TestPublishTool: @mqtt/publish reaches the broker as a command like any other
// (audited); a wildcard or $ topic is refused before anything is sent.
func TestPublishTool(t *testing.T) {
	t.Parallel() // each test has its own broker; most of their time is waiting on it
	b := mqtttest.Start(t, mqtttest.Options{})
	sub := b.Subscribe(t, "zigbee2mqtt/#")
	st := openStore(t, t.TempDir())
	defer st.Close()
	h := start(t, b, st, newRelay(), Options{})
	r := h.ch.o.Runner
	console := tools.Caller{Channel: "console/stdin", User: "me"}
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := channels.Run(context.Background(), r, console, `@mqtt/publish{topic="zigbee2mqtt/lamp/set";payload="ON"}`)
		if err == nil {
			break
		}
		if time.Now().After(deadline) || !strings.Contains(err.Error(), "not connected") {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	wait(t, sub, "the published message", is("zigbee2mqtt/lamp/set", "ON"))
	for _, topic := range []string{"zigbee2mqtt/#", "$SYS/x", "a/+/b"} {
		if _, err := channels.Run(context.Background(), r, console, `@mqtt/publish{topic="`+topic+`";payload="x"}`); err == nil {
			t.Errorf("topic %q accepted", topic)
		}
	}
	h.stop()
	entries, _ := st.Tail(10)
	found := false
	for _, e := range entries {
		found = found || e.Command == `@mqtt/publish{topic="zigbee2mqtt/lamp/set";payload="ON"}` && e.OK
	}
	if !found {
		t.Errorf("no audited publish in %+v", entries)
	}
	if m := sub.Messages(); len(m) != 2 { // the probe and the lamp
		t.Errorf("messages: %+v", m)
	}
}

// TestNetworkLoss: when the connection drops under the board, the broker
// publishes its will (offline); the board reconnects, says online and
// republishes its state, and a QoS 1 command sent during the outage runs once.
func TestNetworkLoss(t *testing.T) {
	t.Parallel() // each test has its own broker; most of their time is waiting on it
	b := mqtttest.Start(t, mqtttest.Options{})
	proxy := b.NewProxy(t)
	ha := b.Subscribe(t, "clawedge/#")
	st := openStore(t, t.TempDir())
	defer st.Close()
	h := start(t, b, st, newRelay(), Options{Broker: proxy.URL})
	wait(t, ha, "online", is("clawedge/garage/status", "online"))
	wait(t, ha, "the state", is("clawedge/garage/relay/state", Off))
	n := len(ha.Messages())
	proxy.Cut()
	if _, ok := ha.WaitAfter(n, 10*time.Second, is("clawedge/garage/status", "offline")); !ok {
		t.Fatalf("no will after the connection was cut; got %+v", ha.Messages()[n:])
	}
	b.Publish(t, "clawedge/garage/relay/set", On, false)
	for _, want := range []mqtttest.Message{{Topic: "clawedge/garage/status", Payload: "online"},
		{Topic: "clawedge/garage/relay/state", Payload: On}} {
		if _, ok := ha.WaitAfter(n, 10*time.Second, func(m mqtttest.Message) bool { return m == want }); !ok {
			t.Fatalf("%+v not seen after the reconnect; got %+v\n%s", want, ha.Messages()[n:], h.log)
		}
	}
	h.stop()
	if c := h.relay.count(); c != 1 {
		t.Errorf("relay written %d times, want 1", c)
	}
}

// TestMessagesForAutomations: two automations on one topic filter both get each
// message; the subscription is made again after the broker restarts.
func TestMessagesForAutomations(t *testing.T) {
	t.Parallel() // each test has its own broker; most of their time is waiting on it
	b := mqtttest.Start(t, mqtttest.Options{})
	st := openStore(t, t.TempDir())
	defer st.Close()
	h := start(t, b, st, newRelay(), Options{})
	next1, _ := h.ch.Messages("sensors/+/temp")
	next2, _ := h.ch.Messages("sensors/+/temp")
	// Published until it arrives (the subscription is made once connected);
	// a payload of an earlier round left in a buffer is skipped.
	receive := func(what string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for got := ""; got != what; {
			b.Publish(t, "sensors/porch/temp", what, false)
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			got, _ = next1(ctx)
			cancel()
			if time.Now().After(deadline) {
				t.Fatalf("no message %q on the first\n%s", what, h.log)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		for got := ""; got != what; {
			var err error
			if got, err = next2(ctx); err != nil {
				t.Fatalf("no message %q on the second: %v", what, err)
			}
		}
	}
	receive("21.5")
	b.Restart(t)
	receive("22")
}

// TestCommandQoS: a command published with QoS 0, 1 and 2 runs exactly once
// each (Mosquitto delivers QoS 2 as QoS 1 to the command subscription;
// aedes_test.go has a QoS 2 delivery).
func TestCommandQoS(t *testing.T) {
	t.Parallel() // each test has its own broker; most of their time is waiting on it
	b := mqtttest.Start(t, mqtttest.Options{})
	ha := b.Subscribe(t, "clawedge/#")
	st := openStore(t, t.TempDir())
	defer st.Close()
	h := start(t, b, st, newRelay(), Options{})
	wait(t, ha, "the initial state", is("clawedge/garage/relay/state", Off))
	for i, p := range []string{On, Off, On} {
		n := len(ha.Messages())
		b.PublishQoS(t, "clawedge/garage/relay/set", p, i, false)
		if _, ok := ha.WaitAfter(n, 30*time.Second, is("clawedge/garage/relay/state", p)); !ok {
			t.Fatalf("QoS %d %s did not run\n%s", i, p, h.log)
		}
	}
	h.stop()
	if n := h.relay.count(); n != 3 {
		t.Fatalf("the relay was written %d times, want 3 (once per QoS)\n%s", n, h.log)
	}
	entries, err := st.Tail(10)
	if err != nil || len(entries) != 3 {
		t.Fatalf("%d audit entries (%v), want 3", len(entries), err)
	}
}

// TestRefusedPacketBacksOff: a broker whose max_packet_size is below the
// discovery config's size drops the board as soon as it publishes it, after
// accepting the connection. The board backs off anyway (the waits double
// across these short-lived connections: 1 s, 2 s, 4 s, a few connects in 20 s,
// never a storm) and names the refused publish, with its size, once.
func TestRefusedPacketBacksOff(t *testing.T) {
	t.Parallel() // each test has its own broker; most of their time is waiting on it
	b := mqtttest.Start(t, mqtttest.Options{MaxPacketSize: 300})
	st := openStore(t, t.TempDir())
	defer st.Close()
	h := start(t, b, st, newRelay(), Options{MaxBackoff: time.Minute})
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(h.log.String(), "retry_in=4s") {
		if time.Now().After(deadline) {
			t.Fatalf("no third backoff in 30 s:\n%s", h.log)
		}
		time.Sleep(50 * time.Millisecond)
	}
	h.stop()
	log := h.log.String()
	var waits []string
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, "mqtt: connection lost;") {
			_, w, _ := strings.Cut(l, "retry_in=")
			waits = append(waits, w)
		}
	}
	if len(waits) != 3 || waits[0] != "1s" || waits[1] != "2s" || waits[2] != "4s" {
		t.Errorf("waits after the lost connections %q, want 1s 2s 4s\n%s", waits, log)
	}
	if n := strings.Count(log, "mqtt: connected"); n != 3 {
		t.Errorf("%d connects before the third backoff, want 3\n%s", n, log)
	}
	if n := strings.Count(log, "it may refuse packets this large"); n != 1 {
		t.Errorf("the refused packet is named %d times, want once\n%s", n, log)
	}
	if !strings.Contains(log, "topic=homeassistant/switch/garage/relay/config bytes=") {
		t.Errorf("the refused packet is not named with its topic and size\n%s", log)
	}
}

// TestRefusedNamesBounded: a stranger on the broker publishing to many long,
// different set topics grows neither the memo of refused names nor the log
// beyond their caps.
func TestRefusedNamesBounded(t *testing.T) {
	t.Parallel() // each test has its own broker; most of their time is waiting on it
	c := &Channel{base: "clawedge/garage", entities: map[string]Entity{}, refused: map[string]bool{},
		log: slog.New(slog.NewTextHandler(&syncBuffer{}, nil))}
	buf := &syncBuffer{}
	c.log = slog.New(slog.NewTextHandler(buf, nil))
	long := strings.Repeat("x", 60000)
	for i := range maxRefusedNames + 44 {
		name := fmt.Sprintf("%d%s", i, long)
		_, _, err := c.commandFor("clawedge/garage/"+name+"/set", On)
		c.refuse(name, err)
	}
	if len(c.refused) != maxRefusedNames {
		t.Errorf("%d names remembered, want %d", len(c.refused), maxRefusedNames)
	}
	for k := range c.refused {
		if len(k) > maxRefusedKey {
			t.Fatalf("a key of %d bytes is remembered", len(k))
		}
	}
	if n := len(buf.String()); n > maxRefusedNames*400 {
		t.Errorf("the log grew by %d bytes", n)
	}
	if !strings.Contains(buf.String(), "no more refusals are logged") {
		t.Errorf("the cap is not logged")
	}
}

// TestDiscoveryAsHomeAssistantReadsIt: every discovery payload the channel
// publishes — switches and binary sensors with and without a device class,
// sensors with and without device and state classes — passes the checker written from Home Assistant's source
// (no error, no removed or ignored key) and carries the entity's device
// class, or none when it has none; and for each entity the config comes
// before online and before its first state, on a broker that has seen nothing.
func TestDiscoveryAsHomeAssistantReadsIt(t *testing.T) {
	t.Parallel() // each test has its own broker; most of their time is waiting on it
	b := mqtttest.Start(t, mqtttest.Options{})
	all := b.Subscribe(t, "#")
	st := openStore(t, t.TempDir())
	defer st.Close()
	relay := newRelay()
	fixed := func(v string) func(ctx context.Context, publish func(string)) error {
		return func(ctx context.Context, publish func(string)) error {
			publish(v)
			<-ctx.Done()
			return ctx.Err()
		}
	}
	entities := []Entity{
		{Name: "relay", Kind: Switch, Watch: relay.watch},
		{Name: "plug", Kind: Switch, DeviceClass: "outlet", Watch: fixed(Off)},
		{Name: "button", Kind: BinarySensor, Watch: fixed(Off)},
		{Name: "door", Kind: BinarySensor, DeviceClass: "door", Watch: fixed(Off)},
		{Name: "freezer", Kind: Sensor, Unit: "°C", DeviceClass: "temperature", StateClass: "measurement", Watch: fixed("-18.5")},
		{Name: "meter", Kind: Sensor, Unit: "kWh", DeviceClass: "energy", StateClass: "total_increasing", Watch: fixed("1234.5")},
		{Name: "boot-time", Kind: Sensor, DeviceClass: "timestamp", Watch: fixed("2026-11-27T06:00:00+00:00")},
		{Name: "count", Kind: Sensor, StateClass: "measurement", Watch: fixed("3")},
		// A board sensor's quantity: an availability of its own.
		{Name: "greenhouse_pressure", Kind: Sensor, Unit: "hPa", DeviceClass: "pressure", StateClass: "measurement", Watch: fixed("1013.2"),
			Available: func(ctx context.Context, set func(bool)) error { set(true); <-ctx.Done(); return ctx.Err() }},
	}
	h := start(t, b, st, relay, Options{Entities: entities})
	for _, e := range entities {
		wait(t, all, e.Name+"'s state", func(m mqtttest.Message) bool { return m.Topic == "clawedge/garage/"+e.Name+"/state" })
	}
	h.stop()
	msgs := all.Messages()
	index := func(match func(mqtttest.Message) bool) int {
		return slices.IndexFunc(msgs, match)
	}
	online := index(is("clawedge/garage/status", "online"))
	for _, e := range entities {
		topic := "homeassistant/" + string(e.Kind) + "/garage/" + e.Name + "/config"
		ci := index(func(m mqtttest.Message) bool { return m.Topic == topic })
		si := index(func(m mqtttest.Message) bool { return m.Topic == "clawedge/garage/"+e.Name+"/state" })
		if ci < 0 || online < 0 || !(ci < online && online < si) {
			t.Errorf("%s: config at %d, online at %d, first state at %d: want config, online, state\n%+v", e.Name, ci, online, si, msgs)
			continue
		}
		comp, p, err := mqtttest.CheckDiscovery(msgs[ci])
		if err != nil || comp != string(e.Kind) {
			t.Errorf("%s: %s, %v", e.Name, comp, err)
		}
		if want := string(e.Kind) + ".garage_" + strings.ReplaceAll(e.Name, "-", "_"); p["default_entity_id"] != want {
			t.Errorf("%s: default_entity_id %v, want %s", e.Name, p["default_entity_id"], want)
		}
		if class, has := p["device_class"]; (e.DeviceClass == "" && has) || (e.DeviceClass != "" && class != e.DeviceClass) {
			t.Errorf("%s: device_class %v (present: %v), want %q", e.Name, class, has, e.DeviceClass)
		}
		av, _ := p["availability"].([]any)
		if mode := p["availability_mode"]; (e.Available == nil && (len(av) != 1 || mode != "latest")) || (e.Available != nil && (len(av) != 2 || mode != "all")) {
			t.Errorf("%s: availability %v, mode %v", e.Name, av, mode)
		}
		if e.Available != nil {
			ai := index(is("clawedge/garage/"+e.Name+"/availability", "online"))
			if ai < online {
				t.Errorf("%s: its own availability at %d, the board online at %d: want it after its config and online", e.Name, ai, online)
			}
		}
	}
}

// ackMsg is a delivery whose Ack records whether the command was already in
// the store's queue at that moment.
type ackMsg struct {
	fakeMsg
	qos           byte
	acked, stored bool
	check         func() bool
}

func (m *ackMsg) Qos() byte { return m.qos }
func (m *ackMsg) Ack()      { m.acked, m.stored = true, m.check() }

// TestStoredBeforeAck: handle acknowledges a command (PUBACK for QoS 1,
// PUBREC for QoS 2) only once it is in the durable queue, and not at all
// when it cannot be stored (the broker then delivers it again).
func TestStoredBeforeAck(t *testing.T) {
	t.Parallel()
	st := openStore(t, t.TempDir())
	c := &Channel{base: "clawedge/garage", wake: make(chan struct{}, 1), log: slog.New(slog.NewTextHandler(&syncBuffer{}, nil)),
		entities: map[string]Entity{"relay": {Name: "relay", Kind: Switch}}}
	c.inbox = &inbox{st: st, queue: "mqtt/garage"}
	if err := c.inbox.open(); err != nil {
		t.Fatal(err)
	}
	queued := func() bool { items, err := st.QueueItems("mqtt/garage", 0); return err == nil && len(items) > 0 }
	for _, qos := range []byte{1, 2} {
		m := &ackMsg{fakeMsg: fakeMsg{id: uint16(qos), topic: "clawedge/garage/relay/set", payload: On}, qos: qos, check: queued}
		c.handle(m)
		if !m.acked || !m.stored {
			t.Errorf("QoS %d: acked %v, stored at the ack %v", qos, m.acked, m.stored)
		}
	}
	st.Close() // the store fails from now on
	m := &ackMsg{fakeMsg: fakeMsg{id: 9, topic: "clawedge/garage/relay/set", payload: Off}, qos: 1, check: queued}
	c.handle(m)
	if m.acked {
		t.Errorf("a command that could not be stored was acknowledged")
	}
}
