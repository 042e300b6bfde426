package mqtttest

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// CheckDiscovery reads a discovery message the way Home Assistant's MQTT
// discovery does, from the facts in homeassistant.json (each list names the
// file of Home Assistant's source it was read from). It reports every
// problem at once: an error Home Assistant would refuse the entity for, a
// key it would drop without a word (unknown, or removed like object_id), a
// device class, unit or state class it would log against the entity, and
// availability payloads where Home Assistant does not read them.

//go:embed homeassistant.json
var factsJSON []byte

// Facts is homeassistant.json.
type Facts struct {
	CommonKeys            []string                  `json:"common_keys"`
	BaseKeys              []string                  `json:"base_keys"`
	AvailabilityModes     []string                  `json:"availability_modes"`
	AvailabilityEntryKeys []string                  `json:"availability_entry_keys"`
	DeviceKeys            []string                  `json:"device_keys"`
	OriginKeys            []string                  `json:"origin_keys"`
	RemovedKeys           map[string]string         `json:"removed_keys"`
	Components            map[string]ComponentFacts `json:"components"`
	StateClasses          []string                  `json:"state_classes"`
	SensorUnits           map[string][]string       `json:"sensor_units"`
	SensorStateClasses    map[string][]string       `json:"sensor_state_classes"`
	Sources               map[string]string         `json:"sources"`
}

// ComponentFacts is one component's schema.
type ComponentFacts struct {
	Required      []string `json:"required"`
	Keys          []string `json:"keys"`
	DeviceClasses []string `json:"device_classes"`
}

// HomeAssistant returns the facts CheckDiscovery uses.
func HomeAssistant() Facts {
	var f Facts
	if err := json.Unmarshal(factsJSON, &f); err != nil {
		panic("mqtttest: homeassistant.json: " + err.Error()) // a file of this package
	}
	return f
}

var discoveryTopic = regexp.MustCompile(`^([A-Za-z0-9_-]+)/([a-z_]+)/(?:([A-Za-z0-9_-]+)/)?([A-Za-z0-9_-]+)/config$`)

// objectIDRE is an entity id's object id as Home Assistant makes it (slugify).
var objectIDRE = regexp.MustCompile(`^[a-z0-9_]+$`)

// CheckDiscovery validates one discovery message and returns its component
// and decoded payload; err lists every problem found.
func CheckDiscovery(m Message) (component string, payload map[string]any, err error) {
	f := HomeAssistant()
	parts := discoveryTopic.FindStringSubmatch(m.Topic)
	if parts == nil {
		return "", nil, fmt.Errorf("%s is not a discovery topic (<prefix>/<component>/[<node_id>/]<object_id>/config)", m.Topic)
	}
	component = parts[2]
	cf, ok := f.Components[component]
	if !ok {
		return component, nil, fmt.Errorf("%s: component %q is not one this checker knows", m.Topic, component)
	}
	if err := json.Unmarshal([]byte(m.Payload), &payload); err != nil {
		return component, nil, fmt.Errorf("%s: payload is not a JSON object: %v", m.Topic, err)
	}
	var probs []string
	add := func(format string, args ...any) { probs = append(probs, fmt.Sprintf(format, args...)) }

	known := slices.Concat(f.CommonKeys, f.BaseKeys, cf.Keys)
	for _, k := range sortedKeys(payload) {
		switch {
		case f.RemovedKeys[k] != "":
			add("%s is no longer read by Home Assistant; use %s", k, f.RemovedKeys[k])
		case !slices.Contains(known, k):
			add("unknown key %s (Home Assistant drops it without a word)", k)
		}
	}
	for _, k := range append([]string{"unique_id", "device"}, cf.Required...) {
		if s, ok := payload[k]; !ok || s == "" || s == nil {
			add("missing %s", k)
		}
	}
	for _, k := range []string{"command_topic", "state_topic"} {
		if v, ok := payload[k]; ok {
			if s, isStr := v.(string); !isStr || s == "" || (k == "command_topic" && strings.ContainsAny(s, "+#")) {
				add("%s %v is not a topic one can %s", k, v, map[string]string{"command_topic": "publish to", "state_topic": "subscribe to"}[k])
			}
		}
	}
	if q, ok := payload["qos"]; ok {
		if n, isNum := q.(float64); !isNum || (n != 0 && n != 1 && n != 2) {
			add("qos %v is not 0, 1 or 2", q)
		}
	}
	checkDefaultEntityID(payload, component, add)
	checkAvailability(f, payload, add)
	checkDevice(f, payload, add)
	if cls, ok := payload["device_class"]; ok && cls != nil {
		s, _ := cls.(string)
		switch {
		case component == "sensor":
			checkSensor(f, payload, s, add)
		case !slices.Contains(cf.DeviceClasses, strings.ToLower(s)):
			// A switch's and a binary sensor's DEVICE_CLASSES_SCHEMA lowers
			// the class before looking it up (vol.Lower): Door is door.
			add("device_class %v is not a %s device class of Home Assistant", cls, component)
		}
	} else if component == "sensor" {
		checkSensor(f, payload, "", add)
	}
	if len(probs) > 0 {
		err = errors.New(m.Topic + ": " + strings.Join(probs, "; "))
	}
	return component, payload, err
}

