package mqtt

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/clawedge/clawedge/channels/mqtt/mqtttest"
)

// TestAgainstAedes runs the channel against aedes, a broker written in
// JavaScript, with mqtt.js as Home Assistant: commands published with QoS 0, 1
// and 2 run exactly once, and so does one queued while the board was away
// (aedes delivers it with QoS 2, whatever the subscription's QoS: our former
// client called that a protocol error and reconnected hundreds of times a
// second); a QoS 2 message to the automations' QoS 0 subscription is taken
// without a reconnect; after the broker restarts — losing every session and
// retained message — the board is back and takes commands.
func TestAgainstAedes(t *testing.T) {
	t.Parallel() // each test has its own broker; most of their time is waiting on it
	a := mqtttest.StartAedes(t)
	ha := a.Subscribe(t, "clawedge/#")
	st := openStore(t, t.TempDir())
	defer st.Close()
	h := start(t, nil, st, newRelay(), Options{Broker: a.URL})
	next, _ := h.ch.Messages("sensors/+/temp")
	wait(t, ha, "online", is("clawedge/garage/status", "online"))
	wait(t, ha, "the initial state", is("clawedge/garage/relay/state", Off))
	for qos, p := range []string{On, Off, On} {
		n := len(ha.Messages())
		a.Publish(t, "clawedge/garage/relay/set", p, qos)
		if _, ok := ha.WaitAfter(n, 30*time.Second, is("clawedge/garage/relay/state", p)); !ok {
			t.Fatalf("QoS %d %s did not run\n%s", qos, p, h.log)
		}
	}
	if n := h.relay.count(); n != 3 {
		t.Fatalf("the relay was written %d times, want 3\n%s", n, h.log)
	}

	// A QoS 2 command sent while the board is away waits in its persistent
	// session; aedes delivers it with QoS 2 to the QoS 1 subscription when
	// the board is back — the delivery our former client called a protocol
	// error. It runs once.
	h.stop()
	wait(t, ha, "offline", is("clawedge/garage/status", "offline"))
	n := len(ha.Messages())
	a.Publish(t, "clawedge/garage/relay/set", Off, 2)
	h = start(t, nil, st, h.relay, Options{Broker: a.URL})
	next, _ = h.ch.Messages("sensors/+/temp")
	if _, ok := ha.WaitAfter(n, 30*time.Second, is("clawedge/garage/relay/state", Off)); !ok {
		t.Fatalf("the command sent while away did not run\n%s", h.log)
	}
	if n := h.relay.count(); n != 4 {
		t.Fatalf("the relay was written %d times, want 4\n%s", n, h.log)
	}
	if !strings.Contains(h.log.String(), "command stored and acknowledged\" qos=2") {
		t.Fatalf("the command queued while away did not come with QoS 2\n%s", h.log)
	}

	deadline := time.Now().Add(30 * time.Second)
	for got := ""; got != "21.5"; {
		a.Publish(t, "sensors/porch/temp", "21.5", 2)
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		got, _ = next(ctx)
		cancel()
		if time.Now().After(deadline) {
			t.Fatalf("the QoS 2 message did not reach the automation\n%s", h.log)
		}
	}
	if n := strings.Count(h.log.String(), "mqtt: connected"); n != 1 {
		t.Fatalf("%d connects before the restart, want 1\n%s", n, h.log)
	}

	a.Restart(t)
	n = len(ha.Messages())
	if _, ok := ha.WaitAfter(n, 30*time.Second, is("clawedge/garage/status", "online")); !ok {
		t.Fatalf("not online after the broker restart\n%s", h.log)
	}
	n = len(ha.Messages())
	a.Publish(t, "clawedge/garage/relay/set", On, 1)
	if _, ok := ha.WaitAfter(n, 30*time.Second, is("clawedge/garage/relay/state", On)); !ok {
		t.Fatalf("no command after the broker restart\n%s", h.log)
	}
	h.stop()
	if n := h.relay.count(); n != 5 {
		t.Errorf("the relay was written %d times, want 5\n%s", n, h.log)
	}
}
