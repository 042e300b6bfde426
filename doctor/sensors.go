package doctor

// This file: a check per configured sensor that it answers (board.sensors;
// docs/sensors.md). With a daemon running the daemon is asked for its last
// read of each (the control socket's read-only op "sensors"): it holds the
// buses, and a second reader beside it would only contend for them.
// Without one the board is opened here and each sensor read once, through
// periph's driver as the daemon reads it (a BME280's chip id and
// calibration, a DS18B20's scratchpad CRC).

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/clawedge/clawedge/channels"
	"github.com/clawedge/clawedge/config"
	"github.com/clawedge/clawedge/daemon"
	"github.com/clawedge/clawedge/sensors"
)

// SensorReadTimeout bounds reading all the sensors once (a DS18B20's
// conversion takes 750 ms).
var SensorReadTimeout = 20 * time.Second

// Sensors checks each sensor of cfg: through d, the running daemon's
// control socket, when it is not nil, else on the board opened here.
func Sensors(cfg *config.Config, d *channels.ControlClient) []Check {
	if len(cfg.Board.Sensors) == 0 {
		return nil
	}
	if d != nil {
		raw, err := d.Op("sensors", nil)
		var list []daemon.SensorInfo
		if err == nil {
			err = json.Unmarshal(raw, &list)
		}
		if err != nil {
			return []Check{{What: "sensors", Info: "the daemon did not say how its sensors read: " + err.Error(),
				Fix: "restart clawedge run with this version (an older daemon has no sensors op)"}}
		}
		return SensorChecks(list, true)
	}
	b, err := daemon.OpenBoard(cfg, nil)
	if err != nil {
		return []Check{{What: "sensors", Info: "the board did not open, so no sensor was read: " + err.Error(),
			Fix: "fix the board first (see the board line); for I²C enable it (sudo raspi-config nonint do_i2c 0, or dtparam=i2c_arm=on in /boot/firmware/config.txt) and reboot"}}
	}
	defer b.Close()
	set, err := sensors.Open(b, sensors.FromConfig(cfg.Board), sensors.Options{})
	if err != nil {
		return []Check{{What: "sensors", Info: err.Error(), Fix: "correct board.sensors (clawedge config check names each problem at its line)"}}
	}
	ctx, cancel := context.WithTimeout(context.Background(), SensorReadTimeout)
	defer cancel()
	return SensorChecks(daemon.SensorsOf(ctx, set, true), false)
}

// SensorChecks is one check a sensor of list; fromDaemon says the reads
// are the daemon's sampler's rather than made now.
func SensorChecks(list []daemon.SensorInfo, fromDaemon bool) []Check {
	out := make([]Check, 0, len(list))
	for _, s := range list {
		c := Check{What: "sensor " + s.Name}
		switch {
		case s.At.IsZero():
			c.OK, c.Warn = true, true
			c.Info = s.Where + ": not read yet"
			c.Fix = "the daemon samples it every " + s.Every + "; run doctor again after that"
		case s.Error != "":
			c.Info = s.Error
			if fromDaemon {
				c.Info = fmt.Sprintf("%s (the daemon's last read, %s ago)", s.Error, age(s.Age))
			}
			c.Fix = SensorFix(s)
		default:
			parts := make([]string, len(s.Readings))
			for i, r := range s.Readings {
				parts[i] = r.Text
			}
			c.OK = true
			c.Info = fmt.Sprintf("%s answers: %s", s.Where, strings.Join(parts, ", "))
			if fromDaemon {
				c.Info += fmt.Sprintf(" (the daemon's last read, %s ago)", age(s.Age))
			}
			if s.Simulated {
				c.Info += "; simulated"
			}
		}
		out = append(out, c)
	}
	return out
}

func age(seconds float64) time.Duration {
	return time.Duration(seconds * float64(time.Second)).Round(time.Second)
}

// SensorFix says how to fix what s's error shows: the wiring of its chip on
// a Pi's header, the 1-Wire overlay, the I²C address.
func SensorFix(s daemon.SensorInfo) string {
	e := strings.ToLower(s.Error)
	has := func(words ...string) bool {
		for _, w := range words {
			if strings.Contains(e, w) {
				return true
			}
		}
		return false
	}
	if s.Driver == "ds18b20" {
		switch {
		case has("power-on 85"):
			return "the probe converts only when powered: wire its VDD to 3.3 V (pin 1), not to GND (parasite power), and keep the 4.7 kΩ pull-up from DQ to 3.3 V"
		case has("crc"):
			return "the data line is noisy: check the 4.7 kΩ pull-up from DQ to 3.3 V, the connections, and a long cable (a lower pull-up, 2.2 kΩ, helps past a few metres)"
		case has("permission", "operation not permitted"):
			return "1-Wire over the kernel's netlink socket needs root or CAP_NET_ADMIN: run clawedge as its service user with that capability (AmbientCapabilities=CAP_NET_ADMIN)"
		}
		return fmt.Sprintf("enable the 1-Wire master: add dtoverlay=w1-gpio (,gpiopin=N for a pin other than GPIO4) to /boot/firmware/config.txt and reboot; "+
			"wire VDD to 3.3 V (pin 1), GND to pin 9, DQ to GPIO4 (pin 7) with a 4.7 kΩ pull-up to 3.3 V; "+
			"ls /sys/bus/w1/devices must list %s (else correct board.sensors.%s.id)", s.ID, s.Name)
	}
	addrs := map[string]string{"bme280": "0x76 (SDO to GND) or 0x77 (SDO to 3.3 V)", "bmp280": "0x76 (SDO to GND) or 0x77 (SDO to 3.3 V)",
		"aht20": "0x38, always", "ina219": "0x40..0x4f, as A0 and A1 are wired"}[s.Driver]
	switch {
	case has(", not a "):
		return "the chip is another model than the config says: set board.sensors." + s.Name + ".driver as the error says"
	case has("skipped the measurement"):
		return "the chip skipped a measurement: if it persists, power it off and on (its VIN from 3.3 V) and check the supply"
	case has("outside the chip's range"):
		return "a reading the chip cannot give: a faulty chip or a bad connection; check the wiring and replace the chip if it persists"
	case has("crc"):
		return "the data was corrupted on the bus: check SDA and SCL, shorten the wires, and the pull-ups (most breakouts carry them)"
	case has("no acknowledge", "remote i/o", "no such device or address", "input/output error"):
		return fmt.Sprintf("nothing answers at %s on bus %q: check the wiring (VIN to 3.3 V pin 1, GND to pin 6, SDA to GPIO2 pin 3, SCL to GPIO3 pin 5); "+
			"@i2c/scan{bus=\"%s\"} lists the addresses that answer: a %s answers at %s, so correct board.sensors.%s.address if it shows another",
			s.Address, s.Bus, s.Bus, s.Driver, addrs, s.Name)
	case has("/dev/i2c"):
		return "enable I²C (sudo raspi-config nonint do_i2c 0, or dtparam=i2c_arm=on in /boot/firmware/config.txt) and reboot"
	}
	return fmt.Sprintf("check the wiring (VIN to 3.3 V pin 1, GND to pin 6, SDA to GPIO2 pin 3, SCL to GPIO3 pin 5) and the address: a %s answers at %s", s.Driver, addrs)
}
