package config

import (
	"os"
	"reflect"
	"regexp"
	"testing"
	"time"
)

const sensorsSrc = `board:
  buses: {sensors: {i2c: "1"}, probes: {onewire: w1}}
  sensors:
    greenhouse: {driver: bme280, bus: sensors, address: 0x76, every: 30s, sim: {temperature: 21.5, humidity: 40, pressure: 1013.2}}
    soil:       {driver: ds18b20, bus: probes, id: 28-00000a1b2c3d, every: 1m}
    supply:     {driver: ina219, bus: sensors, address: 0x40, shunt_ohms: 0.1}
    lab:        {driver: aht20, bus: sensors}
    outside:    {driver: bmp280, bus: sensors, address: 0x77}
  spi: {adc: {dev: "0.0", hz: 1000000, mode: 0}, flash: {dev: "0.1", mode: 3}}
`

func TestSensorsDecode(t *testing.T) {
	c := mustParse(t, sensorsSrc)
	want := map[string]Sensor{
		"greenhouse": {Driver: "bme280", Bus: "sensors", Address: 0x76, Every: Duration(30 * time.Second), Sim: map[string]float64{"temperature": 21.5, "humidity": 40, "pressure": 1013.2}},
		"soil":       {Driver: "ds18b20", Bus: "probes", ID: "28-00000a1b2c3d", Every: Duration(time.Minute)},
		"supply":     {Driver: "ina219", Bus: "sensors", Address: 0x40, Every: Duration(time.Minute), ShuntOhms: 0.1},
		"lab":        {Driver: "aht20", Bus: "sensors", Address: 0x38, Every: Duration(time.Minute)},
		"outside":    {Driver: "bmp280", Bus: "sensors", Address: 0x77, Every: Duration(time.Minute)},
	}
	if !reflect.DeepEqual(c.Board.Sensors, want) {
		t.Errorf("sensors = %+v\nwant      %+v", c.Board.Sensors, want)
	}
	if got := c.Board.Buses["probes"]; got != (Bus{OneWire: "w1"}) {
		t.Errorf("probes = %+v", got)
	}
	if got := c.Board.SPI; !reflect.DeepEqual(got, map[string]SPI{"adc": {Dev: "0.0", Hz: 1000000}, "flash": {Dev: "0.1", Hz: 1000000, Mode: 3}}) {
		t.Errorf("spi = %+v", got)
	}
	// The writer's output reads back the same.
	out, err := c.Redacted()
	if err != nil {
		t.Fatal(err)
	}
	if c2 := mustParse(t, string(out)); !reflect.DeepEqual(c.Board, c2.Board) {
		t.Errorf("round trip changed the board\n%+v\n%+v\n%s", c.Board, c2.Board, out)
	}
}

