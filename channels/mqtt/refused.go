package mqtt

import (
	"fmt"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
)

// A broker that refuses a packet does not say so in MQTT 3.1.1: it closes
// the connection (Mosquitto does this for a packet over its
// max_packet_size). What the board can tell is which of its publishes the
// broker never acknowledged before a connection that died young; the
// largest of them is named in the log, once per topic and size, so that a
// broker that refuses the discovery config leaves one clear line, not a
// silent reconnect loop (the backoff in client.go bounds the loop itself).

// maxPending bounds the publishes remembered while they await the broker's
// acknowledgement; beyond it they are sent untracked.
const maxPending = 1024

// maxNamed bounds the refused packets already logged.
const maxNamed = 64

// pendingPub is a publish awaiting its PUBACK.
type pendingPub struct {
	topic string
	size  int
}

// packetSize is the size on the wire of a QoS 1 PUBLISH: the fixed header
// (one byte and the remaining length, 1 to 4 bytes of 7 bits), the topic
// with its 2-byte length, the packet id, the payload.
func packetSize(topic, payload string) int {
	rest := 2 + len(topic) + 2 + len(payload)
	n := 1
	for v := rest; v >= 128; v >>= 7 {
		n++
	}
	return 1 + n + rest
}

// track remembers t as a publish of payload to topic until it completes.
func (c *Channel) track(t paho.Token, topic, payload string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.pending) >= maxPending {
		return
	}
	c.pending[t] = pendingPub{topic: topic, size: packetSize(topic, payload)}
	go func() {
		<-t.Done()
		c.mu.Lock()
		delete(c.pending, t)
		c.mu.Unlock()
	}()
}

// suspect logs the largest publish left unacknowledged by a connection that
// lived less than stableAfter.
func (c *Channel) suspect(lived time.Duration) {
	if lived >= stableAfter {
		return
	}
	c.mu.Lock()
	var worst pendingPub
	for _, p := range c.pending {
		if p.size > worst.size {
			worst = p
		}
	}
	key := fmt.Sprintf("%d %s", worst.size, worst.topic)
	seen := worst.size == 0 || c.named[key]
	if !seen && len(c.named) < maxNamed {
		c.named[key] = true
	}
	c.mu.Unlock()
	if !seen {
		c.log.Error("mqtt: the broker closed the connection with a publish unacknowledged; it may refuse packets this large (Mosquitto: max_packet_size)",
			"topic", worst.topic, "bytes", worst.size, "lived", lived.Round(time.Millisecond))
	}
}
