package daemon

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawedge/clawedge/channels/mqtt/mqtttest"
	"github.com/clawedge/clawedge/config"
	"github.com/clawedge/clawedge/sensors/simchip"
)

// sensorsConfig is the built-in config (a simulated BME280, greenhouse)
// with an INA219 beside it, so every quantity is measured, each sampled
// every second.
func sensorsConfig(t *testing.T) *config.Config {
	cfg := config.Builtin()
	cfg.DataDir = filepath.Join(t.TempDir(), "data")
	gh := cfg.Board.Sensors["greenhouse"]
	gh.Every = config.Duration(time.Second)
	cfg.Board.Sensors["greenhouse"] = gh
	cfg.Board.Sensors["supply"] = config.Sensor{Driver: "ina219", Bus: "sensors", Address: 0x40, Every: config.Duration(time.Second),
		Sim: map[string]float64{"voltage": 5.1, "current": 0.25}}
	return cfg
}

// TestSensorsAreHomeAssistantEntities: with mqtt configured, each quantity
// of each board sensor is a Home Assistant sensor entity, its discovery
// config as Home Assistant's schemas read it (device class, unit, state
// class measurement, default_entity_id, an availability of its own beside
// the board's, both required); its state is the sampler's reading; a sensor
// that stops answering marks its entities offline, and online again when it
// answers.
func TestSensorsAreHomeAssistantEntities(t *testing.T) {
	b := mqtttest.Start(t, mqtttest.Options{})
	all := b.Subscribe(t, "#")
	cfg := sensorsConfig(t)
	cfg.MQTT = &config.MQTT{Broker: b.URL, ClientID: "clawedge-sensors-test",
		Discovery: config.MQTTDiscovery{Enabled: true, Prefix: "homeassistant", Node: "garage"}}
	a, err := Open(cfg, Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	if err := a.serveSensors(ctx, &wg); err != nil {
		t.Fatal(err)
	}
	if _, err := a.serveMQTT(ctx, &wg); err != nil {
		t.Fatal(err)
	}

	want := map[string]struct{ class, unit string }{
		"greenhouse_temperature": {"temperature", "°C"}, "greenhouse_humidity": {"humidity", "%"},
		"greenhouse_pressure": {"pressure", "hPa"}, "supply_voltage": {"voltage", "V"},
		"supply_current": {"current", "A"}, "supply_power": {"power", "W"},
	}
	for name, w := range want {
		m, ok := all.Wait(30*time.Second, func(m mqtttest.Message) bool {
			return m.Topic == "homeassistant/sensor/garage/"+name+"/config"
		})
		if !ok {
			t.Fatalf("no discovery config for %s", name)
		}
		comp, p, err := mqtttest.CheckDiscovery(m)
		if err != nil || comp != "sensor" {
			t.Errorf("%s: %s, %v", name, comp, err)
			continue
		}
		if p["device_class"] != w.class || p["unit_of_measurement"] != w.unit || p["state_class"] != "measurement" ||
			p["default_entity_id"] != "sensor.garage_"+name || p["availability_mode"] != "all" {
			t.Errorf("%s: %v", name, p)
		}
		av, _ := p["availability"].([]any)
		if len(av) != 2 || !strings.Contains(m.Payload, `"topic":"clawedge/garage/`+name+`/availability"`) {
			t.Errorf("%s: availability %v: want the board's status and the entity's own", name, av)
		}
	}
	value := func(name string, want float64, tol float64) {
		t.Helper()
		m, ok := all.Wait(30*time.Second, func(m mqtttest.Message) bool { return m.Topic == "clawedge/garage/"+name+"/state" })
		if !ok {
			t.Fatalf("no state of %s", name)
		}
		v, err := strconv.ParseFloat(m.Payload, 64)
		if err != nil || v < want-tol || v > want+tol {
			t.Errorf("%s: state %q, want %g", name, m.Payload, want)
		}
	}
	value("greenhouse_temperature", 21.5, 0.05)
	value("greenhouse_pressure", 1013.2, 0.1)
	value("supply_voltage", 5.1, 0.01)
	value("supply_power", 5.1*0.25, 0.05)
	online := func(name string) bool {
		_, ok := all.Wait(30*time.Second, func(m mqtttest.Message) bool {
			return m.Topic == "clawedge/garage/"+name+"/availability" && m.Payload == "online"
		})
		return ok
	}
	if !online("greenhouse_temperature") || !online("supply_current") {
		t.Fatal("the sensors' entities are not said online")
	}

	// The BME280 stops answering: its entities go offline, the INA219's stay.
	chip, err := a.sensors.Chip("greenhouse")
	if err != nil {
		t.Fatal(err)
	}
	n := len(all.Messages())
	if err := chip.Fail(simchip.Silent, -1); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"temperature", "humidity", "pressure"} {
		if _, ok := all.WaitAfter(n, 30*time.Second, func(m mqtttest.Message) bool {
			return m.Topic == "clawedge/garage/greenhouse_"+q+"/availability" && m.Payload == "offline"
		}); !ok {
			t.Errorf("greenhouse_%s not said offline when the chip stopped answering", q)
		}
	}
	if m, ok := all.Last("clawedge/garage/supply_voltage/availability"); !ok || m.Payload != "online" {
		t.Errorf("supply_voltage's availability: %+v", m)
	}
	// It answers again: online, with a new state.
	n = len(all.Messages())
	if err := chip.Fail(simchip.Silent, 0); err != nil {
		t.Fatal(err)
	}
	if err := a.sensors.Simulate("greenhouse", "temperature", 17.25); err != nil {
		t.Fatal(err)
	}
	if _, ok := all.WaitAfter(n, 30*time.Second, func(m mqtttest.Message) bool {
		return m.Topic == "clawedge/garage/greenhouse_temperature/availability" && m.Payload == "online"
	}); !ok {
		t.Error("greenhouse_temperature not said online when the chip answered again")
	}
	if _, ok := all.WaitAfter(n, 30*time.Second, func(m mqtttest.Message) bool {
		return m.Topic == "clawedge/garage/greenhouse_temperature/state" && m.Payload == "17.25"
	}); !ok {
		t.Error("greenhouse_temperature's new reading 17.25 not published")
	}
}
