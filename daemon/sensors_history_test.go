package daemon

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/clawedge/clawedge/channels"
	"github.com/clawedge/clawedge/sensors"
	"github.com/clawedge/clawedge/tools"
)

// TestHoursOfSamplingStayInTheBudget (issue 37): six hours of sampling the
// daemon's sensors every 30 s on a fake clock (a simulated BME280 and
// INA219, read by periph's drivers, the temperature swinging each hour),
// through the daemon's own sampler wiring (history, goals' feed, MQTT
// board): sensor/history answers with the samples in their buckets, and the
// store keeps the history within its reserved share of a small budget,
// which the store line of status says.
func TestHoursOfSamplingStayInTheBudget(t *testing.T) {
	cfg := sensorsConfig(t)
	cfg.Store.MaxMB = 16
	a, err := Open(cfg, Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	const hours = 6
	end := time.Now()
	now := end.Add(-hours * time.Hour)
	smp := sensors.NewSampler(a.sensors, sensors.SamplerOptions{History: a.history, OnSample: a.sampled, Now: func() time.Time { return now }})
	ctx := context.Background()
	samples := 0
	for ; now.Before(end); now = now.Add(30 * time.Second) {
		// 15..25 °C over each hour: every hour's bucket spans it.
		temp := 20 + 5*math.Sin(2*math.Pi*float64(now.Unix()%3600)/3600)
		if err := a.sensors.Simulate("greenhouse", sensors.Temperature, temp); err != nil {
			t.Fatal(err)
		}
		for _, s := range a.sensors.Sensors() {
			if got := smp.SampleOnce(ctx, s); got.Err != nil {
				t.Fatalf("%s at %s: %v", s.Name(), now, got.Err)
			}
		}
		samples++
	}
	if err := a.history.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, err := a.store.Prune(); err != nil {
		t.Fatal(err)
	}

	rep, err := channels.Run(ctx, a.runner, tools.Caller{Channel: "control", User: "uid:1000", Actor: tools.Person}, `@sensor/history{name="greenhouse";quantity="temperature";since="7h";points=7}`)
	if err != nil {
		t.Fatal(err)
	}
	res := rep.Stages[0].Calls[0].Result
	counts, mins, maxs := res.Fields["count"].Items, res.Fields["min"].Items, res.Fields["max"].Items
	if len(counts) < hours || len(counts) > hours+1 {
		t.Fatalf("%d points for 6 hours of the past 7:\n%s", len(counts), res.Text)
	}
	total := int64(0)
	for i := range counts {
		total += counts[i].Int
		if i > 0 && i < len(counts)-1 && (mins[i].Float > 15.1 || maxs[i].Float < 24.9) {
			t.Errorf("hour %d: %g..%g, want the swing 15..25\n%s", i, mins[i].Float, maxs[i].Float, res.Text)
		}
	}
	if total != int64(samples) {
		t.Errorf("the history holds %d samples of %d\n%s", total, samples, res.Text)
	}

	u, err := a.store.Usage()
	if err != nil {
		t.Fatal(err)
	}
	if want := 6; u.History.Series != want || u.History.Bytes > u.History.Reserved || u.Live > u.Budget {
		t.Errorf("store usage %+v: want %d series within their reserve, all within the budget", u, want)
	}
	if line := UsageLine(u); !strings.Contains(line, "reserved for its 6 series") {
		t.Errorf("status's store line: %s", line)
	}
	t.Logf("%d samples of 2 sensors: %s", samples, UsageLine(u))
}
