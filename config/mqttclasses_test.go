package config

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// pinClasses is a board with one pin of each kind and the mqtt section that
// gives them device classes.
const pinClasses = `board:
  pins:
    relay:  {gpio: 22, mode: out}
    led:    {gpio: 17, mode: out}
    button: {gpio: 27, mode: in, edge: both}
    door:   {gpio: 5, mode: in, edge: rising}
mqtt:
  broker: mqtt://h
`

// TestMQTTDeviceClasses: a pin's class is decoded as written, pins without
// one have none, and the Redacted output reads back to the same config.
func TestMQTTDeviceClasses(t *testing.T) {
	c := mustParse(t, pinClasses+"  expose: [relay, led, button]\n  device_classes: {button: door, relay: outlet}\n")
	if want := map[string]string{"button": "door", "relay": "outlet"}; !reflect.DeepEqual(c.MQTT.DeviceClasses, want) {
		t.Errorf("device_classes = %q, want %q", c.MQTT.DeviceClasses, want)
	}
	out, err := c.Redacted()
	if err != nil {
		t.Fatal(err)
	}
	if c2 := mustParse(t, string(out)); !reflect.DeepEqual(c.MQTT, c2.MQTT) {
		t.Errorf("round trip changed mqtt:\n%+v\n%+v\n%s", c.MQTT, c2.MQTT, out)
	}
	// Every class of both lists is taken by a pin of its kind, with expose
	// left out (every pin published).
	for _, class := range HABinarySensorDeviceClasses {
		mustParse(t, pinClasses+"  device_classes: {button: "+class+"}\n")
	}
	for _, class := range HASwitchDeviceClasses {
		mustParse(t, pinClasses+"  device_classes: {led: "+class+"}\n")
	}
	// Null is unset, as everywhere in the file: the pin has no class.
	for _, src := range []string{pinClasses, pinClasses + "  device_classes: {relay: ~}\n", pinClasses + "  device_classes: ~\n"} {
		if c := mustParse(t, src); c.MQTT.DeviceClasses != nil {
			t.Errorf("%s: device_classes %q, want none", src, c.MQTT.DeviceClasses)
		}
	}
}

// TestMQTTDeviceClassErrors: each refusal, with its exact message, at the
// line and column of the pin name or of the class.
func TestMQTTDeviceClassErrors(t *testing.T) {
	for _, tc := range []struct{ src, at, msg string }{
		{"  device_classes: {button: dor}\n", "dor",
			`mqtt.device_classes.button: "dor" is not a Home Assistant binary_sensor device class; did you mean door?`},
		{"  device_classes: {button: mot}\n", "mot",
			`mqtt.device_classes.button: "mot" is not a Home Assistant binary_sensor device class; did you mean motion?`},
		{"  device_classes: {button: Door}\n", "Door",
			`mqtt.device_classes.button: "Door" is not a Home Assistant binary_sensor device class; did you mean door?`},
		{"  device_classes: {relay: outlett}\n", "outlett",
			`mqtt.device_classes.relay: "outlett" is not a Home Assistant switch device class; did you mean outlet?`},
		{"  device_classes: {relay: door}\n", "door}",
			"mqtt.device_classes.relay: door is a binary_sensor device class, and relay is an output pin, a switch in Home Assistant: outlet or switch"},
		{"  device_classes: {button: outlet}\n", "outlet",
			"mqtt.device_classes.button: outlet is a switch device class, and button is an input pin, a binary_sensor in Home Assistant: " +
				alternatives(HABinarySensorDeviceClasses)},
		{"  device_classes: {relay: " + strings.Repeat("a", 40) + "}\n", "aaaa",
			"mqtt.device_classes.relay: is not a Home Assistant switch device class (outlet, switch, ...)"},
		{"  device_classes: {nope: door}\n", "nope",
			`mqtt.device_classes.nope: "nope" is not a configured pin (pins: button, door, led, relay)`},
		{"  expose: [relay]\n  device_classes: {button: door}\n", "{^button: door",
			`mqtt.device_classes.button: pin "button" is not in mqtt.expose, so Home Assistant never sees it`},
		{"  device_classes: {door: door}\n", "{^door: door",
			`mqtt.device_classes.door: input pin "door" is not published: it does not detect both edges (set edge: both on board.pins.door)`},
		{"  expose: [door]\n  device_classes: {door: door}\n", "{^door: door",
			`mqtt.device_classes.door: input pin "door" is not published: it does not detect both edges (set edge: both on board.pins.door)`},
		{"  device_classes: {relay: \"\"}\n", `{^relay: ""`,
			"mqtt.device_classes.relay: is empty: give relay one of the switch device classes (outlet or switch) or leave it out"},
		{"  sensors:\n    t: {read: '@x/y{}'}\n  device_classes: {t: door}\n", "t: door",
			`mqtt.device_classes.t: "t" is an mqtt sensor; give it device_class in mqtt.sensors.t`},
		{"  device_classes: [button]\n", "[button]",
			"mqtt.device_classes: expected a mapping of names, found a list"},
	} {
		src := pinClasses + tc.src
		line, col := posOf(t, src, tc.at)
		e := parseError(t, src, testEnv)
		if !slices.ContainsFunc(e.List, func(p Problem) bool { return p.Line == line && p.Column == col && p.Msg == tc.msg }) {
			t.Errorf("want %d:%d: %s\ngot:\n%v", line, col, tc.msg, e)
		}
	}
}
