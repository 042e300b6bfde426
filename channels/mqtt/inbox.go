package mqtt

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/clawedge/clawedge/channels"
	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/store"
	"github.com/clawedge/clawedge/tools"
)

// Commands from Home Assistant are QoS 1 (others may send QoS 0 or 2): the
// broker delivers each at least once, and again (with the DUP flag) when it
// saw no acknowledgement — after a crash between our storing a command and
// acknowledging it, for instance. For QoS 2 the acknowledgement is the PUBREC:
// after it the broker never sends the message again, only its PUBREL, which
// paho answers. So that none is lost and none runs twice:
//
//   - a command is stored in the store's durable queue (as Telegram updates are)
//     before it is acknowledged, so a stored command is never lost;
//   - the packet id of each stored command is recorded with a hash of its topic
//     and payload, and the sequence number it was queued under. A delivery
//     with DUP set, the same packet id, the same hash and a sequence number
//     already queued is the broker resending what was stored: it is
//     acknowledged and dropped. A delivery without DUP is always new: a broker
//     reuses a packet id only after the previous message's acknowledgement;
//   - the call's audit intent marks the queued item started in one transaction,
//     so an item interrupted by a crash is reported, not run again.

// inbox is the durable queue of commands.
type inbox struct {
	st    *store.Store
	queue string
	mu    sync.Mutex
	seq   uint64 // the last sequence number queued (the queue's offset)
}

func (in *inbox) open() error {
	off, _, err := in.st.QueueOffset(in.queue)
	in.seq = off
	return err
}

// command is a queued command's payload.
type command struct {
	Topic   string `json:"topic"`
	Payload string `json:"payload"`
}

// packetRecord is what is remembered of a stored command's delivery.
type packetRecord struct {
	Hash uint64 `json:"hash"`
	Seq  uint64 `json:"seq"`
}

func hashOf(topic string, payload []byte) uint64 {
	h := fnv.New64a()
	h.Write([]byte(topic))
	h.Write([]byte{0})
	h.Write(payload)
	return h.Sum64()
}

// message is what add needs of an MQTT message (paho.Message has it).
type message interface {
	Duplicate() bool
	Qos() byte
	Topic() string
	MessageID() uint16
	Payload() []byte
}

// add stores msg unless it is a redelivery of a stored one; it reports whether
// it was added. The caller acknowledges msg after add returns without error.
func (in *inbox) add(msg message) (bool, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	h := hashOf(msg.Topic(), msg.Payload())
	key := "packet/" + in.queue + "/" + strconv.Itoa(int(msg.MessageID()))
	tracked := msg.Qos() > 0 && msg.MessageID() != 0
	if tracked && msg.Duplicate() {
		if b, ok, err := in.st.Get(storeBucket, key); err != nil {
			return false, err
		} else if ok {
			var r packetRecord
			if json.Unmarshal(b, &r) == nil && r.Hash == h && r.Seq <= in.seq {
				return false, nil
			}
		}
	}
	seq := in.seq + 1
	if tracked {
		// Recorded before the item is queued: a crash in between leaves a
		// record whose sequence number was never queued, which does not match.
		b, _ := json.Marshal(packetRecord{Hash: h, Seq: seq})
		if err := in.st.Put(storeBucket, key, b); err != nil {
			return false, err
		}
	}
	data, _ := json.Marshal(command{Topic: msg.Topic(), Payload: string(msg.Payload())})
	if _, err := in.st.Enqueue(in.queue, seq, []store.NewQueueItem{{ID: seq, Data: data}}); err != nil {
		return false, err
	}
	in.seq = seq
	return true, nil
}

// ackable is a message handle receives (paho.Message is one).
type ackable interface {
	message
	Ack()
}

// isCommand reports whether topic is one of this board's command topics.
func (c *Channel) isCommand(topic string) bool {
	return strings.HasPrefix(topic, c.base+"/") && strings.HasSuffix(topic, "/set")
}

// Durable writes are bounded before anything is stored: a set message for a
// name that is not an exposed switch, or with a payload other than ON or OFF,
// is refused (acknowledged, counted, logged once per name) without touching
// the store; a valid one is stored only while the write budget allows:
// writeBurst at once, then one every writeEvery. Past it a command is
// acknowledged and dropped (the switch's state topic still says what it is,
// which Home Assistant shows). Before, every set was stored (a packet record
// and a queue item, each a commit with its fsync) and only then checked:
// 5 s of sets for names nobody exposed wrote 177 MiB to the SD card.
// MQTT 3.1.1 does not say who published a message, so the budget is the
// broker connection's, which carries every publisher's commands.
const (
	writeBurst = 20
	writeEvery = 5 * time.Second
	// maxSetPayload bounds a set message's payload (ON, OFF, and some space).
	maxSetPayload = 16
)

