package web

import (
	"encoding/json"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawedge/clawedge/store"
)

// fakeSensors is the daemon's side of the sensors page for the harness: a
// temperature and a humidity sampled every minute (the daemon's own, over
// the store's history, is daemon/web_sensors.go's, tested there with
// chromium against the whole daemon).
type fakeSensors struct {
	mu   sync.Mutex
	qs   []SensorQuantity
	next chan struct{}
}

func newFakeSensors() *fakeSensors {
	now := time.Now()
	return &fakeSensors{next: make(chan struct{}), qs: []SensorQuantity{
		{Sensor: "greenhouse", Quantity: "temperature", Unit: "°C", Value: 21.5, At: now},
		{Sensor: "greenhouse", Quantity: "humidity", Unit: "%", Value: 40, At: now},
	}}
}

func (f *fakeSensors) Quantities() []SensorQuantity {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]SensorQuantity(nil), f.qs...)
}

// History: a point a minute back to since, thinned to points, swinging
// ±5 around the base over each hour.
func (f *fakeSensors) History(sensor, quantity string, since time.Duration, points int) ([]store.Point, error) {
	base := 20.0
	if quantity == "humidity" {
		base = 45
	}
	now := time.Now().Truncate(time.Minute)
	n := int(since / time.Minute)
	per := max(1, (n+points-1)/points)
	var out []store.Point
	for i := n; i > 0; i -= per {
		at := now.Add(-time.Duration(i) * time.Minute)
		v := base + 5*math.Sin(2*math.Pi*float64(at.Unix()%3600)/3600)
		out = append(out, store.Point{Start: at, End: at.Add(time.Duration(per) * time.Minute), Min: v - 0.4, Mean: v, Max: v + 0.5, Count: 2 * per})
	}
	return out, nil
}

func (f *fakeSensors) PinLevels(span time.Duration) []PinLevels {
	now := time.Now()
	return []PinLevels{{Pin: "led", Start: 0, Steps: []PinStep{
		{At: now.Add(-20 * time.Hour), Level: 1, Who: "web:phone"}, {At: now.Add(-19 * time.Hour), Level: 0, Who: "auto:porch"},
		{At: now.Add(-3 * time.Hour), Level: 1, Who: "telegram:42"}}}}
}

func (f *fakeSensors) Next() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.next
}

// set is a new reading of the temperature, told to the streams.
func (f *fakeSensors) set(v float64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.qs[0].Value, f.qs[0].At = v, time.Now()
	close(f.next)
	f.next = make(chan struct{})
}

// The page without script: each quantity's last reading, its table with
// the range's points (the chart's data), the ranges as links, a bad range
// named; the pins' changes with who made them; without facts, the page
// says so.
func TestSensorsPage(t *testing.T) {
	d := newDash(t, nil)
	v := d.pair("phone", Viewer)
	if _, body := v.do("GET", "/sensors", ""); !strings.Contains(body, "No sensor facts") {
		t.Errorf("no facts: %s", body)
	}
	d.srv.Sensors = newFakeSensors()
	for _, c := range []struct {
		query string
		rows  int
	}{{"", 60}, {"?range=1h", 60}, {"?range=24h", 144}, {"?range=7d", 169}} {
		resp, body := v.do("GET", "/sensors"+c.query, "")
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d", c.query, resp.StatusCode)
		}
		for _, want := range []string{`data-live="greenhouse/temperature">21.5</span> <span class="unit">°C</span>`,
			`<th scope="col">Mean (°C)</th>`, `<th scope="col">Mean (%)</th>`, `<a href="/sensors?range=7d"`, `<td>web:phone</td>`, `<td>1 (high)</td>`} {
			if !strings.Contains(body, want) {
				t.Errorf("%s: no %s", c.query, want)
			}
		}
		sec := body[strings.Index(body, `data-series="greenhouse/temperature"`):]
		sec = sec[:strings.Index(sec, "</section>")]
		if got := strings.Count(sec, "<tr data-t="); got < c.rows-1 || got > c.rows {
			t.Errorf("%s: %d rows, want %d", c.query, got, c.rows)
		}
	}
	if _, body := v.do("GET", "/sensors?range=<b>", ""); !strings.Contains(body, "range &#34;&lt;b&gt;&#34;: want 1h, 24h or 7d") {
		t.Errorf("a bad range is not named (escaped)")
	}
}

// The event stream sends the readings at once when asked and again at each
// sample.
func TestSensorsStream(t *testing.T) {
	d := newDash(t, nil)
	f := newFakeSensors()
	d.srv.Sensors = f
	v := d.pair("phone", Viewer)
	req, _ := http.NewRequest("GET", d.http.URL+"/api/events?sensors=1", nil)
	req.AddCookie(&http.Cookie{Name: cookieName, Value: v.cookie})
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events := make(chan string, 16)
	go func() {
		buf := make([]byte, 64<<10)
		var acc string
		for {
			n, err := resp.Body.Read(buf)
			acc += string(buf[:n])
			for {
				i := strings.Index(acc, "\n\n")
				if i < 0 {
					break
				}
				events <- acc[:i]
				acc = acc[i+2:]
			}
			if err != nil {
				close(events)
				return
			}
		}
	}()
	sensors := func() []SensorQuantity {
		t.Helper()
		for {
			select {
			case e, ok := <-events:
				if !ok {
					t.Fatal("the stream ended")
				}
				if data, ok := strings.CutPrefix(e, "event: sensors\ndata: "); ok {
					var qs []SensorQuantity
					if err := json.Unmarshal([]byte(data), &qs); err != nil {
						t.Fatal(err)
					}
					return qs
				}
			case <-time.After(5 * time.Second):
				t.Fatal("no sensors event in 5s")
			}
		}
	}
	if qs := sensors(); len(qs) != 2 || qs[0].Value != 21.5 {
		t.Fatalf("first: %+v", qs)
	}
	f.set(23.75)
	if qs := sensors(); qs[0].Value != 23.75 {
		t.Fatalf("after a sample: %+v", qs)
	}
}
