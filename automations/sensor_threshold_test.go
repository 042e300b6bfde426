package automations

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/hal/sim"
	"github.com/clawedge/clawedge/sensors"
	"github.com/clawedge/clawedge/tools"
)

// TestSensorThresholdWithHysteresis (issue 37): when: {read:
// '@sensor/read{name="greenhouse";quantity="temperature"}', below: 18,
// hysteresis: 0.5}, polled every minute on the scheduler's clock, reading a
// simulated BME280 through periph's driver: sim/set moving the temperature
// below 18 fires it once; wavering between 17.6 and 18.4 (inside the
// hysteresis) fires nothing more; back above 18.5 re-arms it, and the next
// fall below 18 fires again.
func TestSensorThresholdWithHysteresis(t *testing.T) {
	b, err := hal.Open(sim.New(), hal.Config{Buses: []hal.BusConfig{{Name: "sensors", Bus: "1"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	set, err := sensors.Open(b, []sensors.Spec{{Name: "greenhouse", Driver: "bme280", Bus: "sensors", Address: 0x76,
		Sim: map[sensors.Quantity]float64{sensors.Temperature: 21.5, sensors.Humidity: 40, sensors.Pressure: 1013.2}}}, sensors.Options{})
	if err != nil {
		t.Fatal(err)
	}
	reg := tools.NewRegistry()
	if err := sensors.Register(reg, set, nil); err != nil {
		t.Fatal(err)
	}
	if err := sensors.RegisterSim(reg, set); err != nil {
		t.Fatal(err)
	}
	below := 18.0
	r := newRig(t, time.Now())
	runner := &tools.Runner{Registry: reg, Audit: r.st}
	er := newEventRig(t, Spec{Name: "frost", Read: `@sensor/read{name="greenhouse";quantity="temperature"}`, Every: time.Minute,
		Below: &below, Hysteresis: 0.5}, Effects{Runner: runner})
	simSet := func(v float64) {
		t.Helper()
		line := fmt.Sprintf(`@sim/set{sensor="greenhouse";quantity="temperature";value=%g}`, v)
		cmd, err := grammar.Parse(line, grammar.ParseOptions{Namespaces: reg.Namespaces()})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := runner.Run(context.Background(), tools.Caller{Channel: "test", User: "test", Actor: tools.Person}, cmd); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
	}
	// The reading each poll sees, and whether it fires: 21.5 is the
	// config's; 18.0 is not below 18; 18.4 is inside 18 + 0.5.
	steps := []struct {
		v    float64
		fire bool
	}{{21.5, false}, {17.2, true}, {18.3, false}, {17.9, false}, {18.4, false}, {17.6, false}, {18.0, false}, {17.95, false},
		{19.0, false}, {17.5, true}, {17.4, false}}
	fires := 0
	for i, st := range steps {
		if i > 0 {
			simSet(st.v)
			er.clock.advance(time.Minute)
		}
		er.armed(t) // the poll has read, and its sleep is armed
		er.s.Wait()
		select {
		case got := <-er.fired:
			fires++
			if !st.fire {
				t.Errorf("fired at poll %d (%g °C) with %s", i, st.v, got)
			}
		default:
			if st.fire {
				t.Errorf("did not fire at poll %d (%g °C)", i, st.v)
			}
		}
	}
	if fires != 2 {
		t.Errorf("%d fires, want 2: one per fall below 18, none while it wavers inside the hysteresis", fires)
	}
}
