package config

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/goccy/go-yaml/ast"
)

// The MQTT channel: the board's pins and sensors in Home Assistant
// (docs/home-assistant.md).
//
//	mqtt:
//	  broker: mqtts://192.168.1.5:8883   # mqtt:// or mqtts://
//	  ca_file: /etc/clawedge/ca.pem      # mqtts only; default: the system roots
//	  username: clawedge
//	  password: ${MQTT_PASSWORD}         # a secret: never logged
//	  client_id: clawedge-garage         # default: clawedge-<hostname>
//	  discovery: {prefix: homeassistant, node: garage}
//	  expose: [relay, led, button, freezer]
//	  device_classes: {button: door, relay: outlet}  # Home Assistant's, per exposed pin
//	  sensors:
//	    freezer: {read: '@i2c/read{bus="main";addr=0x48;reg=0;n=1}', every: 1m, unit: "°C", device_class: temperature}
//
// The section is off while absent. Decoding, validation and the Redacted
// writer of the section are all in this file.

// MQTT connects the board to a broker, and through it to Home Assistant.
type MQTT struct {
	// Broker is mqtt://host[:1883] or mqtts://host[:8883].
	Broker string `yaml:"broker"`
	// CAFile is a PEM file of the CAs that may sign an mqtts broker's
	// certificate; empty means the system's roots.
	CAFile   string `yaml:"ca_file"`
	Username string `yaml:"username"`
	Password Secret `yaml:"password"`
	// ClientID is the MQTT session's name; empty means "clawedge-" and the
	// host name. It must stay stable: the broker keeps the session's queued
	// commands under it while the board is offline.
	ClientID  string        `yaml:"client_id"`
	Discovery MQTTDiscovery `yaml:"discovery"`
	// Expose lists the pins and sensors published; nil means every
	// configured pin and sensor.
	Expose []string `yaml:"expose"`
	// DeviceClasses gives exposed pins a Home Assistant device class, by
	// pin name: an input's is one of binary_sensor's (door, motion...), an
	// output's one of switch's (outlet, switch). A pin without one is
	// published without. Sensors have their own (MQTTSensor.DeviceClass).
	DeviceClasses map[string]string     `yaml:"device_classes"`
	Sensors       map[string]MQTTSensor `yaml:"sensors"`
}

// MQTTDiscovery is Home Assistant's MQTT discovery: retained entity configs
// under Prefix.
type MQTTDiscovery struct {
	// Enabled is true unless the file says false.
	Enabled bool   `yaml:"enabled"`
	Prefix  string `yaml:"prefix"`
	// Node names this board in topics and in Home Assistant; empty means
	// the host name.
	Node string `yaml:"node"`
}

// MQTTSensor is a value read by a command at an interval and published as
// a Home Assistant sensor.
type MQTTSensor struct {
	// Read is a command-language line whose result is a number: its text, or
	// the result field named by Field.
	Read  string   `yaml:"read"`
	Field string   `yaml:"field"`
	Every Duration `yaml:"every"`
	// Unit and DeviceClass are Home Assistant's unit_of_measurement and
	// device_class ("°C", temperature), checked against Home Assistant's
	// lists (homeassistant.go).
	Unit        string `yaml:"unit"`
	DeviceClass string `yaml:"device_class"`
	// StateClass is Home Assistant's state_class: measurement, total,
	// total_increasing or none (sent without one). Unset, it is
	// DefaultStateClass of the device class; SensorStateClass resolves it.
	StateClass string `yaml:"state_class"`
}

// SensorStateClass is the state_class s is published with ("" for none).
func (s MQTTSensor) SensorStateClass() string {
	switch s.StateClass {
	case "":
		return DefaultStateClass(s.DeviceClass)
	case "none":
		return ""
	}
	return s.StateClass
}

var (
	mqttKeys          = []string{"broker", "ca_file", "username", "password", "client_id", "discovery", "expose", "device_classes", "sensors"}
	mqttDiscoveryKeys = []string{"enabled", "prefix", "node"}
	mqttSensorKeys    = []string{"read", "field", "every", "unit", "device_class", "state_class"}
	// topicWordRE is what a discovery prefix or node id may be: Home
	// Assistant accepts [a-zA-Z0-9_-] in a node_id, and a topic level must
	// not hold the wildcards + and #.
	// The lengths are checked apart (shortRE).
	topicWordRE = shortRE{regexp.MustCompile(`^[A-Za-z0-9_-]+$`), 64}
)

const (
	defaultDiscoveryPrefix = "homeassistant"
	defaultSensorEvery     = Duration(time.Minute)
)