func TestSensorsProblems(t *testing.T) {
	const buses = "board:\n  buses: {s: {i2c: \"1\"}, w: {onewire: w1}}\n  sensors:\n"
	for _, tc := range []struct{ name, src, at, msg string }{
		{"driver unknown", buses + "    a: {driver: bme680, bus: s}\n", "bme680",
			`board.sensors.a.driver: must be aht20, bme280, bmp280, ds18b20 or ina219, found "bme680"`},
		{"driver sht4x", buses + "    a: {driver: sht4x, bus: s}\n", "sht4x",
			"board.sensors.a.driver: sht4x has no driver in periph.io/x/devices v3.7.4"},
		{"driver missing", buses + "    a: {bus: s}\n", "a: {",
			"board.sensors.a: driver is required (aht20, bme280, bmp280, ds18b20 or ina219)"},
		{"bus missing", buses + "    a: {driver: aht20}\n", "a: {",
			"board.sensors.a: bus is required"},
		{"bus unknown", buses + "    a: {driver: aht20, bus: i2c1}\n", "i2c1",
			`board.sensors.a.bus: no bus "i2c1" in board.buses (configured: s, w)`},
		{"bus no buses", "board:\n  sensors:\n    a: {driver: aht20, bus: x}\n", "x}",
			`no bus "x" in board.buses (none is configured)`},
		{"ds18b20 on i2c", buses + "    a: {driver: ds18b20, bus: s, id: 28-00000a1b2c3d}\n", "s, id",
			`board.sensors.a.bus: a ds18b20 is a 1-Wire device, and bus "s" is I²C`},
		{"bme280 on 1-wire", buses + "    a: {driver: bme280, bus: w}\n", "w}",
			`board.sensors.a.bus: a bme280 is an I²C device, and bus "w" is 1-Wire`},
		{"address wrong", buses + "    a: {driver: bme280, bus: s, address: 0x40}\n", "0x40",
			"board.sensors.a.address: a bme280 answers at 0x76 or 0x77, not 0x40"},
		{"address ina219", buses + "    a: {driver: ina219, bus: s, address: 0x50}\n", "0x50",
			"board.sensors.a.address: a ina219 answers at 0x40..0x4f, not 0x50"},
		{"address too big", buses + "    a: {driver: ina219, bus: s, address: 0x80}\n", "0x80",
			`board.sensors.a.address: "0x80" is out of range`},
		{"address twice", buses + "    a: {driver: bme280, bus: s}\n    b: {driver: bmp280, bus: s, address: 0x76}\n", "0x76",
			`board.sensors.b.address: 0x76 on bus "s" is already sensor "a"`},
		{"id missing", buses + "    a: {driver: ds18b20, bus: w}\n", "a: {",
			"board.sensors.a: id is required (its name under /sys/bus/w1/devices"},
		{"id malformed", buses + "    a: {driver: ds18b20, bus: w, id: 28-00000A1B2C3D}\n", "28-",
			`board.sensors.a.id: must be a DS18B20's 1-Wire id: 28- and 12 lower-case hex digits, such as 28-00000a1b2c3d, found "28-00000A1B2C3D"`},
		{"id on i2c", buses + "    a: {driver: aht20, bus: s, id: 28-00000a1b2c3d}\n", "28-",
			"board.sensors.a.id: a aht20 on I²C has an address, not an id"},
		{"address on 1-wire", buses + "    a: {driver: ds18b20, bus: w, id: 28-00000a1b2c3d, address: 0x10}\n", "0x10",
			"board.sensors.a.address: a ds18b20 on 1-Wire has an id, not an address"},
		{"id twice", buses + "    a: {driver: ds18b20, bus: w, id: 28-00000a1b2c3d}\n    b: {driver: ds18b20, bus: w, id: 28-00000a1b2c3d}\n", "b: {driver: ds18b20, bus: w, id: ^28",
			`board.sensors.b.id: 28-00000a1b2c3d on bus "w" is already sensor "a"`},
		{"every short", buses + "    a: {driver: aht20, bus: s, every: 100ms}\n", "100ms",
			"board.sensors.a.every: must be from 1s to 24h, found 100ms"},
		{"every not a duration", buses + "    a: {driver: aht20, bus: s, every: often}\n", "often",
			"board.sensors.a.every: expected a duration"},
		{"shunt on bme280", buses + "    a: {driver: bme280, bus: s, shunt_ohms: 0.1}\n", "0.1",
			"board.sensors.a.shunt_ohms: shunt_ohms is an ina219's; a bme280 has no shunt"},
		{"shunt zero", buses + "    a: {driver: ina219, bus: s, shunt_ohms: 0}\n", "0}",
			"board.sensors.a.shunt_ohms: must be more than 0 and at most 100"},
		{"sim unknown quantity", buses + "    a: {driver: aht20, bus: s, sim: {pressure: 1000}}\n", "pressure",
			`board.sensors.a.sim: a aht20 has no "pressure" (it has humidity, temperature)`},
		{"sim out of range", buses + "    a: {driver: bme280, bus: s, sim: {humidity: 140}}\n", "140",
			"board.sensors.a.sim.humidity: 140 is outside a bme280's range of humidity (0..100)"},
		{"sim not a number", buses + "    a: {driver: bme280, bus: s, sim: {humidity: wet}}\n", "wet",
			"board.sensors.a.sim.humidity: expected a number"},
		{"sim power", buses + "    a: {driver: ina219, bus: s, sim: {power: 3}}\n", "3}",
			"board.sensors.a.sim.power: an ina219's power is its voltage times its current"},
		{"sim current past the shunt", buses + "    a: {driver: ina219, bus: s, shunt_ohms: 0.1, sim: {current: 5}}\n", "5}",
			"board.sensors.a.sim.current: 5 A is past what a 0.1 Ω shunt can read (±3.2 A"},
		{"sensor key", buses + "    a: {driver: aht20, bus: s, adress: 0x38}\n", "adress",
			`unknown key "adress" in board.sensors.a (valid: driver, bus, address, id, every, shunt_ohms, sim)`},
		{"sensor name", buses + "    Greenhouse: {driver: aht20, bus: s}\n", "Greenhouse",
			`board.sensors: invalid sensor name "Greenhouse"`},
		{"onewire value", "board:\n  buses: {w: {onewire: gpio4}}\n", "gpio4",
			`board.buses.w.onewire: must be a 1-Wire master: w1, a number such as "1", or w1_bus_master1, found "gpio4"`},
		{"onewire and i2c", "board:\n  buses: {w: {onewire: w1, i2c: \"1\"}}\n", "w1,",
			"board.buses.w.onewire: a bus is either I²C or 1-Wire"},
		{"onewire twice", "board:\n  buses: {a: {onewire: w1}, b: {onewire: w1_bus_master1}}\n", "w1_bus",
			`board.buses.b.onewire: 1-Wire master 1 is already configured as "a"`},
		{"spi dev", "board:\n  spi: {adc: {dev: /dev/spidev0.0}}\n", "/dev",
			`board.spi.adc.dev: must be BUS.CS such as "0.0" (/dev/spidev0.0), found "/dev/spidev0.0"`},
		{"spi dev missing", "board:\n  spi: {adc: {hz: 1000}}\n", "adc",
			"board.spi.adc: dev is required"},
		{"spi dev twice", "board:\n  spi: {a: {dev: \"0.0\"}, b: {dev: \"0.0\"}}\n", "b: {dev: ^\"0.0",
			`board.spi.b.dev: 0.0 is already SPI device "a"`},
		{"spi hz", "board:\n  spi: {adc: {dev: \"0.0\", hz: 0}}\n", "0}",
			"board.spi.adc.hz: must be from 1000 to 125000000 (Hz), found 0"},
		{"spi mode", "board:\n  spi: {adc: {dev: \"0.0\", mode: 4}}\n", "4}",
			"board.spi.adc.mode: must be 0, 1, 2 or 3, found 4"},
		{"spi key", "board:\n  spi: {adc: {dev: \"0.0\", speed: 4}}\n", "speed",
			`unknown key "speed" in board.spi.adc (valid: dev, hz, mode)`},
	} {
		t.Run(tc.name, func(t *testing.T) { problemAt(t, tc.src, tc.at, tc.msg) })
	}
}

