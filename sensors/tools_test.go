package sensors_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/sensors"
	"github.com/clawedge/clawedge/sensors/simchip"
	"github.com/clawedge/clawedge/store"
	"github.com/clawedge/clawedge/tools"
)

func call(t *testing.T, reg *tools.Registry, name string, params ...grammar.Param) (tools.Result, error) {
	t.Helper()
	tl, err := reg.Lookup(name)
	if err != nil {
		return tools.Result{}, err
	}
	args, err := tl.Spec().Validate(params)
	if err != nil {
		return tools.Result{}, err
	}
	return tl.Run(context.Background(), args)
}

func p(k string, v any) grammar.Param {
	switch x := v.(type) {
	case string:
		return grammar.Param{Key: k, Value: grammar.StringValue(x)}
	case int:
		return grammar.Param{Key: k, Value: grammar.IntValue(int64(x))}
	case float64:
		return grammar.Param{Key: k, Value: grammar.FloatValue(x)}
	}
	panic(fmt.Sprintf("param %T", v))
}

func newHistory(t *testing.T) *store.History {
	t.Helper()
	st, err := store.Open(t.TempDir(), store.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	h, err := st.History(store.HistoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestTools(t *testing.T) {
	set, _ := simBoard(t,
		sensors.Spec{Name: "greenhouse", Driver: "bme280", Bus: "i2c", Address: 0x76, Every: 30 * time.Second,
			Sim: map[sensors.Quantity]float64{sensors.Temperature: 21.5, sensors.Humidity: 40, sensors.Pressure: 1013.2}},
		sensors.Spec{Name: "soil", Driver: "ds18b20", Bus: "w", ID: "28-00000a1b2c3d"},
	)
	hist := newHistory(t)
	reg := tools.NewRegistry()
	if err := sensors.Register(reg, set, hist); err != nil {
		t.Fatal(err)
	}
	if err := sensors.RegisterSim(reg, set); err != nil {
		t.Fatal(err)
	}
	for name, ro := range map[string]bool{"sensor/list": true, "sensor/read": true, "sensor/history": true, "sim/set": false} {
		tl, err := reg.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		if tools.WithoutEffects(tl) != ro {
			t.Errorf("%s read-only: %v, want %v", name, !ro, ro)
		}
	}

	r, err := call(t, reg, "sensor/read", p("name", "greenhouse"), p("quantity", "temperature"))
	if err != nil {
		t.Fatal(err)
	}
	if v, err := r.Number(); err != nil || v != 21.5 || r.Fields["unit"].Str != "°C" || !strings.HasPrefix(r.Text, "greenhouse temperature 21.50 °C at ") {
		t.Errorf("sensor/read one quantity: %+v (number %v, %v)", r, v, err)
	}
	r, err = call(t, reg, "sensor/read", p("name", "greenhouse"))
	if err != nil || r.Fields["pressure"].Float != 1013.2 || r.Fields["humidity"].Float != 40 || !strings.HasPrefix(r.Text, "greenhouse: temperature 21.50 °C, humidity 40.00%, pressure 1013.20 hPa at ") {
		t.Errorf("sensor/read all: %+v, %v", r, err)
	}
	if _, err := call(t, reg, "sensor/read", p("name", "soil"), p("quantity", "pressure")); err == nil || !strings.Contains(err.Error(), `sensor soil measures temperature, not "pressure"`) {
		t.Errorf("a quantity the sensor lacks: %v", err)
	}
	if _, err := call(t, reg, "sensor/read", p("name", "attic")); err == nil {
		t.Error("an unconfigured sensor was read")
	}

	r, err = call(t, reg, "sim/set", p("sensor", "greenhouse"), p("quantity", "temperature"), p("value", 17.2))
	if err != nil || r.Text != "greenhouse temperature set to 17.20 °C (simulated)" {
		t.Errorf("sim/set: %+v, %v", r, err)
	}
	r, _ = call(t, reg, "sensor/read", p("name", "greenhouse"), p("quantity", "temperature"))
	if v, _ := r.Number(); v != 17.2 {
		t.Errorf("after sim/set 17.2 the sensor reads %v", v)
	}
	if _, err := call(t, reg, "sim/set", p("sensor", "greenhouse"), p("quantity", "temperature"), p("value", 200.0)); err == nil || !strings.Contains(err.Error(), "outside the chip's range -40..85") {
		t.Errorf("sim/set past the range: %v", err)
	}

	r, _ = call(t, reg, "sensor/list")
	if !strings.Contains(r.Text, `greenhouse: bme280 at 0x76 on bus "i2c"; temperature °C, humidity %, pressure hPa; every 30s; simulated; last temperature 17.20 °C, humidity 40.00%, pressure 1013.20 hPa`) ||
		!strings.Contains(r.Text, `soil: ds18b20 28-00000a1b2c3d on bus "w"; temperature °C; every 1m0s; simulated`) {
		t.Errorf("sensor/list:\n%s", r.Text)
	}

	// A history filled by the sampler, queried by the tool.
	smp := sensors.NewSampler(set, sensors.SamplerOptions{History: hist})
	gh, _ := set.Sensor("greenhouse")
	for i := 0; i < 5; i++ {
		set.Simulate("greenhouse", sensors.Temperature, 10+float64(i))
		if s := smp.SampleOnce(context.Background(), gh); s.Err != nil {
			t.Fatal(s.Err)
		}
	}
	r, err = call(t, reg, "sensor/history", p("name", "greenhouse"), p("quantity", "temperature"), p("since", "1h"), p("points", 10))
	if err != nil {
		t.Fatal(err)
	}
	mins, maxs, counts := r.Fields["min"].Items, r.Fields["max"].Items, r.Fields["count"].Items
	total := int64(0)
	for _, c := range counts {
		total += c.Int
	}
	if len(mins) == 0 || mins[0].Float != 10 || maxs[len(maxs)-1].Float != 14 || total != 5 || !strings.Contains(r.Text, "greenhouse temperature (°C) over the past 1h: ") {
		t.Errorf("sensor/history = %s\n%+v", r.Text, r.Fields)
	}
	if _, err := call(t, reg, "sensor/history", p("name", "greenhouse"), p("quantity", "temperature"), p("since", "2y")); err == nil || !strings.Contains(err.Error(), `since "2y"`) {
		t.Errorf("since 2y: %v", err)
	}
	r, _ = call(t, reg, "sensor/history", p("name", "soil"), p("quantity", "temperature"))
	if !strings.HasSuffix(r.Text, "no readings") {
		t.Errorf("a sensor never sampled: %q", r.Text)
	}
}

func TestSimSetOnlyOnTheSim(t *testing.T) {
	set, err := sensors.Open(plainBoard(t), nil, sensors.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := sensors.RegisterSim(tools.NewRegistry(), set); err == nil {
		t.Error("sim/set registered on a board that is not simulated")
	}
	reg := tools.NewRegistry()
	if err := sensors.Register(reg, set, nil); err != nil {
		t.Fatal(err)
	}
	if specs := reg.Specs(); len(specs) != 1 || specs[0].Name != "sensor/list" {
		t.Errorf("no sensors: %v", specs)
	}
}

func TestParseSince(t *testing.T) {
	for in, want := range map[string]time.Duration{"24h": 24 * time.Hour, "90m": 90 * time.Minute, "7d": 7 * 24 * time.Hour, "1h30m": 90 * time.Minute, "366d": 366 * 24 * time.Hour} {
		if got, err := sensors.ParseSince(in); err != nil || got != want {
			t.Errorf("ParseSince(%q) = %v, %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "d", "-1h", "30s", "367d", "9999999999d", "1y", "7 d", "+7d", "1e3h"} {
		if _, err := sensors.ParseSince(bad); err == nil {
			t.Errorf("ParseSince(%q) accepted", bad)
		}
	}
}

func FuzzParseSince(f *testing.F) {
	for _, s := range []string{"24h", "7d", "90m", "1h30m", "0d", "-5m"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := sensors.ParseSince(s)
		if err == nil && (d < time.Minute || d > 366*24*time.Hour) {
			t.Fatalf("ParseSince(%q) = %v, outside 1m..366d", s, d)
		}
	})
}

// Hours of sampling under a fake clock, with a sensor that flaps: the
// history answers, the failures are gaps, and the log is told little.
func TestSamplerFakeClock(t *testing.T) {
	// A DS18B20: its conversion wait is the Options' (instant here),
	// where the other drivers sleep inside periph.
	set, _ := simBoard(t, sensors.Spec{Name: "gh", Driver: "ds18b20", Bus: "w", ID: "28-00000a1b2c3d", Every: 30 * time.Second})
	hist := newHistory(t)
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	var logs []string
	var samples, failed int
	smp := sensors.NewSampler(set, sensors.SamplerOptions{
		History: hist,
		Now:     func() time.Time { return now },
		Log:     func(m string) { mu.Lock(); logs = append(logs, m); mu.Unlock() },
		OnSample: func(s sensors.Sample) {
			samples++
			if s.Err != nil {
				failed++
			}
		},
	})
	gh, _ := set.Sensor("gh")
	chip, _ := set.Chip("gh")
	ctx := context.Background()
	// Six hours at 30 s; from 2h to 3h every other read fails.
	for i := 0; i < 6*120; i++ {
		set.Simulate("gh", sensors.Temperature, 20+5*math.Sin(float64(i)/120*math.Pi))
		flap := i >= 240 && i < 360 && i%2 == 0
		if flap {
			chip.Fail(simchip.Silent, -1)
		}
		smp.SampleOnce(ctx, gh)
		if flap {
			chip.Fail(simchip.Silent, 0)
		}
		now = now.Add(30 * time.Second)
	}
	if samples != 720 || failed != 60 {
		t.Errorf("%d samples, %d failed; want 720 and 60", samples, failed)
	}
	// A failure and a recovery each 10 minutes of the flapping hour.
	if len(logs) < 2 || len(logs) > 14 {
		t.Errorf("%d log lines for an hour of flapping:\n%s", len(logs), strings.Join(logs, "\n"))
	}
	pts, err := hist.Query("gh/temperature", now.Add(-6*time.Hour), now, 6)
	if err != nil || len(pts) != 6 {
		t.Fatalf("%d points, %v", len(pts), err)
	}
	for i, pt := range pts {
		want := 120
		if i == 2 {
			want = 60 // the failed reads are gaps, not values
		}
		if pt.Count != want || pt.Min < 14.9 || pt.Max > 25.1 {
			t.Errorf("hour %d: %+v; want %d samples within 15..25", i, pt, want)
		}
	}
}
