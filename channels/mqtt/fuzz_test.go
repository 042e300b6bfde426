package mqtt

import (
	"testing"

	"github.com/clawedge/clawedge/channels"
)

// FuzzSetMessage feeds arbitrary set messages (topic and payload come from the
// broker: outside input) to the translation into a command: it never panics,
// and whatever it accepts is one gpio/write of an exposed switch, which the
// command-language parser reads back.
func FuzzSetMessage(f *testing.F) {
	for _, s := range [][2]string{
		{"clawedge/garage/relay/set", "ON"}, {"clawedge/garage/relay/set", " OFF\n"},
		{"clawedge/garage/door/set", "ON"}, {"clawedge/garage/heater/set", "ON"},
		{"clawedge/garage/relay/set", "1"}, {"clawedge/garage/re\"lay/set", "ON"},
		{"clawedge/garage//set", "ON"}, {"clawedge/other/relay/set", "ON"}, {"clawedge/garage/relay", "ON"},
	} {
		f.Add(s[0], s[1])
	}
	c := &Channel{base: "clawedge/garage", entities: map[string]Entity{
		"relay": {Name: "relay", Kind: Switch}, "door": {Name: "door", Kind: BinarySensor},
		`re"lay`: {Name: `re"lay`, Kind: Switch},
	}}
	f.Fuzz(func(t *testing.T, topic, payload string) {
		name, line, err := c.commandFor(topic, payload)
		if err != nil {
			return
		}
		if e, ok := c.entities[name]; !ok || e.Kind != Switch {
			t.Fatalf("%q %q: accepted for %q, not an exposed switch", topic, payload, name)
		}
		cmd, err := channels.Parse(line, nil)
		if err != nil {
			t.Fatalf("%q %q: %q does not parse: %v", topic, payload, line, err)
		}
		calls := cmd.Stages[0].Calls
		if len(cmd.Stages) != 1 || len(calls) != 1 || calls[0].Tool() != "gpio/write" || calls[0].Params[0].Value.Str != name {
			t.Fatalf("%q %q: %q is not one gpio/write of %q", topic, payload, line, name)
		}
	})
}
