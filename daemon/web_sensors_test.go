package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/clawedge/clawedge/channels"
	"github.com/clawedge/clawedge/channels/web"
	"github.com/clawedge/clawedge/channels/web/webtest"
	"github.com/clawedge/clawedge/config"
	"github.com/clawedge/clawedge/sensors"
	"github.com/clawedge/clawedge/tools"
)

// TestSensorsPageInChromium (issue 39), the whole daemon on the simulated
// board with its dashboard: two hours of simulated time in which sim/set
// moves the greenhouse BME280's temperature every five minutes and a
// sampler on a fake clock reads it every 30 s into the store's history;
// then the daemon serves, a browser pairs and opens /sensors: the
// temperature's chart has at least 50 points, spanning the swing, and
// after a new sim/set the large reading shows it within 2 s (the daemon's
// sampler, every second here, publishing on the event stream). A write of
// the led audited before the daemon served is a step of its chart, by its
// caller.
func TestSensorsPageInChromium(t *testing.T) {
	bin := webtest.Chromium(t)
	cfg := sensorsConfig(t)
	off := false
	cfg.Console.Stdin = &off
	cfg.Web = &config.Web{Listen: "127.0.0.1:0"}
	served := make(chan string, 1)
	a, err := Open(cfg, Options{Version: "test", Log: slog.New(&urlCatcher{msg: "web: serving the dashboard", urls: served})})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()

	// The past two hours, on a fake clock.
	ctx := context.Background()
	control := tools.Caller{Channel: "control", User: "uid:1000", Actor: tools.Person}
	simSet := func(v float64) {
		t.Helper()
		rep, err := channels.Run(ctx, a.runner, control, fmt.Sprintf(`@sim/set{sensor="greenhouse";quantity="temperature";value=%g}`, v))
		if err == nil {
			err = rep.Err()
		}
		if err != nil {
			t.Fatalf("sim/set %g: %v", v, err)
		}
	}
	end := time.Now()
	now := end.Add(-2 * time.Hour)
	smp := sensors.NewSampler(a.sensors, sensors.SamplerOptions{History: a.history, Now: func() time.Time { return now }})
	gh, err := a.sensors.Sensor("greenhouse")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; now.Before(end); now, i = now.Add(30*time.Second), i+1 {
		if i%10 == 0 { // 14..26 °C over each hour
			simSet(math.Round((20+6*math.Sin(2*math.Pi*float64(i)/120))*100) / 100)
		}
		if got := smp.SampleOnce(ctx, gh); got.Err != nil {
			t.Fatalf("sampling at %s: %v", now, got.Err)
		}
	}
	if err := a.history.Flush(); err != nil {
		t.Fatal(err)
	}
	// A write before the dashboard starts: its pin's step chart has it,
	// from the audit.
	if rep, err := channels.Run(ctx, a.runner, control, `@gpio/write{pin="led";value=1}`); err != nil || rep.Err() != nil {
		t.Fatalf("gpio/write: %v %v", err, rep.Err())
	}

	sctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- a.Serve(sctx) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()
	var base string
	select {
	case base = <-served:
		base = strings.TrimSuffix(base, "/")
	case err := <-done:
		t.Fatalf("the daemon stopped: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("no dashboard after 30s")
	}
	code, _, err := a.webSessions.Pair("phone", web.Owner)
	if err != nil {
		t.Fatal(err)
	}
	bctx := webtest.Start(t, bin)
	bt, cancel := context.WithTimeout(bctx, 60*time.Second)
	defer cancel()
	if err := webtest.Pair(bt, base, code); err != nil {
		t.Fatalf("pairing: %v", err)
	}
	const chart = `window.clawedgeCharts.filter(function (c) { return c.series === "greenhouse/temperature"; })[0].u.data`
	err = chromedp.Do(bt, chromedp.Navigate(base+"/sensors?range=1h"),
		chromedp.WaitVisible(chromedp.CSS(`section[data-series="greenhouse/temperature"] .chart canvas`)))
	if err != nil {
		html, _ := chromedp.Run(bctx, chromedp.Evaluate[string](`location.href + "\n" + document.body.outerHTML`))
		t.Fatalf("the sensors page: %v\n%s", err, html)
	}
	data, err := chromedp.Run(bt, chromedp.Evaluate[[][]float64](chart))
	if err != nil || len(data) != 4 {
		t.Fatalf("the chart's data: %v %v", data, err)
	}
	if n := len(data[0]); n < 50 {
		t.Errorf("the chart has %d points, want at least 50", n)
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, m := range data[2] { // the means
		lo, hi = min(lo, m), max(hi, m)
	}
	if lo > 16 || hi < 24 {
		t.Errorf("the chart's means span %g..%g °C, want the swing moved by sim/set (14..26)", lo, hi)
	}
	if unit, err := chromedp.Run(bt, chromedp.Evaluate[string](`window.clawedgeCharts.filter(function (c) { return c.series === "greenhouse/temperature"; })[0].u.axes[1].label`)); err != nil || unit != "°C" {
		t.Errorf("the value axis says %q (%v), want °C", unit, err)
	}

	steps, err := chromedp.Run(bt, chromedp.TextContent(chromedp.CSS(`section[data-pin-levels="led"] table.steps tbody`)))
	if err != nil || !strings.Contains(steps, "1 (high)uid:1000") {
		t.Errorf("the led's changes: %q (%v)", steps, err)
	}
	if err := chromedp.Do(bt, chromedp.WaitVisible(chromedp.CSS(`section[data-pin-levels="led"] .chart canvas`))); err != nil {
		t.Errorf("the led's step chart: %v", err)
	}

	// Live: a new sim/set is on the page within 2 s, no reload.
	simSet(31.25)
	set := time.Now()
	wt, cancelW := context.WithTimeout(bctx, 2*time.Second)
	defer cancelW()
	_, err = chromedp.Run(wt, chromedp.Poll[bool](`document.querySelector('[data-live="greenhouse/temperature"]').textContent === "31.25"`,
		chromedp.WithPollingInterval(20*time.Millisecond)))
	if err != nil {
		shown, _ := chromedp.Run(bctx, chromedp.Text(chromedp.CSS(`[data-live="greenhouse/temperature"]`)))
		t.Fatalf("the page shows %q 2 s after sim/set 31.25: %v", shown, err)
	}
	t.Logf("%d points; the new reading on the page %v after sim/set", len(data[0]), time.Since(set).Round(time.Millisecond))
	if last, err := chromedp.Run(bt, chromedp.Evaluate[float64](chart+`[2].slice(-1)[0]`)); err != nil || last != 31.25 {
		t.Errorf("the chart's newest point: %v %v", last, err)
	}
}

// urlCatcher is a log handler that hands on the url of one message.
type urlCatcher struct {
	msg  string
	urls chan string
	once sync.Once
}

func (h *urlCatcher) Enabled(context.Context, slog.Level) bool { return true }
func (h *urlCatcher) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *urlCatcher) WithGroup(string) slog.Handler            { return h }
func (h *urlCatcher) Handle(_ context.Context, r slog.Record) error {
	if r.Message != h.msg {
		return nil
	}
	r.Attrs(func(at slog.Attr) bool {
		if at.Key == "url" {
			h.once.Do(func() { h.urls <- at.Value.String() })
		}
		return true
	})
	return nil
}

// The pins' step charts: a write audited before the dashboard's watch
// began is a step, by its caller; a change the watch sees is one, credited
// to the audited write that made it; a change nobody wrote (an input
// driven by the world) is one, by nobody.
func TestWebPinLevels(t *testing.T) {
	cfg := sensorsConfig(t)
	a, err := Open(cfg, Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ctx := context.Background()
	run := func(line string) {
		t.Helper()
		rep, err := channels.Run(ctx, a.runner, tools.Caller{Channel: "control", User: "uid:1000", Actor: tools.Person}, line)
		if err == nil {
			err = rep.Err()
		}
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
	}
	run(`@gpio/write{pin="led";value=1}`)
	pl := newPinLevels(a.board) // the dashboard starts: led is high
	run(`@gpio/write{pin="led";value=0}`)
	pl.poll(time.Now())
	run(`@sim/drive{pin="button";value=0}`)
	pl.poll(time.Now())
	got := map[string]web.PinLevels{}
	for _, l := range (webSensors{a: a, pins: pl}).PinLevels(24 * time.Hour) {
		got[l.Pin] = l
	}
	steps := func(l web.PinLevels) string {
		var b strings.Builder
		fmt.Fprintf(&b, "start %d:", l.Start)
		for _, s := range l.Steps {
			fmt.Fprintf(&b, " %d by %q", s.Level, s.Who)
		}
		return b.String()
	}
	if s := steps(got["led"]); s != `start -1: 1 by "uid:1000" 0 by "uid:1000"` {
		t.Errorf("led: %s", s)
	}
	// The button (pulled up: high) pressed by the world: low, by nobody.
	if s := steps(got["button"]); s != `start -1: 1 by "" 0 by ""` {
		t.Errorf("button: %s", s)
	}
}

// BenchmarkSensorsPageHistory is one quantity's history as the sensors page
// reads it for each range (channels/web's sensorRanges), over a week of
// samples every minute (docs/BENCHMARKS.md).
func BenchmarkSensorsPageHistory(b *testing.B) {
	cfg := config.Builtin()
	cfg.DataDir = b.TempDir()
	a, err := Open(cfg, Options{Version: "test"})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	end := time.Now()
	for at := end.Add(-7 * 24 * time.Hour); at.Before(end); at = at.Add(time.Minute) {
		if err := a.history.Add("greenhouse/temperature", at, 20+math.Sin(float64(at.Unix())/3600)); err != nil {
			b.Fatal(err)
		}
	}
	if err := a.history.Flush(); err != nil {
		b.Fatal(err)
	}
	f := webSensors{a: a}
	for _, r := range []struct {
		name   string
		span   time.Duration
		points int
	}{{"1h", time.Hour, 61}, {"24h", 24 * time.Hour, 145}, {"7d", 7*24*time.Hour + time.Hour, 170}} { // page_sensors.go's sensorRanges
		b.Run(r.name, func(b *testing.B) {
			for b.Loop() {
				pts, err := f.History("greenhouse", "temperature", r.span, r.points)
				if err != nil || len(pts) < r.points-2 {
					b.Fatalf("%d points, %v", len(pts), err)
				}
			}
		})
	}
}

// The writes read from an audited command: each gpio/write of a chain with
// its pin and level, last first; anything else, or a command too long to be
// a few writes, gives none.
func TestWritesOf(t *testing.T) {
	for _, c := range []struct{ command, want string }{
		{`@gpio/write{pin="led";value=1}`, "led=1"},
		{`@gpio/write{pin="led";value=1} -> @gpio/write{pin="relay";value=0}`, "relay=0 led=1"},
		{`[@gpio/write{pin="a";value=0}, @gpio/read{pin="b"}]`, "a=0"},
		{`@gpio/toggle{pin="led"}`, ""},
		{`@gpio/write{pin="led";value=$prev.level}`, ""},
		{`@gpio/write{pin="led";value=2}`, ""},
		{`@gpio/write{pin="led"`, ""},
		{`@gpio/write{pin="led";value=1;note="` + strings.Repeat("x", maxWriteCommand) + `"}`, ""},
	} {
		var got []string
		for _, w := range writesOf(c.command) {
			got = append(got, fmt.Sprintf("%s=%d", w.pin, w.level))
		}
		if s := strings.Join(got, " "); s != c.want {
			t.Errorf("%.60s: %q, want %q", c.command, s, c.want)
		}
	}
}
