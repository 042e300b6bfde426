package mqtttest

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// The keys Home Assistant requires of a discovery config, from its
// documentation:
//
//   - https://www.home-assistant.io/integrations/mqtt/#mqtt-discovery — the
//     topic is <discovery_prefix>/<component>/[<node_id>/]<object_id>/config
//     (node_id and object_id: [a-zA-Z0-9_-]); an entity joins a device (the
//     device block) only with a unique_id; a device needs identifiers or
//     connections; each availability entry needs a topic.
//   - https://www.home-assistant.io/integrations/switch.mqtt/ — command_topic
//     is required.
//   - https://www.home-assistant.io/integrations/binary_sensor.mqtt/ —
//     state_topic is required.
//   - https://www.home-assistant.io/integrations/sensor.mqtt/ — state_topic is
//     required.
var requiredKeys = map[string][]string{
	"switch":        {"command_topic"},
	"binary_sensor": {"state_topic"},
	"sensor":        {"state_topic"},
}

var discoveryTopic = regexp.MustCompile(`^([A-Za-z0-9_-]+)/([a-z_]+)/(?:([A-Za-z0-9_-]+)/)?([A-Za-z0-9_-]+)/config$`)

// CheckDiscovery validates one discovery message as Home Assistant reads it
// and returns its component and decoded payload.
func CheckDiscovery(m Message) (component string, payload map[string]any, err error) {
	parts := discoveryTopic.FindStringSubmatch(m.Topic)
	if parts == nil {
		return "", nil, fmt.Errorf("%s is not a discovery topic (<prefix>/<component>/[<node_id>/]<object_id>/config)", m.Topic)
	}
	component = parts[2]
	required, ok := requiredKeys[component]
	if !ok {
		return component, nil, fmt.Errorf("%s: component %q is not one this test knows", m.Topic, component)
	}
	if err := json.Unmarshal([]byte(m.Payload), &payload); err != nil {
		return component, nil, fmt.Errorf("%s: payload is not a JSON object: %v", m.Topic, err)
	}
	var missing []string
	for _, k := range append([]string{"unique_id", "device"}, required...) {
		if s, ok := payload[k]; !ok || s == "" || s == nil {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return component, payload, fmt.Errorf("%s: missing %s", m.Topic, strings.Join(missing, ", "))
	}
	for _, k := range []string{"command_topic", "state_topic"} {
		if s, ok := payload[k].(string); ok && strings.ContainsAny(s, "+#") {
			return component, payload, fmt.Errorf("%s: %s %q has a wildcard", m.Topic, k, s)
		}
	}
	dev, _ := payload["device"].(map[string]any)
	ids, _ := dev["identifiers"].([]any)
	if len(ids) == 0 && dev["connections"] == nil {
		return component, payload, fmt.Errorf("%s: device has neither identifiers nor connections", m.Topic)
	}
	if av, ok := payload["availability"]; ok {
		list, _ := av.([]any)
		for _, a := range list {
			if e, _ := a.(map[string]any); e == nil || e["topic"] == nil {
				return component, payload, fmt.Errorf("%s: an availability entry has no topic", m.Topic)
			}
		}
	}
	return component, payload, nil
}
