package doctor

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawedge/clawedge/channels"
	"github.com/clawedge/clawedge/config"
	"github.com/clawedge/clawedge/daemon"
	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/hal/sim"
	"github.com/clawedge/clawedge/sensors"
	"github.com/clawedge/clawedge/sensors/simchip"
)

// Without a daemon, doctor opens the board and reads each sensor once: the
// built-in config's simulated BME280 answers with its values.
func TestSensorsAnswerOffline(t *testing.T) {
	cfg := config.Builtin()
	checks := Sensors(cfg, nil)
	if len(checks) != 1 || !checks[0].OK || checks[0].Warn || checks[0].What != "sensor greenhouse" ||
		!strings.Contains(checks[0].Info, `bme280 at 0x76 on bus "sensors") answers: temperature 21.50 °C`) {
		t.Errorf("%+v", checks)
	}
	if got := Sensors(config.Default(), nil); len(got) != 0 {
		t.Errorf("no sensors configured, yet %+v", got)
	}
}

// A sensor that does not answer fails its check, with a fix naming what to
// look at: the I²C wiring and address, the 1-Wire overlay and the probe's
// id, its pull-up for a CRC, its VDD for the power-on 85 °C.
func TestSensorFixes(t *testing.T) {
	b, err := hal.Open(sim.New(), hal.Config{Buses: []hal.BusConfig{{Name: "sensors", Bus: "1"}}, OneWire: []hal.OneWireConfig{{Name: "probes", Bus: "w1"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	set, err := sensors.Open(b, []sensors.Spec{{Name: "greenhouse", Driver: "bme280", Bus: "sensors", Address: 0x76},
		{Name: "soil", Driver: "ds18b20", Bus: "probes", ID: "28-00000a1b2c3d"}, {Name: "lab", Driver: "aht20", Bus: "sensors"}},
		sensors.Options{Sleep: func(context.Context, time.Duration) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		sensor string
		fault  simchip.Fault
		info   string
		fix    []string
	}{
		{"greenhouse", simchip.Silent, "address 0x76: no acknowledge", []string{"SDA to GPIO2 pin 3", `@i2c/scan{bus="sensors"}`, "0x76 (SDO to GND) or 0x77", "board.sensors.greenhouse.address"}},
		{"soil", simchip.Silent, "did not respond", []string{"dtoverlay=w1-gpio", "/sys/bus/w1/devices must list 28-00000a1b2c3d", "4.7 kΩ pull-up"}},
		{"soil", simchip.BadCRC, "CRC", []string{"4.7 kΩ pull-up from DQ to 3.3 V"}},
		{"soil", simchip.NoConversion, "power-on 85 °C", []string{"VDD to 3.3 V (pin 1)"}},
		{"lab", simchip.Silent, "address 0x38: no acknowledge", []string{"a aht20 answers at 0x38, always", "SCL to GPIO3 pin 5"}},
		{"greenhouse", simchip.Skipped, "skipped the measurement", []string{"power it off and on"}},
	}
	for _, tc := range cases {
		chip, err := set.Chip(tc.sensor)
		if err != nil {
			t.Fatal(err)
		}
		if err := chip.Fail(tc.fault, -1); err != nil {
			t.Fatal(err)
		}
		var c Check
		for _, got := range SensorChecks(daemon.SensorsOf(context.Background(), set, true), false) {
			if got.What == "sensor "+tc.sensor {
				c = got
			}
		}
		chip.Fail(tc.fault, 0)
		if c.OK || !strings.Contains(c.Info, tc.info) || !strings.Contains(c.Info, "sensor "+tc.sensor) {
			t.Errorf("%s %s: %+v; want a failure saying %q", tc.sensor, tc.fault, c, tc.info)
		}
		for _, f := range tc.fix {
			if !strings.Contains(c.Fix, f) {
				t.Errorf("%s %s: fix %q does not say %q", tc.sensor, tc.fault, c.Fix, f)
			}
		}
	}
	for _, c := range SensorChecks(daemon.SensorsOf(context.Background(), set, true), false) {
		if !c.OK {
			t.Errorf("the faults cleared, yet %+v", c)
		}
	}
}

// With a daemon running, doctor asks it (the control socket's op sensors)
// and opens no bus: here the config's board could not even be opened.
func TestSensorsAskTheDaemon(t *testing.T) {
	at := time.Now().Add(-4 * time.Second)
	list := []daemon.SensorInfo{
		{Name: "greenhouse", Driver: "bme280", Bus: "sensors", Address: "0x76", Where: `greenhouse (bme280 at 0x76 on bus "sensors")`, Every: "30s",
			Readings: []daemon.SensorReading{{Quantity: "temperature", Value: 21.5, Unit: "°C", Text: "temperature 21.50 °C"}}, At: at, Age: 4},
		{Name: "soil", Driver: "ds18b20", Bus: "probes", ID: "28-00000a1b2c3d", Where: `soil (ds18b20 28-00000a1b2c3d on bus "probes")`, Every: "1m",
			Error: `sensor soil (ds18b20 28-00000a1b2c3d on bus "probes"): 1-Wire bus "probes" (w1): ds18b20: device did not respond`, At: at, Age: 4},
		{Name: "lab", Driver: "aht20", Bus: "sensors", Address: "0x38", Where: `lab (aht20 at 0x38 on bus "sensors")`, Every: "1m"},
	}
	path := filepath.Join(t.TempDir(), "ctl.sock")
	ctl := &channels.ControlSocket{Path: path, Ops: map[string]func(json.RawMessage) (any, error){
		"sensors": func(json.RawMessage) (any, error) { return list, nil }}}
	ln, err := ctl.Listen()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { ctl.Serve(ctx, ln); close(done) }()
	defer func() { cancel(); <-done }()
	d, err := channels.DialControl(path, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	cfg := config.Builtin()
	cfg.Board.Driver = "periph" // a board this machine cannot open
	cfg.Board.Sensors["soil"] = config.Sensor{}
	cfg.Board.Sensors["lab"] = config.Sensor{}
	checks := Sensors(cfg, d)
	if len(checks) != 3 {
		t.Fatalf("%+v", checks)
	}
	if c := checks[0]; !c.OK || !strings.Contains(c.Info, "answers: temperature 21.50 °C (the daemon's last read, 4s ago)") {
		t.Errorf("greenhouse: %+v", c)
	}
	if c := checks[1]; c.OK || !strings.Contains(c.Info, "did not respond (the daemon's last read, 4s ago)") || !strings.Contains(c.Fix, "dtoverlay=w1-gpio") {
		t.Errorf("soil: %+v", c)
	}
	if c := checks[2]; !c.OK || !c.Warn || !strings.Contains(c.Info, "not read yet") {
		t.Errorf("lab: %+v", c)
	}
}
