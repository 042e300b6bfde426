package mqtt

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/tools"
)

// PublishTool is mqtt/publish{topic=...;payload=...;retain=...}: a command — a
// person's, an automation's do, the agent's where policy allows it — sends a
// message through the board's broker connection, to reach the rest of a home
// (another device's set topic). It is registered with the other tools when
// mqtt: is configured, and works once Bind gives it the running channel.
type PublishTool struct{ ch atomic.Pointer[Channel] }

// Bind sets the channel the tool publishes through (nil: none).
func (p *PublishTool) Bind(c *Channel) { p.ch.Store(c) }

// Spec describes the tool.
func (p *PublishTool) Spec() grammar.ToolSpec {
	return grammar.ToolSpec{Name: "mqtt/publish", Doc: "Publish a message to the MQTT broker (QoS 1).", Params: []grammar.ArgSpec{
		{Name: "topic", Doc: "the topic, without wildcards", Type: grammar.TypeString, Required: true, MaxLen: 256},
		{Name: "payload", Doc: "the message", Type: grammar.TypeString, MaxLen: 4096, Default: ""},
		{Name: "retain", Doc: "keep it as the topic's last message", Type: grammar.TypeBoolean, Default: false},
	}}
}

// Run publishes and waits for the broker's acknowledgement.
func (p *PublishTool) Run(_ context.Context, a grammar.Args) (tools.Result, error) {
	topic := a.String("topic")
	if err := CheckTopic(topic); err != nil {
		return tools.Result{}, err
	}
	c := p.ch.Load()
	if c == nil || !c.client.IsConnectionOpen() {
		return tools.Result{}, errors.New("not connected to the MQTT broker")
	}
	t := c.client.Publish(topic, 1, a.Bool("retain"), a.String("payload"))
	if !t.WaitTimeout(defaultWait) {
		return tools.Result{}, fmt.Errorf("no acknowledgement from the broker in %s", defaultWait)
	}
	if err := t.Error(); err != nil {
		return tools.Result{}, err
	}
	return tools.Result{Text: "published to " + topic}, nil
}

// CheckTopic accepts a topic a message may be published to: not empty, no
// wildcards (+ #), no NUL, not a broker's $SYS topic.
func CheckTopic(topic string) error {
	switch {
	case topic == "":
		return errors.New("topic: empty")
	case strings.ContainsAny(topic, "+#\x00"):
		return fmt.Errorf("topic %q: wildcards (+ #) and NUL are not allowed in a published topic", topic)
	case strings.HasPrefix(topic, "$"):
		return fmt.Errorf("topic %q: topics starting with $ belong to the broker", topic)
	}
	return nil
}