func (d *decoder) mqtt(n ast.Node, dst **MQTT) {
	if isNull(d.resolveQuiet(n)) {
		return
	}
	m := &MQTT{Discovery: MQTTDiscovery{Enabled: true, Prefix: defaultDiscoveryPrefix}}
	d.fields(n, "mqtt", mqttKeys, func(k string, v ast.Node) {
		kp := "mqtt." + k
		switch k {
		case "broker":
			d.str(v, kp, &m.Broker)
		case "ca_file":
			d.str(v, kp, &m.CAFile)
		case "username":
			d.str(v, kp, &m.Username)
		case "password":
			d.secret(v, kp, &m.Password)
		case "client_id":
			d.str(v, kp, &m.ClientID)
		case "discovery":
			d.fields(v, kp, mqttDiscoveryKeys, func(k string, v ast.Node) {
				switch k {
				case "enabled":
					d.boolean(v, kp+".enabled", &m.Discovery.Enabled)
				case "prefix":
					d.str(v, kp+".prefix", &m.Discovery.Prefix)
				case "node":
					d.str(v, kp+".node", &m.Discovery.Node)
				}
			})
		case "expose":
			list := []string{}
			if d.items(v, kp, func(i int, v ast.Node) {
				var s string
				d.str(v, fmt.Sprintf("%s[%d]", kp, i), &s)
				list = append(list, s)
			}) {
				m.Expose = list
			}
		case "device_classes":
			classes := map[string]string{}
			if d.entries(v, kp, func(name string, v ast.Node) {
				var class string
				d.str(v, kp+"."+name, &class)
				if d.has(kp + "." + name) { // null is unset, as everywhere: no class
					classes[name] = class
				}
			}) {
				m.DeviceClasses = nilIfEmpty(classes)
			}
		case "sensors":
			list := map[string]MQTTSensor{}
			if d.entries(v, kp, func(name string, v ast.Node) {
				s := MQTTSensor{Every: defaultSensorEvery}
				sp := kp + "." + name
				d.fields(v, sp, mqttSensorKeys, func(k string, v ast.Node) {
					switch k {
					case "read":
						d.str(v, sp+".read", &s.Read)
					case "field":
						d.str(v, sp+".field", &s.Field)
					case "every":
						d.duration(v, sp+".every", &s.Every)
					case "unit":
						d.str(v, sp+".unit", &s.Unit)
					case "device_class":
						d.str(v, sp+".device_class", &s.DeviceClass)
					case "state_class":
						d.str(v, sp+".state_class", &s.StateClass)
					}
				})
				list[name] = s
			}) {
				m.Sensors = nilIfEmpty(list)
			}
		}
	})
	*dst = m
}

