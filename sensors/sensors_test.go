package sensors_test

import (
	"context"
	"errors"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/hal/sim"
	"github.com/clawedge/clawedge/sensors"
	"github.com/clawedge/clawedge/sensors/simchip"
)

func instant(context.Context, time.Duration) error { return nil }

// simBoard opens a sim board with an I²C bus "i2c" (1) and a 1-Wire bus
// "w" (w1), and specs on it.
func simBoard(t testing.TB, specs ...sensors.Spec) (*sensors.Set, *hal.Board) {
	t.Helper()
	b, err := hal.Open(sim.New(), hal.Config{
		Buses:   []hal.BusConfig{{Name: "i2c", Bus: "1"}},
		OneWire: []hal.OneWireConfig{{Name: "w", Bus: "w1"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	set, err := sensors.Open(b, specs, sensors.Options{Sleep: instant})
	if err != nil {
		t.Fatal(err)
	}
	return set, b
}

func read(t *testing.T, s *sensors.Sensor) map[sensors.Quantity]float64 {
	t.Helper()
	rs, err := s.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := map[sensors.Quantity]float64{}
	for _, r := range rs {
		got[r.Quantity] = r.Value
		if r.Sensor != s.Name() || r.Time.IsZero() {
			t.Errorf("reading %+v lacks its sensor or time", r)
		}
	}
	return got
}

// Every driver is periph's, reading a chip simulated at the register level:
// values set on the chip come back in units, within the chip's resolution,
// over the whole range (negative temperatures included).
func TestDriversRoundTrip(t *testing.T) {
	set, _ := simBoard(t,
		sensors.Spec{Name: "bme", Driver: "bme280", Bus: "i2c", Address: 0x76},
		sensors.Spec{Name: "bmp", Driver: "bmp280", Bus: "i2c", Address: 0x77},
		sensors.Spec{Name: "aht", Driver: "aht20", Bus: "i2c"},
		sensors.Spec{Name: "ina", Driver: "ina219", Bus: "i2c", Address: 0x40, ShuntOhms: 0.1},
		sensors.Spec{Name: "probe", Driver: "ds18b20", Bus: "w", ID: "28-00000a1b2c3d"},
	)
	type step struct {
		q         sensors.Quantity
		v, within float64
	}
	cases := map[string][]step{
		// Temperature 0.01 °C (its output's resolution) and the 18-bit
		// ADC; pressure 0.02 hPa; humidity 1/1024 %, rounded twice.
		"bme": {{sensors.Temperature, -40, 0.011}, {sensors.Temperature, -12.34, 0.011}, {sensors.Temperature, 0, 0.011}, {sensors.Temperature, 21.5, 0.011}, {sensors.Temperature, 84.99, 0.011},
			{sensors.Pressure, 300, 0.02}, {sensors.Pressure, 1013.25, 0.02}, {sensors.Pressure, 1100, 0.02},
			{sensors.Humidity, 0, 0.01}, {sensors.Humidity, 40, 0.01}, {sensors.Humidity, 99.5, 0.01}},
		"bmp": {{sensors.Temperature, -20.5, 0.011}, {sensors.Pressure, 870.3, 0.02}},
		// 20 bits over 200 °C and 100 %.
		"aht": {{sensors.Temperature, -39.9, 0.001}, {sensors.Temperature, 30.25, 0.001}, {sensors.Humidity, 12.5, 0.001}, {sensors.Humidity, 100, 0.001}},
		// 4 mV; the shunt's 10 µV (100 µA on 0.1 Ω) and the current register's 97.7 µA.
		"ina": {{sensors.Voltage, 0, 0.004}, {sensors.Voltage, 12.34, 0.004}, {sensors.Voltage, 26, 0.004}, {sensors.Current, -1.5, 0.0004}, {sensors.Current, 0.0123, 0.0004}, {sensors.Current, 3.1, 0.0004}},
		// 12 bits: 1/16 °C.
		"probe": {{sensors.Temperature, -55, 0.0625}, {sensors.Temperature, -10.125, 0.0625}, {sensors.Temperature, 0.5, 0.0625}, {sensors.Temperature, 124.9, 0.0625}},
	}
	for name, steps := range cases {
		s, err := set.Sensor(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range steps {
			if err := set.Simulate(name, st.q, st.v); err != nil {
				t.Fatal(err)
			}
			got := read(t, s)
			if d := math.Abs(got[st.q] - st.v); d > st.within {
				t.Errorf("%s: %s set to %g reads %g (off by %g, more than %g)", name, st.q, st.v, got[st.q], d, st.within)
			}
		}
	}
	// The INA219's power is the chip's own product of the two.
	ina, _ := set.Sensor("ina")
	set.Simulate("ina", sensors.Voltage, 12)
	set.Simulate("ina", sensors.Current, 2)
	if p := read(t, ina)[sensors.Power]; math.Abs(p-24) > 0.05 {
		t.Errorf("12 V × 2 A reads %g W", p)
	}
}

func TestReadFaults(t *testing.T) {
	set, _ := simBoard(t,
		sensors.Spec{Name: "bme", Driver: "bme280", Bus: "i2c", Address: 0x76},
		sensors.Spec{Name: "aht", Driver: "aht20", Bus: "i2c"},
		sensors.Spec{Name: "probe", Driver: "ds18b20", Bus: "w", ID: "28-00000a1b2c3d"},
	)
	ctx := context.Background()
	for _, tc := range []struct {
		sensor string
		fault  simchip.Fault
		want   string
	}{
		// Silent until cleared: a chip unplugged, then plugged back.
		{"bme", simchip.Skipped, `sensor bme (bme280 at 0x76 on bus "i2c"): the chip skipped the measurement`},
		{"bme", simchip.Silent, `sensor bme (bme280 at 0x76 on bus "i2c"): bus "i2c" (I²C 1): bme280: address 0x76: no acknowledge`},
		{"aht", simchip.BadCRC, "sensor aht (aht20 at 0x38 on bus \"i2c\"): "},
		{"probe", simchip.BadCRC, `sensor probe (ds18b20 28-00000a1b2c3d on bus "w"): `},
		{"probe", simchip.Silent, "did not respond"},
		{"probe", simchip.NoConversion, "reads its power-on 85 °C"},
	} {
		chip, _ := set.Chip(tc.sensor)
		s, _ := set.Sensor(tc.sensor)
		if _, err := s.Read(ctx); err != nil {
			t.Fatalf("%s before the fault: %v", tc.sensor, err)
		}
		count := 1
		if tc.fault == simchip.Silent {
			count = -1
		}
		if err := chip.Fail(tc.fault, count); err != nil {
			t.Fatal(err)
		}
		_, err := s.Read(ctx)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s with %s: %v\nwant it to say %q", tc.sensor, tc.fault, err, tc.want)
		}
		if tc.fault == simchip.Skipped && !errors.Is(err, sensors.ErrSkipped) {
			t.Errorf("a skipped measurement is not ErrSkipped: %v", err)
		}
		if last := s.Last(); last.Err == nil || last.Readings != nil {
			t.Errorf("%s: Last after a failure = %+v", tc.sensor, last)
		}
		if _, err := s.Read(ctx); tc.fault == simchip.Silent && err == nil {
			t.Errorf("%s: a silent chip answered its second read", tc.sensor)
		}
		chip.Fail(tc.fault, 0)
		// The fault is over: the sensor answers again, set up anew.
		if _, err := s.Read(ctx); err != nil {
			t.Errorf("%s after the fault: %v", tc.sensor, err)
		}
	}
}

func TestOpenProblems(t *testing.T) {
	b, err := hal.Open(sim.New(), hal.Config{Buses: []hal.BusConfig{{Name: "i2c", Bus: "1"}}, OneWire: []hal.OneWireConfig{{Name: "w", Bus: "w1"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	_, err = sensors.Open(b, []sensors.Spec{
		{Name: "a", Driver: "bme680", Bus: "i2c"},
		{Name: "b", Driver: "bme280", Bus: "nope", Address: 0x76},
		{Name: "c", Driver: "bme280", Bus: "i2c", Address: 0x40},
		{Name: "d", Driver: "ds18b20", Bus: "w", ID: "10-00000a1b2c3d"},
		{Name: "e", Driver: "ds18b20", Bus: "i2c", ID: "28-00000a1b2c3d"},
		{Name: "f", Driver: "bme280", Bus: "i2c", Address: 0x76, Sim: map[sensors.Quantity]float64{sensors.Humidity: 120}},
	}, sensors.Options{})
	for _, want := range []string{
		`sensor "a": driver "bme680"`,
		`sensor "b": a bme280 is on an I²C bus: unknown bus "nope"`,
		`sensor "c": a bme280 answers at 0x76 or 0x77, not 0x40`,
		`sensor "d": 1-Wire id 10-00000a1b2c3d: family 0x10 is not a DS18B20's`,
		`sensor "e": a ds18b20 is on a 1-Wire bus: unknown 1-Wire bus "i2c"`,
		`sensor "f": sim: humidity 120 is outside the chip's range 0..100`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Open: %v\nwant it to say %s", err, want)
		}
	}
}

// A chip sold as a BME280 that is a BMP280 is named, with the fix.
func TestWrongChip(t *testing.T) {
	s := sim.New()
	b, _ := hal.Open(s, hal.Config{Buses: []hal.BusConfig{{Name: "i2c", Bus: "1"}}})
	defer b.Close()
	set, err := sensors.Open(b, []sensors.Spec{{Name: "gh", Driver: "bme280", Bus: "i2c", Address: 0x76}}, sensors.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.PlaceI2C("1", 0x76, simchip.NewBMP280())
	sn, _ := set.Sensor("gh")
	if _, err := sn.Read(context.Background()); err == nil || !strings.Contains(err.Error(), "the chip at 0x76 is a BMP280, not a BME280: set its driver to bmp280") {
		t.Errorf("a BMP280 read as a BME280: %v", err)
	}
}

func TestSimulateRefuses(t *testing.T) {
	set, _ := simBoard(t, sensors.Spec{Name: "ina", Driver: "ina219", Bus: "i2c", Address: 0x40})
	for _, tc := range []struct {
		name string
		q    sensors.Quantity
		v    float64
		want string
	}{
		{"nope", sensors.Voltage, 1, `unknown sensor "nope" (configured: ina)`},
		{"ina", sensors.Humidity, 1, `sensor ina measures voltage, current, power, not "humidity"`},
		{"ina", sensors.Power, 1, "power is voltage times current"},
		{"ina", sensors.Current, 5, "current 5 is outside the chip's range -3.2..3.2"},
		{"ina", sensors.Voltage, math.NaN(), "outside the chip's range"},
	} {
		if err := set.Simulate(tc.name, tc.q, tc.v); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Simulate(%s, %s, %g) = %v, want %q", tc.name, tc.q, tc.v, err, tc.want)
		}
	}
}

func TestOneWireID(t *testing.T) {
	f, serial, err := sensors.ParseOneWireID("28-00000a1b2c3d")
	if err != nil || f != 0x28 || serial != 0x0a1b2c3d {
		t.Fatalf("ParseOneWireID = %#x, %#x, %v", f, serial, err)
	}
	if got, want := sensors.OneWireROM(f, serial), simchip.ROM(0x28, serial); got != want {
		t.Errorf("ROM %#x, the simulated chip's %#x", got, want)
	}
	for _, bad := range []string{"", "28", "28-", "28-00000a1b2c3", "28-00000a1b2c3dd", "2800000a1b2c3d", "g8-00000a1b2c3d", "28-+0000a1b2c3d", "28-0x000a1b2c3d", "28-00000a1b2c3d-"} {
		if _, _, err := sensors.ParseOneWireID(bad); err == nil {
			t.Errorf("ParseOneWireID(%q) accepted", bad)
		}
	}
}

func FuzzParseOneWireID(f *testing.F) {
	f.Add("28-00000a1b2c3d")
	f.Add("10-ffffffffffff")
	f.Fuzz(func(t *testing.T, id string) {
		fam, serial, err := sensors.ParseOneWireID(id)
		if err != nil {
			return
		}
		if serial >= 1<<48 {
			t.Fatalf("%q: serial %#x has more than 48 bits", id, serial)
		}
		// An accepted id is one name of exactly that device.
		if again, s2, err := sensors.ParseOneWireID(strings.ToLower(id)); err != nil || again != fam || s2 != serial {
			t.Fatalf("%q read as %#x %#x, lower-case as %#x %#x, %v", id, fam, serial, again, s2, err)
		}
		rom := sensors.OneWireROM(fam, serial)
		if byte(rom) != fam || rom>>8&(1<<48-1) != serial {
			t.Fatalf("%q: ROM %#x does not hold family %#x and serial %#x", id, rom, fam, serial)
		}
	})
}

// plainBoard is a board whose driver is not a simulator.
func plainBoard(t *testing.T) *hal.Board {
	b, err := hal.Open(notSim{sim.New()}, hal.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

type notSim struct{ d hal.Driver }

func (n notSim) Name() string                                     { return "plain" }
func (n notSim) Line(g int) (hal.Line, error)                     { return n.d.Line(g) }
func (n notSim) OpenPort(dev string, b int) (hal.PortConn, error) { return n.d.OpenPort(dev, b) }
func (n notSim) OpenBus(bus string) (hal.Bus, error)              { return n.d.OpenBus(bus) }
func (n notSim) Close() error                                     { return n.d.Close() }

// tempDir is a folder for the example's store, removed when the tests end.
func tempDir() (string, error) {
	d, err := os.MkdirTemp("", "sensors-example")
	if err == nil {
		exampleDirs = append(exampleDirs, d)
	}
	return d, err
}

var exampleDirs []string

func TestMain(m *testing.M) {
	code := m.Run()
	for _, d := range exampleDirs {
		os.RemoveAll(d)
	}
	os.Exit(code)
}
