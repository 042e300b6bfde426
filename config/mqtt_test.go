package config

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// issue15 is the issue's example with the pins and the sensor it names.
const issue15 = `board:
  pins:
    relay:  {gpio: 22, mode: out}
    led:    {gpio: 17, mode: out}
    button: {gpio: 27, mode: in, edge: both}
  buses:
    main: {i2c: "1"}
mqtt:
  broker: mqtts://192.168.1.5:8883
  ca_file: /etc/clawedge/ca.pem
  username: clawedge
  password: ${MQTT_PASSWORD}               # a secret: never logged
  client_id: clawedge-garage
  discovery: {prefix: homeassistant, node: garage}
  expose: [relay, led, button, freezer]
  sensors:
    freezer: {read: '@i2c/read{bus="main";addr=0x48;reg=0;n=1}', every: 30s, unit: "°C", device_class: temperature}
    meter: {read: '@i2c/read{bus="main";addr=0x40;reg=2;n=4}', unit: kWh, device_class: energy, state_class: total_increasing}
`

const mqttPassword = "hunter2-mqtt-password"

func TestMQTTIssueExample(t *testing.T) {
	c, err := Parse([]byte(issue15), "m.yaml", envFrom(map[string]string{"MQTT_PASSWORD": mqttPassword}))
	if err != nil {
		t.Fatal(err)
	}
	want := &MQTT{Broker: "mqtts://192.168.1.5:8883", CAFile: "/etc/clawedge/ca.pem", Username: "clawedge",
		Password: mqttPassword, ClientID: "clawedge-garage",
		Discovery: MQTTDiscovery{Enabled: true, Prefix: "homeassistant", Node: "garage"},
		Expose:    []string{"relay", "led", "button", "freezer"},
		Sensors: map[string]MQTTSensor{"freezer": {Read: `@i2c/read{bus="main";addr=0x48;reg=0;n=1}`,
			Every: Duration(30 * time.Second), Unit: "°C", DeviceClass: "temperature"},
			"meter": {Read: `@i2c/read{bus="main";addr=0x40;reg=2;n=4}`, Every: Duration(time.Minute), Unit: "kWh",
				DeviceClass: "energy", StateClass: "total_increasing"}}}
	if !reflect.DeepEqual(c.MQTT, want) {
		t.Errorf("mqtt = %+v\nwant %+v", c.MQTT, want)
	}
	out, _ := c.Redacted()
	if strings.Contains(string(out), mqttPassword) || !strings.Contains(string(out), `password: "[redacted]"`) {
		t.Errorf("redacted output:\n%s", out)
	}
	again := strings.ReplaceAll(string(out), `password: "[redacted]"`, `password: ${MQTT_PASSWORD}`)
	c2, err := Parse([]byte(again), "m.yaml", envFrom(map[string]string{"MQTT_PASSWORD": mqttPassword}))
	if err != nil {
		t.Fatalf("redacted output does not parse: %v\n%s", err, out)
	}
	if !reflect.DeepEqual(c, c2) {
		t.Errorf("round trip changed the config\n%+v\n%+v\n%s", c.MQTT, c2.MQTT, out)
	}
}

func TestMQTTDefaults(t *testing.T) {
	c := mustParse(t, "mqtt: {broker: mqtt://localhost}\n")
	if m := c.MQTT; m == nil || !m.Discovery.Enabled || m.Discovery.Prefix != "homeassistant" || m.Expose != nil || m.ClientID != "" {
		t.Errorf("defaults: %+v", m)
	}
	if c := mustParse(t, ""); c.MQTT != nil {
		t.Errorf("mqtt is on without a section: %+v", c.MQTT)
	}
	c = mustParse(t, "mqtt: {broker: mqtt://h, expose: [], discovery: {enabled: false}}\n")
	if c.MQTT.Expose == nil || len(c.MQTT.Expose) != 0 || c.MQTT.Discovery.Enabled {
		t.Errorf("expose: [] must expose nothing, discovery off: %+v", c.MQTT)
	}
	out, _ := c.Redacted()
	if c2 := mustParse(t, string(out)); !reflect.DeepEqual(c, c2) {
		t.Errorf("round trip:\n%s", out)
	}
}