// handle receives every message of the command subscription and those that
// match no subscription (a persistent session's deliveries before the
// subscription is made again): commands are checked, stored, then
// acknowledged. QoS 0, 1 and 2 are all accepted; for QoS 2, Ack sends the
// PUBREC.
func (c *Channel) handle(m ackable) {
	if !c.isCommand(m.Topic()) {
		m.Ack()
		return
	}
	name, _, err := c.commandFor(m.Topic(), string(m.Payload()))
	if err != nil {
		m.Ack() // never stored: it would be refused when run
		commands("refused").Inc()
		c.refuse(name, err)
		return
	}
	if c.writes != nil && !c.writes.Allow() {
		m.Ack()
		commands("limited").Inc()
		// The 1st, 2nd, 4th, 8th... dropped command is logged: a flood
		// does not fill the log either.
		if n := c.limited.Add(1); n&(n-1) == 0 {
			c.log.Warn("mqtt: commands arrive faster than the board stores them; dropped", "entity", name,
				"dropped", n, "burst", writeBurst, "every", writeEvery)
		}
		return
	}
	added, err := c.inbox.add(m)
	if err != nil {
		// Not acknowledged: the broker delivers it again after the reconnect.
		c.log.Error("mqtt: a command could not be stored; the broker will resend it", "topic", m.Topic(), "err", err)
		return
	}
	m.Ack()
	c.log.Debug("mqtt: command stored and acknowledged", "qos", m.Qos(), "packet", m.MessageID(), "new", added)
	if !added {
		commands("duplicate").Inc()
		c.log.Info("mqtt: a command delivered again was dropped (already stored)", "topic", m.Topic(), "packet", m.MessageID())
		return
	}
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// work runs the stored commands in order until ctx ends.
func (c *Channel) work(ctx context.Context) {
	for {
		items, err := c.o.Store.QueueItems(c.inbox.queue, 0)
		if err != nil {
			c.log.Error("mqtt: reading the command queue", "err", err)
		}
		for _, it := range items {
			if ctx.Err() != nil {
				return
			}
			c.process(ctx, it)
		}
		select {
		case <-ctx.Done():
			return
		case <-c.wake:
		}
	}
}

// process runs one stored command and removes it.
func (c *Channel) process(ctx context.Context, it store.QueueItem) {
	var cmd command
	if err := json.Unmarshal(it.Data, &cmd); err != nil {
		c.log.Error("mqtt: an unreadable stored command was dropped", "item", it.ID, "err", err)
	} else if it.State == store.Started {
		// It began before a crash or stop; its effect is unknown, and running it
		// again could repeat it (see clawedge audit).
		c.log.Warn("mqtt: a command interrupted by the last stop is not run again", "topic", cmd.Topic, "payload", cmd.Payload)
	} else {
		c.run(ctx, it.ID, cmd)
	}
	if err := c.o.Store.QueueDone(c.inbox.queue, it.ID); err != nil {
		c.log.Error("mqtt: removing a done command", "item", it.ID, "err", err)
	}
}

// run turns a set message into a command line and runs it as caller mqtt.
func (c *Channel) run(ctx context.Context, id uint64, cmd command) {
	name, line, err := c.commandFor(cmd.Topic, cmd.Payload)
	if err != nil {
		commands("refused").Inc()
		c.refuse(name, err)
		return
	}
	caller := Caller
	caller.Audit = store.QueueAuditor{Store: c.o.Store, Queue: c.inbox.queue, Item: id}
	rep, err := channels.Run(ctx, c.o.Runner, caller, line)
	if err != nil {
		commands("error").Inc()
		c.log.Warn("mqtt: command failed", "entity", name, "command", line, "err", err)
		// Home Assistant shows what it asked for until told otherwise.
		c.mu.Lock()
		s, ok := c.states[name]
		c.mu.Unlock()
		if ok {
			c.publish(c.stateTopic(name), s)
		}
		return
	}
	commands("ok").Inc()
	c.log.Debug("mqtt: command ran", "entity", name, "command", line, "reply", rep.Text())
}

// commandFor is the entity a set message is for and the command it stands for.
func (c *Channel) commandFor(topic, payload string) (name, line string, err error) {
	name, ok := strings.CutPrefix(topic, c.base+"/")
	if name, ok = strings.CutSuffix(name, "/set"); !ok {
		return name, "", fmt.Errorf("%.64q is not a command topic (%s/<name>/set)", topic, c.base)
	}
	line, err = c.commandLine(name, payload)
	return name, line, err
}

// commandLine is the command a set message stands for.
func (c *Channel) commandLine(name, payload string) (string, error) {
	e, ok := c.entities[name]
	switch {
	case len(payload) > maxSetPayload:
		return "", fmt.Errorf("payload of %d bytes for %.64q: want ON or OFF", len(payload), name)
	case !ok:
		return "", fmt.Errorf("%.64q is not exposed over MQTT", name)
	case e.Kind != Switch:
		return "", fmt.Errorf("%.64q is a %s; only switches take commands", name, e.Kind)
	}
	write := func(v int64) string {
		return tools.CommandText("gpio/write", []grammar.Param{{Key: "pin", Value: grammar.StringValue(name)}, {Key: "value", Value: grammar.IntValue(v)}})
	}
	switch strings.TrimSpace(payload) {
	case On:
		return write(1), nil
	case Off:
		return write(0), nil
	}
	return "", fmt.Errorf("payload %.20q for %q: want ON or OFF", payload, name)
}

// The names whose refusals were logged are chosen by whoever publishes on
// the broker: the memo keeps at most maxRefusedNames of them, each cut to
// maxRefusedKey bytes, and once full it logs one line saying so and no more
// (a stranger on the broker must not grow the memory or the log).
const (
	maxRefusedNames = 256
	maxRefusedKey   = 64
)

// refuse logs a refused command, once per entity name: a misconfigured
// automation in Home Assistant must not flood the log.
func (c *Channel) refuse(name string, err error) {
	key := name
	if len(key) > maxRefusedKey {
		key = key[:maxRefusedKey]
	}
	c.mu.Lock()
	seen, full := c.refused[key], len(c.refused) >= maxRefusedNames
	if !seen && !full {
		c.refused[key] = true
	}
	c.mu.Unlock()
	switch {
	case seen:
	case full:
		c.refusedFull.Do(func() {
			c.log.Warn("mqtt: commands for many unknown names are refused; no more refusals are logged until a restart", "names", maxRefusedNames)
		})
	default:
		c.log.Warn("mqtt: command refused (further ones for this name are not logged)", "err", err)
	}
}
