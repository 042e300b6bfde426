package sensors_test

import (
	"context"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawedge/clawedge/config"
	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/hal/sim"
	"github.com/clawedge/clawedge/sensors"
	"github.com/clawedge/clawedge/tools"
)

// clock is a fake time for the simulated world: it moves when the test
// says.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

var dusk = time.Date(2026, 6, 1, 19, 0, 0, 0, time.UTC)

// heaterBoard is a sim board with a heater output, a door input and an
// I²C bus, its sensors opened on a fake clock.
func heaterBoard(t *testing.T, specs ...sensors.Spec) (*sensors.Set, *hal.Board, *sim.Sim, *clock) {
	t.Helper()
	drv := sim.New()
	b, err := hal.Open(drv, hal.Config{
		Pins: []hal.PinConfig{
			{Name: "heater", GPIO: 22, Mode: hal.ModeOut},
			{Name: "door", GPIO: 23, Mode: hal.ModeIn, Pull: hal.PullDown, Edge: hal.EdgeBoth},
			{Name: "lid", GPIO: 24, Mode: hal.ModeIn, Pull: hal.PullUp, ActiveLow: true},
		},
		Buses: []hal.BusConfig{{Name: "i2c", Bus: "1"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	c := &clock{now: dusk}
	set, err := sensors.Open(b, specs, sensors.Options{Sleep: instant, Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	return set, b, drv, c
}

func temperature(t *testing.T, s *sensors.Sensor) float64 {
	t.Helper()
	r, err := s.ReadQuantity(context.Background(), sensors.Temperature)
	if err != nil {
		t.Fatal(err)
	}
	return r.Value
}

func near(got, want float64) bool { return math.Abs(got-want) < 0.02 }

// TestSimFollowsAPin: a simulated BME280's temperature follows the heater:
// it warms at the rate toward where the heater drives it while the pin is
// high, cools back toward where it started at the drift while it is low,
// never past either, from the fake clock's time at each read; what sim/set
// sets is where it rests from then on.
func TestSimFollowsAPin(t *testing.T) {
	set, b, _, c := heaterBoard(t, sensors.Spec{Name: "greenhouse", Driver: "bme280", Bus: "i2c", Address: 0x76,
		Sim:     map[sensors.Quantity]float64{sensors.Temperature: 15, sensors.Humidity: 60},
		Follows: &sensors.Follow{Pin: "heater", Quantity: sensors.Temperature, Rate: 0.5, Drift: 0.2, Toward: 30}})
	gh, err := set.Sensor("greenhouse")
	if err != nil {
		t.Fatal(err)
	}
	heater, err := b.Pin("heater")
	if err != nil {
		t.Fatal(err)
	}
	if v := temperature(t, gh); !near(v, 15) {
		t.Fatalf("at the start %v, want 15", v)
	}
	c.add(time.Hour) // the heater is off: it stays where it rests
	if v := temperature(t, gh); !near(v, 15) {
		t.Errorf("an hour with the heater off: %v, want 15", v)
	}
	heater.Write(hal.High)
	c.add(10 * time.Minute)
	if v := temperature(t, gh); !near(v, 20) {
		t.Errorf("10 minutes of heating at 0.5/min: %v, want 20", v)
	}
	c.add(10 * time.Minute)
	if v := temperature(t, gh); !near(v, 25) {
		t.Errorf("20 minutes of heating: %v, want 25", v)
	}
	c.add(5 * time.Hour)
	if v := temperature(t, gh); !near(v, 30) {
		t.Errorf("hours of heating: %v, want 30 (where the heater drives it, not past)", v)
	}
	heater.Write(hal.Low)
	c.add(25 * time.Minute)
	if v := temperature(t, gh); !near(v, 25) {
		t.Errorf("25 minutes cooling at 0.2/min: %v, want 25", v)
	}
	if r, _ := gh.ReadQuantity(context.Background(), sensors.Temperature); !r.Time.Equal(c.Now()) {
		t.Errorf("a reading's time is %v, want the clock's %v", r.Time, c.Now())
	}
	c.add(10 * time.Hour)
	if v := temperature(t, gh); !near(v, 15) {
		t.Errorf("a night cooling: %v, want 15 (where it started, not past)", v)
	}
	// The humidity does not follow.
	if r, _ := gh.ReadQuantity(context.Background(), sensors.Humidity); !near(r.Value, 60) {
		t.Errorf("humidity %v, want 60", r.Value)
	}
	// sim/set: the world is now 10, and rests there.
	if err := set.Simulate("greenhouse", sensors.Temperature, 10); err != nil {
		t.Fatal(err)
	}
	c.add(time.Hour)
	if v := temperature(t, gh); !near(v, 10) {
		t.Errorf("an hour after sim/set 10, heater off: %v", v)
	}
	heater.Write(hal.High)
	c.add(4 * time.Minute)
	if v := temperature(t, gh); !near(v, 12) {
		t.Errorf("4 minutes of heating from 10: %v, want 12", v)
	}
}

// TestSimFollowsFromConfig: the config's sim.follows reaches the Spec (the
// drift defaults to the rate); Open refuses a pin that is not an output of
// the board, or that is not there, naming the sensor.
func TestSimFollowsFromConfig(t *testing.T) {
	specs := sensors.FromConfig(config.Board{Sensors: map[string]config.Sensor{
		"greenhouse": {Driver: "bme280", Bus: "i2c", Address: 0x76, Sim: map[string]float64{"temperature": 15},
			Follows: &config.SimFollows{Pin: "heater", Quantity: "temperature", Rate: 0.5, Drift: 0.5, Toward: 30}},
	}})
	if f := specs[0].Follows; f == nil || *f != (sensors.Follow{Pin: "heater", Quantity: sensors.Temperature, Rate: 0.5, Drift: 0.5, Toward: 30}) {
		t.Fatalf("follows %+v", f)
	}
	drv := sim.New()
	b, err := hal.Open(drv, hal.Config{Pins: []hal.PinConfig{{Name: "door", GPIO: 23, Mode: hal.ModeIn}}, Buses: []hal.BusConfig{{Name: "i2c", Bus: "1"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for pin, want := range map[string]string{
		"door":   `sensor "greenhouse": sim: follows pin "door", an input: a simulated quantity follows an output`,
		"heater": `sensor "greenhouse": sim: follows: unknown pin "heater"`,
	} {
		sp := specs[0]
		f := *sp.Follows
		f.Pin = pin
		sp.Follows = &f
		if _, err := sensors.Open(b, []sensors.Spec{sp}, sensors.Options{}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("follows %s: %v, want %q", pin, err, want)
		}
	}
}

// TestSimDrive: sim/drive drives an input of the simulated board as the
// world would, in logical levels (an active-low input reads what it was
// driven to), and refuses an output.
func TestSimDrive(t *testing.T) {
	set, b, drv, _ := heaterBoard(t, sensors.Spec{Name: "greenhouse", Driver: "bme280", Bus: "i2c", Address: 0x76})
	reg := tools.NewRegistry()
	if err := sensors.RegisterSim(reg, set); err != nil {
		t.Fatal(err)
	}
	tl, err := reg.Lookup("sim/drive")
	if err != nil {
		t.Fatal(err)
	}
	if tools.WithoutEffects(tl) {
		t.Error("sim/drive is listed as a read")
	}
	if got := tl.Spec().Params[0].Enum; strings.Join(got, ",") != "door,lid" {
		t.Errorf("sim/drive's pins: %v, want the inputs door, lid", got)
	}
	level := func(name string) hal.Level {
		p, err := b.Pin(name)
		if err != nil {
			t.Fatal(err)
		}
		l, err := p.Read()
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	r, err := call(t, reg, "sim/drive", p("pin", "door"), p("value", 1))
	if err != nil || r.Text != "door driven high (simulated)" || level("door") != hal.High || drv.Level(23) != hal.High {
		t.Errorf("sim/drive door 1: %q %v; the door reads %v", r.Text, err, level("door"))
	}
	if _, err := call(t, reg, "sim/drive", p("pin", "lid"), p("value", 1)); err != nil || level("lid") != hal.High || drv.Level(24) != hal.Low {
		t.Errorf("sim/drive lid 1: %v; the lid reads %v (line %v)", err, level("lid"), drv.Level(24))
	}
	if _, err := call(t, reg, "sim/drive", p("pin", "door"), p("value", 0)); err != nil || level("door") != hal.Low {
		t.Errorf("sim/drive door 0: %v; the door reads %v", err, level("door"))
	}
	if _, err := call(t, reg, "sim/drive", p("pin", "heater"), p("value", 1)); err == nil || !strings.Contains(err.Error(), "must be one of door, lid") {
		t.Errorf("sim/drive of an output: %v", err)
	}
}