func checkDefaultEntityID(p map[string]any, component string, add func(string, ...any)) {
	v, ok := p["default_entity_id"]
	if !ok {
		return
	}
	s, _ := v.(string)
	domain, object, found := strings.Cut(s, ".")
	if !found || domain != component || !objectIDRE.MatchString(object) {
		add("default_entity_id %v is not %s.<object id of a-z, 0-9 and _>", v, component)
	}
}

func checkAvailability(f Facts, p map[string]any, add func(string, ...any)) {
	list, hasList := p["availability"]
	if _, hasTopic := p["availability_topic"]; hasTopic && hasList {
		add("availability and availability_topic are exclusive")
	}
	if hasList {
		for _, k := range []string{"payload_available", "payload_not_available"} {
			if _, ok := p[k]; ok {
				add("%s at the top level is read only with availability_topic; with an availability list it belongs in each entry", k)
			}
		}
		entries, ok := list.([]any)
		if !ok || len(entries) == 0 {
			add("availability is not a list of entries")
		}
		for _, a := range entries {
			e, _ := a.(map[string]any)
			if e == nil {
				add("an availability entry is not an object")
				continue
			}
			if t, _ := e["topic"].(string); t == "" {
				add("an availability entry has no topic")
			}
			for _, k := range sortedKeys(e) {
				if !slices.Contains(f.AvailabilityEntryKeys, k) {
					add("unknown key %s in an availability entry", k)
				}
			}
		}
	}
	if m, ok := p["availability_mode"]; ok && !slices.Contains(f.AvailabilityModes, fmt.Sprint(m)) {
		add("availability_mode %v is not one of %s", m, strings.Join(f.AvailabilityModes, ", "))
	}
}

func checkDevice(f Facts, p map[string]any, add func(string, ...any)) {
	if d, ok := p["device"]; ok {
		dev, _ := d.(map[string]any)
		ids, _ := dev["identifiers"].([]any)
		conns, _ := dev["connections"].([]any)
		if len(ids) == 0 && len(conns) == 0 {
			add("device has neither identifiers nor connections")
		}
		for _, k := range sortedKeys(dev) {
			if !slices.Contains(f.DeviceKeys, k) {
				add("unknown key %s in device", k)
			}
		}
	}
	if o, ok := p["origin"]; ok {
		org, _ := o.(map[string]any)
		if n, _ := org["name"].(string); n == "" {
			add("origin has no name")
		}
		for _, k := range sortedKeys(org) {
			if !slices.Contains(f.OriginKeys, k) {
				add("unknown key %s in origin", k)
			}
		}
	}
}

// checkSensor applies what Home Assistant's sensor checks of a device
// class, a unit and a state class (validate_sensor_state_and_device_class_config
// and the sensor entity's checks against DEVICE_CLASS_UNITS and
// DEVICE_CLASS_STATE_CLASSES).
func checkSensor(f Facts, p map[string]any, dc string, add func(string, ...any)) {
	unit, _ := p["unit_of_measurement"].(string)
	sc, hasSC := p["state_class"].(string)
	if hasSC && !slices.Contains(f.StateClasses, sc) {
		add("state_class %q is not one of %s", sc, strings.Join(f.StateClasses, ", "))
	}
	if _, ok := p["options"]; ok && dc != "enum" {
		add("options is for device class enum only")
	}
	if dc == "" {
		return
	}
	units, known := f.SensorUnits[dc]
	if !known {
		add("device_class %q is not a sensor device class of Home Assistant", dc)
		return
	}
	if units != nil && !slices.Contains(units, unit) {
		add("unit_of_measurement %q is not one device class %s takes (%q)", unit, dc, units)
	}
	if hasSC && !slices.Contains(f.SensorStateClasses[dc], sc) {
		add("device class %s does not take state_class %s (it takes %q)", dc, sc, f.SensorStateClasses[dc])
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