// validateMQTT checks the mqtt section against the board it exposes.
func (d *decoder) validateMQTT(c *Config) {
	m := c.MQTT
	if m == nil {
		return
	}
	u, err := url.Parse(m.Broker)
	switch {
	case m.Broker == "":
		d.missing("mqtt.broker", " (mqtt://host:1883 or mqtts://host:8883)")
	case err != nil || (u.Scheme != "mqtt" && u.Scheme != "mqtts") || u.Hostname() == "" || u.Opaque != "" ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "":
		d.errf("mqtt.broker", "must be mqtt://host[:port] or mqtts://host[:port], found %s", d.quote("mqtt.broker", m.Broker))
	case u.User != nil:
		d.errf("mqtt.broker", "must not carry credentials (user:password@): URLs are logged; use username and password")
	case u.Port() != "":
		if p, err := strconv.Atoi(u.Port()); err != nil || p < 1 || p > 65535 {
			d.errf("mqtt.broker", "port %s is not from 1 to 65535", u.Port())
		}
	}
	if m.CAFile != "" && err == nil && u.Scheme != "mqtts" {
		d.errf("mqtt.ca_file", "applies to mqtts:// brokers only (the broker is %s)", u.Scheme)
	}
	if m.Password != "" && m.Username == "" {
		d.errf("mqtt.password", "needs a username")
	}
	if len(m.ClientID) > 128 || strings.ContainsFunc(m.ClientID, func(r rune) bool { return !unicode.IsPrint(r) || r == ' ' }) {
		d.errf("mqtt.client_id", "must be at most 128 printable characters without spaces")
	}
	if !topicWordRE.MatchString(m.Discovery.Prefix) {
		d.errf("mqtt.discovery.prefix", "%s must be 1 to 64 letters, digits, _ and - (a topic level; Home Assistant's default is homeassistant)", d.quote("mqtt.discovery.prefix", m.Discovery.Prefix))
	}
	if m.Discovery.Node != "" && !topicWordRE.MatchString(m.Discovery.Node) {
		d.errf("mqtt.discovery.node", "%s must be 1 to 64 letters, digits, _ and - (Home Assistant's node_id)", d.quote("mqtt.discovery.node", m.Discovery.Node))
	}
	for _, name := range byPosition(d, "mqtt.sensors.", m.Sensors) {
		path := "mqtt.sensors." + name
		s := m.Sensors[name]
		d.checkName("mqtt.sensors", name, "sensor")
		if _, ok := c.Board.Pins[name]; ok {
			d.add(d.keyAt(path), "%s: a pin is already called %q; Home Assistant would get two entities of one name", path, name)
		}
		if t := strings.TrimSpace(s.Read); t == "" {
			d.missing(path+".read", " (a command whose result is a number, such as @i2c/read{...})")
		} else if !strings.HasPrefix(t, "@") {
			d.errf(path+".read", "must be a command such as @i2c/read{bus=\"main\";addr=0x48;reg=0;n=1}")
		}
		if s.Every < Duration(time.Second) {
			d.errf(path+".every", "must be at least 1s, found %s", s.Every)
		}
		if len(s.Unit) > 16 {
			d.errf(path+".unit", "must be at most 16 bytes (°C, %%, hPa...)")
		}
		d.validateSensorClasses(path, s)
	}
	seen := map[string]bool{}
	for i, name := range m.Expose {
		path := fmt.Sprintf("mqtt.expose[%d]", i)
		p, isPin := c.Board.Pins[name]
		_, isSensor := m.Sensors[name]
		switch {
		case seen[name]:
			d.errf(path, "%s is listed twice", d.quote(path, name))
		case !isPin && !isSensor:
			d.errf(path, "%s is not a configured pin or mqtt sensor (pins: %s)", d.quote(path, name), strings.Join(sortedKeys(c.Board.Pins), ", "))
		case isPin && p.Mode == "in" && (p.Edge == "" || p.Edge == "none"):
			d.errf(path, "input pin %q has no edge detection, so its changes cannot be published; set edge: both on board.pins.%s", name, name)
		}
		seen[name] = true
	}
	d.validatePinClasses(c)
}

// validatePinClasses checks mqtt.device_classes: each name is a pin that is
// published, and its class is one Home Assistant takes for the entity the
// pin becomes (a class Home Assistant does not know for it makes it refuse
// the whole entity): binary_sensor's for an input, switch's for an output.
func (d *decoder) validatePinClasses(c *Config) {
	m := c.MQTT
	for _, name := range byPosition(d, "mqtt.device_classes.", m.DeviceClasses) {
		path := "mqtt.device_classes." + name
		class := m.DeviceClasses[name]
		p, isPin := c.Board.Pins[name]
		_, isSensor := m.Sensors[name]
		exposed := m.Expose == nil || slices.Contains(m.Expose, name)
		switch {
		case isSensor:
			d.add(d.keyAt(path), "%s: %q is an mqtt sensor; give it device_class in mqtt.sensors.%s", path, name, name)
			continue
		case !isPin:
			d.add(d.keyAt(path), "%s: %q is not a configured pin (pins: %s)", path, name, strings.Join(sortedKeys(c.Board.Pins), ", "))
			continue
		case !exposed:
			d.add(d.keyAt(path), "%s: pin %q is not in mqtt.expose, so Home Assistant never sees it", path, name)
			continue
		case p.Mode == "in" && p.Edge != "both" && !(m.Expose != nil && (p.Edge == "" || p.Edge == "none")):
			// An input listed in expose without any edge detection has its
			// error at expose already; one detecting a single edge passes
			// expose but is not published either.
			d.add(d.keyAt(path), "%s: input pin %q is not published: it does not detect both edges (set edge: both on board.pins.%s)", path, name, name)
			continue
		}
		component, classes, other, otherClasses := "switch", HASwitchDeviceClasses, "binary_sensor", HABinarySensorDeviceClasses
		if p.Mode == "in" {
			component, classes, other, otherClasses = other, otherClasses, component, classes
		}
		if class == "" {
			// At the pin's name: an empty or null value has no column of its own.
			d.add(d.keyAt(path), "%s: is empty: give %s one of the %s device classes (%s) or leave it out", path, name, component, alternatives(classes))
			continue
		}
		if slices.Contains(otherClasses, class) && !slices.Contains(classes, class) {
			d.errf(path, "%s is a %s device class, and %s is %s pin, a %s in Home Assistant: %s",
				class, other, name, map[string]string{"in": "an input", "out": "an output"}[p.Mode], component, alternatives(classes))
			continue
		}
		d.knownDeviceClass(path, component, class, classes)
	}
}

