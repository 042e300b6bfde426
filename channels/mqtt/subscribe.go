package mqtt

import (
	"context"

	paho "github.com/eclipse/paho.mqtt.golang"
)

// Subscriptions for automations (when: {mqtt: FILTER}). They are QoS 0: an
// event that happened while the board was offline is not delivered late (a
// doorbell from an hour ago must not ring now), and they are made again after
// every reconnect.

// subBuffer is how many payloads wait for a slow automation before the
// newest are dropped.
const subBuffer = 16

// Messages subscribes to a topic filter (wildcards allowed) and returns a
// function that blocks until the payload of the next message on it.
func (c *Channel) Messages(filter string) (func(ctx context.Context) (string, error), error) {
	ch := make(chan string, subBuffer)
	c.mu.Lock()
	if c.subs == nil {
		c.subs = map[string][]chan string{}
		c.behind = map[string]bool{}
	}
	first := len(c.subs[filter]) == 0
	c.subs[filter] = append(c.subs[filter], ch)
	c.mu.Unlock()
	if first && c.client.IsConnectionOpen() {
		c.subscribe(filter)
	}
	return func(ctx context.Context) (string, error) {
		select {
		case p := <-ch:
			return p, nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}, nil
}

// subscribe subscribes to filter with one handler that hands each payload to
// every automation on it (the client keeps one handler per filter).
func (c *Channel) subscribe(filter string) {
	t := c.client.Subscribe(filter, 0, func(_ paho.Client, m paho.Message) {
		// A filter that also matches this board's command topics leaves the
		// ack to handle, which stores the command first.
		if !c.isCommand(m.Topic()) {
			m.Ack()
		}
		c.mu.Lock()
		chans := c.subs[filter]
		c.mu.Unlock()
		dropped := false
		for _, ch := range chans {
			select {
			case ch <- string(m.Payload()):
			default:
				dropped = true
			}
		}
		// Logged when an automation falls behind, not at every message
		// dropped: a flood on the topic must not flood the log too.
		c.mu.Lock()
		first := dropped && !c.behind[filter]
		if dropped {
			c.behind[filter] = true
		} else {
			delete(c.behind, filter)
		}
		c.mu.Unlock()
		if first {
			c.log.Warn("mqtt: an automation is behind; messages are dropped until it catches up", "filter", filter, "topic", m.Topic())
		}
	})
	go func() {
		if t.WaitTimeout(defaultWait) && t.Error() != nil {
			c.log.Warn("mqtt: subscribing for an automation failed; reconnecting will retry", "filter", filter, "err", t.Error())
		}
	}()
}

// resubscribe makes the automations' subscriptions again after a connect.
func (c *Channel) resubscribe() {
	c.mu.Lock()
	filters := make([]string, 0, len(c.subs))
	for f := range c.subs {
		filters = append(filters, f)
	}
	c.mu.Unlock()
	for _, f := range filters {
		c.subscribe(f)
	}
}
