package main

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawedge/clawedge/channels/mqtt/mqtttest"
	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/hal/sim"
)

// TestHomeAssistantOverMQTT runs the daemon in-process on the simulated board
// against a real Mosquitto, with mosquitto_sub/mosquitto_pub playing Home
// Assistant: every discovery config reads as Home Assistant reads it (a
// sensor from mqtt.sensors too, with its default state class, and the pins
// mqtt.device_classes names with their class),
// a set message switches the relay (the simulated pin follows, then the state
// topic), pressing the button shows ON/OFF, and the password appears in no
// output: not the daemon's log, not `config check --show`, not doctor.
func TestHomeAssistantOverMQTT(t *testing.T) {
	const pass = "mqtt-pass-Zq81x"
	b := mqtttest.Start(t, mqtttest.Options{Username: "clawedge", Password: pass})
	ha := b.Subscribe(t, "homeassistant/#")
	states := b.Subscribe(t, "clawedge/#")
	t.Setenv("MQTT_PASSWORD", pass)

	var board *sim.Sim
	var mu sync.Mutex
	newSim = func() hal.Driver { mu.Lock(); defer mu.Unlock(); board = sim.New(); return board }
	defer func() { newSim = func() hal.Driver { return sim.New() } }()
	cfgPath, _ := writeConfig(t, fmt.Sprintf(`console: {stdin: false}
mqtt:
  broker: %s
  username: clawedge
  password: ${MQTT_PASSWORD}
  client_id: clawedge-e2e
  discovery: {node: garage}
  device_classes: {button: door, relay: outlet}
  sensors:
    heap: {read: '@sys/status{}', field: heap_kb, every: 1s, unit: kB, device_class: data_size}
automations:
  remote: {when: {mqtt: "zigbee2mqtt/+/action", match: "^single$"}, do: '@gpio/write{pin="led";value=1}'}
`, b.URL))
	runInProcess(t, cfgPath, "debug")

	want := map[string]string{"led": "switch", "relay": "switch", "button": "binary_sensor", "heap": "sensor"}
	for name, comp := range want {
		m, ok := ha.Wait(10*time.Second, func(m mqtttest.Message) bool { return strings.HasSuffix(m.Topic, "/garage/"+name+"/config") })
		if !ok {
			t.Fatalf("no discovery config for %s; got %+v", name, ha.Messages())
		}
		got, p, err := mqtttest.CheckDiscovery(m) // as Home Assistant reads it: no problem at all
		if err != nil || got != comp {
			t.Errorf("%s: component %s, %v", name, got, err)
		}
		if class, has := p["device_class"]; (name == "led" && has) || (name == "button" && class != "door") || (name == "relay" && class != "outlet") {
			t.Errorf("%s: device_class %v (present: %v)", name, class, has)
		}
		if name == "heap" && (p["state_class"] != "measurement" || p["unit_of_measurement"] != "kB" || p["default_entity_id"] != "sensor.garage_heap") {
			t.Errorf("heap: %v", p)
		}
		if dev, _ := p["device"].(map[string]any); dev["name"] != "garage" || dev["sw_version"] != version || dev["model"] != "clawedge on sim" {
			t.Errorf("%s: device %v", name, p["device"])
		}
	}
	// A Home Assistant that starts later gets the configs too: they are retained.
	late := b.Subscribe(t, "homeassistant/#")
	for name := range want {
		if _, ok := late.Wait(10*time.Second, func(m mqtttest.Message) bool {
			return strings.HasSuffix(m.Topic, "/garage/"+name+"/config") && m.Retained
		}); !ok {
			t.Errorf("the config of %s is not retained; got %+v", name, late.Messages())
		}
	}
	waitMsg := func(topic, payload string) {
		t.Helper()
		if _, ok := states.Wait(10*time.Second, func(m mqtttest.Message) bool { return m.Topic == topic && m.Payload == payload }); !ok {
			t.Fatalf("no %s on %s; got %+v", payload, topic, states.Messages())
		}
	}
	waitMsg("clawedge/garage/status", "online")
	waitMsg("clawedge/garage/relay/state", "OFF")

	n := len(states.Messages())
	b.Publish(t, "clawedge/garage/relay/set", "ON", false)
	if _, ok := states.WaitAfter(n, 10*time.Second, func(m mqtttest.Message) bool {
		return m.Topic == "clawedge/garage/relay/state" && m.Payload == "ON"
	}); !ok {
		t.Fatalf("the relay's state did not follow; got %+v", states.Messages()[n:])
	}
	mu.Lock()
	sb := board
	mu.Unlock()
	if sb.Level(22) != hal.Low {
		t.Errorf("GPIO22 is %v with the relay on; it is active low", sb.Level(22))
	}

	waitMsg("clawedge/garage/button/state", "ON") // pulled up: released
	waitUntil(t, "the daemon to watch the button (GPIO27)", func() bool { return sb.Waiters(27) > 0 })
	n = len(states.Messages())
	sb.Drive(27, hal.Low) // pressed
	if _, ok := states.WaitAfter(n, 10*time.Second, func(m mqtttest.Message) bool {
		return m.Topic == "clawedge/garage/button/state" && m.Payload == "OFF"
	}); !ok {
		t.Fatalf("pressing the button was not published; got %+v", states.Messages()[n:])
	}

	// An automation fires on another device's message (a Zigbee remote), and
	// its do runs as auto:remote; Home Assistant sees the LED follow.
	n = len(states.Messages())
	deadline := time.Now().Add(30 * time.Second)
	for {
		b.Publish(t, "zigbee2mqtt/remote/action", "double", false) // no match
		b.Publish(t, "zigbee2mqtt/remote/action", "single", false)
		if _, ok := states.WaitAfter(n, 200*time.Millisecond, func(m mqtttest.Message) bool {
			return m.Topic == "clawedge/garage/led/state" && m.Payload == "ON"
		}); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the mqtt automation did not switch the LED on; got %+v", states.Messages()[n:])
		}
	}
	if sb.Level(17) != hal.High {
		t.Errorf("GPIO17 is %v after the automation", sb.Level(17))
	}

	audit := runCLI(t, 0, "", "audit", "--config", cfgPath)
	if !strings.Contains(audit, `@gpio/write{pin="relay";value=1}`) || !strings.Contains(audit, "mqtt") ||
		!strings.Contains(audit, "auto:remote") {
		t.Errorf("audit:\n%s", audit)
	}
	show := runCLI(t, 0, "", "config", "check", "--show", cfgPath)
	doctor := runCLI(t, 0, "", "doctor", "--config", cfgPath)
	for what, out := range map[string]string{"config check --show": show, "doctor": doctor, "audit": audit} {
		if strings.Contains(out, pass) {
			t.Errorf("%s shows the password:\n%s", what, out)
		}
	}
	if !strings.Contains(show, `password: "[redacted]"`) {
		t.Errorf("config check --show:\n%s", show)
	}
	if !strings.Contains(doctor, "[ok  ] mqtt: connected to "+b.URL+" as clawedge") {
		t.Errorf("doctor has no mqtt line:\n%s", doctor)
	}
	// A wrong password: doctor says the broker refused the login, and shows
	// neither password.
	const wrong = "wrong-pass-Kx02"
	t.Setenv("MQTT_PASSWORD_BAD", wrong)
	badPath, _ := writeConfig(t, fmt.Sprintf("console: {stdin: false}\nmqtt:\n  broker: %s\n  username: clawedge\n  password: ${MQTT_PASSWORD_BAD}\n", b.URL))
	bad := runCLI(t, 1, "", "doctor", "--config", badPath)
	if !strings.Contains(bad, "[FAIL] mqtt: "+b.URL+" refused the login") || strings.Contains(bad, wrong) || strings.Contains(bad, pass) {
		t.Errorf("doctor with a wrong password:\n%s", bad)
	}
}