// A simulated quantity that follows an output pin (sim.follows): decoded,
// its defaults filled in, written back the same.
func TestSensorsSimFollows(t *testing.T) {
	src := `board:
  pins:
    heater: {gpio: 22, mode: out}
  buses: {s: {i2c: "1"}}
  sensors:
    greenhouse: {driver: bme280, bus: s, sim: {temperature: 15, humidity: 60, follows: {pin: heater, rate: 0.5/min, toward: 30}}}
    lab: {driver: aht20, bus: s, sim: {humidity: 40, follows: {pin: heater, quantity: humidity, rate: 6/h, toward: 20, drift: 1/s}}}
`
	c := mustParse(t, src)
	if got, want := c.Board.Sensors["greenhouse"].Follows, (&SimFollows{Pin: "heater", Quantity: "temperature", Rate: 0.5, Drift: 0.5, Toward: 30}); !reflect.DeepEqual(got, want) {
		t.Errorf("greenhouse follows %+v, want %+v", got, want)
	}
	if got, want := c.Board.Sensors["lab"].Follows, (&SimFollows{Pin: "heater", Quantity: "humidity", Rate: 0.1, Drift: 60, Toward: 20}); !reflect.DeepEqual(got, want) {
		t.Errorf("lab follows %+v, want %+v", got, want)
	}
	if got := c.Board.Sensors["greenhouse"].Sim; !reflect.DeepEqual(got, map[string]float64{"temperature": 15, "humidity": 60}) {
		t.Errorf("greenhouse sim %v", got)
	}
	out, err := c.Redacted()
	if err != nil {
		t.Fatal(err)
	}
	if c2 := mustParse(t, string(out)); !reflect.DeepEqual(c.Board, c2.Board) {
		t.Errorf("round trip changed the board\n%+v\n%+v\n%s", c.Board, c2.Board, out)
	}
	for _, tc := range []struct {
		in   string
		want float64
	}{{"0.5/min", 0.5}, {"30/h", 0.5}, {"1/s", 60}, {" 2 / m ", 2}} {
		if got, err := ParseRate(tc.in); err != nil || got != tc.want {
			t.Errorf("ParseRate(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestSensorsSimFollowsProblems(t *testing.T) {
	const board = "board:\n  pins:\n    heater: {gpio: 22, mode: out}\n    button: {gpio: 27, mode: in}\n  buses: {s: {i2c: \"1\"}}\n  sensors:\n"
	for _, tc := range []struct{ name, src, at, msg string }{
		{"pin unknown", board + "    g: {driver: bme280, bus: s, sim: {temperature: 15, follows: {pin: heeter, rate: 0.5/min, toward: 30}}}\n", "heeter",
			`board.sensors.g.sim.follows.pin: no pin "heeter" in board.pins (configured: button, heater)`},
		{"pin an input", board + "    g: {driver: bme280, bus: s, sim: {temperature: 15, follows: {pin: button, rate: 0.5/min, toward: 30}}}\n", "button, rate",
			`board.sensors.g.sim.follows.pin: pin "button" is an input: a simulated quantity follows an output (mode: out)`},
		{"pin missing", board + "    g: {driver: bme280, bus: s, sim: {temperature: 15, follows: {rate: 0.5/min, toward: 30}}}\n", "follows",
			`board.sensors.g.sim.follows: pin is required (an output of board.pins`},
		{"rate syntax", board + "    g: {driver: bme280, bus: s, sim: {temperature: 15, follows: {pin: heater, rate: fast, toward: 30}}}\n", "fast",
			`board.sensors.g.sim.follows.rate: must be a change per time such as 0.5/min (per s, min or h), found "fast"`},
		{"rate without a unit", board + "    g: {driver: bme280, bus: s, sim: {temperature: 15, follows: {pin: heater, rate: 0.5, toward: 30}}}\n", "0.5,",
			`board.sensors.g.sim.follows.rate: must be a change per time such as 0.5/min (per s, min or h), found "0.5"`},
		{"rate per day", board + "    g: {driver: bme280, bus: s, sim: {temperature: 15, follows: {pin: heater, rate: 3/day, toward: 30}}}\n", "3/day",
			`board.sensors.g.sim.follows.rate: must be a change per time such as 0.5/min`},
		{"rate zero", board + "    g: {driver: bme280, bus: s, sim: {temperature: 15, follows: {pin: heater, rate: 0/min, toward: 30}}}\n", "0/min",
			`board.sensors.g.sim.follows.rate: must be more than 0 (such as 0.5/min), found "0/min"`},
		{"drift negative", board + "    g: {driver: bme280, bus: s, sim: {temperature: 15, follows: {pin: heater, rate: 1/min, drift: -1/min, toward: 30}}}\n", "-1/min",
			`board.sensors.g.sim.follows.drift: must be more than 0`},
		{"rate missing", board + "    g: {driver: bme280, bus: s, sim: {temperature: 15, follows: {pin: heater, toward: 30}}}\n", "follows",
			`board.sensors.g.sim.follows: rate is required (a change per time such as 0.5/min)`},
		{"toward missing", board + "    g: {driver: bme280, bus: s, sim: {temperature: 15, follows: {pin: heater, rate: 1/min}}}\n", "follows",
			`board.sensors.g.sim.follows: toward is required (where the pin drives temperature)`},
		{"toward out of range", board + "    g: {driver: bme280, bus: s, sim: {temperature: 15, follows: {pin: heater, rate: 1/min, toward: 300}}}\n", "300",
			`board.sensors.g.sim.follows.toward: 300 is outside a bme280's range of temperature (-40..85)`},
		{"quantity unknown", board + "    g: {driver: bme280, bus: s, sim: {temperature: 15, follows: {pin: heater, quantity: co2, rate: 1/min, toward: 30}}}\n", "co2",
			`board.sensors.g.sim.follows.quantity: a bme280 has no "co2" to follow the pin (it has humidity, pressure, temperature)`},
		{"no temperature", board + "    g: {driver: ina219, bus: s, sim: {voltage: 5, follows: {pin: heater, rate: 1/min, toward: 12}}}\n", "follows",
			`board.sensors.g.sim.follows: a ina219 has no "temperature" to follow the pin (it has current, power, voltage)`},
		{"start not set", board + "    g: {driver: bme280, bus: s, sim: {humidity: 50, follows: {pin: heater, rate: 1/min, toward: 30}}}\n", "follows",
			`board.sensors.g.sim.follows: temperature follows the pin, and sim does not set where it starts (and drifts back to): add temperature: VALUE to sim`},
		{"key unknown", board + "    g: {driver: bme280, bus: s, sim: {temperature: 15, follows: {pin: heater, rate: 1/min, toward: 30, speed: 2}}}\n", "speed",
			`unknown key "speed" in board.sensors.g.sim.follows (valid: pin, quantity, rate, toward, drift)`},
	} {
		t.Run(tc.name, func(t *testing.T) { problemAt(t, tc.src, tc.at, tc.msg) })
	}
	// The full form, as config check prints it.
	src := board + "    g: {driver: bme280, bus: s, sim: {temperature: 15, follows: {pin: button, rate: 0.5/min, toward: 30}}}\n"
	_, err := Parse([]byte(src), "clawedge.yaml", nil)
	if want := "clawedge.yaml:7:71: board.sensors.g.sim.follows.pin: pin \"button\" is an input: a simulated quantity follows an output (mode: out), as a heater or a fan"; err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
}

// The full form of a problem: the file, line and column, as config check prints it.
func TestSensorsProblemPosition(t *testing.T) {
	src := "board:\n  buses: {s: {i2c: \"1\"}}\n  sensors:\n    bad: {driver: bme280, bus: s, address: 0x50}\n"
	_, err := Parse([]byte(src), "clawedge.yaml", nil)
	if want := "clawedge.yaml:4:44: board.sensors.bad.address: a bme280 answers at 0x76 or 0x77, not 0x50"; err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
}

// Every yaml block of docs/sensors.md is a config that loads.
func TestSensorsDocLoads(t *testing.T) {
	doc, err := os.ReadFile("../docs/sensors.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllSubmatch(doc, -1)
	if len(blocks) == 0 {
		t.Fatal("no yaml block in docs/sensors.md")
	}
	for _, b := range blocks {
		if _, err := Parse(b[1], "sensors.md", nil); err != nil {
			t.Errorf("%v\n%s", err, b[1])
		}
	}
}