func TestMQTTErrors(t *testing.T) {
	const b = "mqtt:\n  broker: mqtt://h\n"
	for _, tc := range []struct{ src, at, msg string }{
		{"mqtt: {username: u}\n", "mqtt", "mqtt: broker is required"},
		{"mqtt: {broker: http://h}\n", "http", "must be mqtt://host[:port] or mqtts://host[:port]"},
		{"mqtt: {broker: \"mqtt://u:secretpw@h\"}\n", "\"mqtt", "must not carry credentials"},
		{"mqtt: {broker: mqtt://h:70000}\n", "mqtt://h:70000", "port 70000"},
		{"mqtt: {broker: mqtt://h, ca_file: /x}\n", "/x", "applies to mqtts:// brokers only"},
		{"mqtt: {broker: mqtt://h, password: pw12345}\n", "pw12345", "needs a username"},
		{b + "  discovery: {prefix: \"home/#\"}\n", "\"home", "must be 1 to 64 letters"},
		{b + "  expose: [nope]\n", "nope", `"nope" is not a configured pin or mqtt sensor`},
		{b + "  expose: [led, led]\n", "led]", "listed twice"},
		{"board:\n  pins:\n    b: {gpio: 27, mode: in}\n" + b + "  expose: [b]\n", "b]", "has no edge detection"},
		{b + "  sensors:\n    t: {every: 1m}\n", "t: {", "read is required"},
		{b + "  sensors:\n    t: {read: 'i2c read', every: 1m}\n", "'i2c", "must be a command"},
		{b + "  sensors:\n    t: {read: '@x/y{}', every: 10ms}\n", "10ms", "at least 1s"},
		{b + "  sensors:\n    led: {read: '@x/y{}'}\n", "led:", "a pin is already called"},
		{b + "  sensors:\n    t: {read: '@x/y{}', device_class: Temp, unit: °C}\n", "Temp", `"Temp" is not a Home Assistant sensor device class; did you mean temperature?`},
		{b + "  sensors:\n    t: {read: '@x/y{}', device_class: temprature, unit: °C}\n", "temprature", "did you mean temperature?"},
		{b + "  sensors:\n    t: {read: '@x/y{}', device_class: humidty, unit: \"%\"}\n", "humidty", "did you mean humidity?"},
		{b + "  sensors:\n    t: {read: '@x/y{}', device_class: temperature, unit: C}\n", "C}", "device class temperature takes one of these units in Home Assistant: °C, °F, K (found \"C\")"},
		{b + "  sensors:\n    t: {read: '@x/y{}', device_class: temperature}\n", "temperature", "takes one of these units"},
		{b + "  sensors:\n    t: {read: '@x/y{}', device_class: timestamp}\n", "timestamp", "timestamp is for a sensor whose state is text"},
		{b + "  sensors:\n    t: {read: '@x/y{}', device_class: ph, unit: pH}\n", "pH}", "device class ph takes no unit in Home Assistant"},
		{b + "  sensors:\n    t: {read: '@x/y{}', device_class: energy, unit: kWh, state_class: measurement}\n", "measurement", "device class energy takes state class total or total_increasing or none in Home Assistant, not measurement"},
		{b + "  sensors:\n    t: {read: '@x/y{}', state_class: average}\n", "average", "is not a state class"},
		{b + "  brokr: x\n", "brokr", `unknown key "brokr" in mqtt`},
	} {
		problemAt(t, tc.src, tc.at, tc.msg)
	}
}

func TestMQTTTrigger(t *testing.T) {
	const b = "mqtt: {broker: mqtt://h}\n"
	c := mustParse(t, b+"automations:\n  btn: {when: {mqtt: \"zigbee2mqtt/+/action\", match: \"^single$\"}, do: '@gpio/toggle{pin=\"led\"}'}\n")
	if w := c.Automations["btn"].When; w.MQTT != "zigbee2mqtt/+/action" || w.Match != "^single$" || w.Kind() != "mqtt" {
		t.Errorf("trigger = %+v", w)
	}
	out, _ := c.Redacted()
	if c2 := mustParse(t, string(out)); !reflect.DeepEqual(c, c2) {
		t.Errorf("round trip:\n%s", out)
	}
	for _, tc := range []struct{ src, at, msg string }{
		{"automations:\n  a: {when: {mqtt: x/y}, notify: x}\n", "x/y", "needs an mqtt: section"},
		{b + "automations:\n  a: {when: {mqtt: \"a/#/b\"}, notify: x}\n", `"a/#/b"`, "# must be the last level"},
		{b + "automations:\n  a: {when: {mqtt: \"a/b+\"}, notify: x}\n", `"a/b+"`, "must stand alone in a level"},
		{b + "automations:\n  a: {when: {mqtt: a, match: \"(\"}, notify: x}\n", `"("`, "is not a regular expression"},
		{b + "automations:\n  a: {when: {mqtt: a, edge: rising}, notify: x}\n", "rising", "does not apply to a mqtt trigger"},
	} {
		problemAt(t, tc.src, tc.at, tc.msg)
	}
}