// validateSensorClasses checks a sensor's device class, unit and state
// class against what Home Assistant accepts (homeassistant.go): an unknown
// device class names the nearest known one, a unit or state class the class
// does not take lists the ones it does.
func (d *decoder) validateSensorClasses(path string, s MQTTSensor) {
	dc := s.DeviceClass
	if dc != "" && !d.knownDeviceClass(path+".device_class", "sensor", dc, sortedKeys(HASensorUnits)) {
		return
	}
	units := HASensorUnits[dc]
	if slices.Contains(haTextClasses, dc) {
		d.errf(path+".device_class", "%s is for a sensor whose state is text; an mqtt sensor publishes the number its read returns", dc)
		return
	}
	if dc != "" && units != nil && !slices.Contains(units, s.Unit) {
		where := path + ".unit"
		if s.Unit == "" {
			where = path + ".device_class"
		}
		if slices.Equal(units, []string{haNoUnit}) {
			d.errf(where, "device class %s takes no unit in Home Assistant, found %s", dc, d.quote(path+".unit", s.Unit))
		} else {
			d.errf(where, "device class %s takes one of these units in Home Assistant: %s (found %s)", dc, unitList(units), d.quote(path+".unit", s.Unit))
		}
	}
	switch sc := s.StateClass; {
	case sc == "" || sc == "none":
	case !slices.Contains(HAStateClasses, sc):
		d.errf(path+".state_class", "%s is not a state class: measurement, total, total_increasing or none", d.quote(path+".state_class", sc))
	case dc != "" && !slices.Contains(HASensorStateClasses[dc], sc):
		allowed := append(slices.Clone(HASensorStateClasses[dc]), "none")
		d.errf(path+".state_class", "device class %s takes state class %s in Home Assistant, not %s", dc, strings.Join(allowed, " or "), sc)
	}
}

// secretValues are the mqtt section's secret values, scrubbed from the rest
// of the Redacted output.
func (m *MQTT) secretValues() []string {
	if m == nil {
		return nil
	}
	return []string{m.Password.Reveal()}
}

// writeMQTT writes the mqtt section for Redacted.
func (c *Config) writeMQTT(w *writer) {
	m := c.MQTT
	if m == nil {
		return
	}
	w.key(0, "mqtt")
	w.kv(1, "broker", w.str(m.Broker))
	w.kvOmit(1, "ca_file", m.CAFile)
	w.kvOmit(1, "username", m.Username)
	if m.Password != "" {
		w.kv(1, "password", yamlString(m.Password.String()))
	}
	w.kvOmit(1, "client_id", m.ClientID)
	w.key(1, "discovery")
	w.kv(2, "enabled", strconv.FormatBool(m.Discovery.Enabled))
	w.kv(2, "prefix", w.str(m.Discovery.Prefix))
	w.kvOmit(2, "node", m.Discovery.Node)
	if m.Expose != nil {
		if len(m.Expose) == 0 {
			w.kv(1, "expose", "[]")
		} else {
			w.key(1, "expose")
			for _, e := range m.Expose {
				w.item(2, w.str(e))
			}
		}
	}
	if len(m.DeviceClasses) > 0 {
		w.key(1, "device_classes")
		for _, name := range sortedKeys(m.DeviceClasses) {
			w.kv(2, yamlKey(name), w.str(m.DeviceClasses[name]))
		}
	}
	if len(m.Sensors) > 0 {
		w.key(1, "sensors")
		for _, name := range sortedKeys(m.Sensors) {
			s := m.Sensors[name]
			w.key(2, yamlKey(name))
			w.kv(3, "read", w.str(s.Read))
			w.kvOmit(3, "field", s.Field)
			w.kv(3, "every", s.Every.String())
			w.kvOmit(3, "unit", s.Unit)
			w.kvOmit(3, "device_class", s.DeviceClass)
			w.kvOmit(3, "state_class", s.StateClass)
		}
	}
}

// CheckTopicFilter accepts an MQTT topic filter (MQTT 3.1.1, 4.7): not empty,
// at most 256 bytes, no NUL; + stands for a whole level, # for the rest and
// only as the last level.
func CheckTopicFilter(f string) error {
	if f == "" || len(f) > 256 || strings.ContainsRune(f, 0) {
		return fmt.Errorf("a topic filter is 1 to 256 bytes without NUL")
	}
	levels := strings.Split(f, "/")
	for i, l := range levels {
		switch {
		case l == "#" && i != len(levels)-1:
			return fmt.Errorf("# must be the last level")
		case l != "#" && l != "+" && strings.ContainsAny(l, "+#"):
			return fmt.Errorf("+ and # must stand alone in a level (home/+/temp, home/#)")
		}
	}
	return nil
}
