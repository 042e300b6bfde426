package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawedge/clawedge/daemon"
)

const sensorsTestConfig = `console: {stdin: false}
board:
  driver: sim
  buses: {sensors: {i2c: "1"}}
  sensors:
    greenhouse: {driver: bme280, bus: sensors, address: 0x76, every: 1s, sim: {temperature: 21.5, humidity: 40, pressure: 1013.2}}
    supply: {driver: ina219, bus: sensors, address: 0x40, sim: {voltage: 5, current: 0.5}}
`

// TestSensorsCommand: `clawedge sensors` without a daemon opens the board
// and reads each sensor once (the simulated chips' values, age 0); with the
// daemon running it shows the daemon's last reads, through the control
// socket's read-only op, in text and JSON.
func TestSensorsCommand(t *testing.T) {
	cfgPath, dataDir := writeConfig(t, sensorsTestConfig)
	out := runCLI(t, 0, "", "sensors", "--config", cfgPath)
	for _, want := range []string{"No daemon running: each sensor read now.", "greenhouse  bme280", "sensors (0x76, simulated)",
		"temperature 21.50 °C, humidity 40.00%, pressure 1013.20 hPa", "supply", "voltage 5.000 V"} {
		if !strings.Contains(out, want) {
			t.Errorf("offline: no %q in\n%s", want, out)
		}
	}

	runInProcess(t, cfgPath, "warn")
	waitForSocket(t, filepath.Join(dataDir, "clawedge.sock"))
	var list []daemon.SensorInfo
	waitUntil(t, "the daemon's first samples", func() bool {
		raw := runCLI(t, 0, "", "sensors", "--json", "--config", cfgPath)
		list = nil
		if err := json.Unmarshal([]byte(raw), &list); err != nil {
			t.Fatalf("%v\n%s", err, raw)
		}
		return len(list) == 2 && len(list[0].Readings) == 3 && len(list[1].Readings) == 3
	})
	gh := list[0]
	if gh.Name != "greenhouse" || gh.Driver != "bme280" || gh.Bus != "sensors" || gh.Address != "0x76" || gh.Error != "" ||
		gh.At.IsZero() || gh.Readings[0].Quantity != "temperature" || gh.Readings[0].Value != 21.5 || gh.Readings[0].Unit != "°C" {
		t.Errorf("greenhouse: %+v", gh)
	}
	out = runCLI(t, 0, "", "sensors", "--config", cfgPath)
	if !strings.Contains(out, "The daemon's last reads:") || !strings.Contains(out, "pressure 1013.20 hPa") {
		t.Errorf("with the daemon:\n%s", out)
	}
}
