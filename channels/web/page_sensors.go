package web

// This file: the sensors page (/sensors; docs/web.md): a chart of each
// quantity each sensor measures, from the history sensor/history reads
// (min–max band, mean line), the last reading large, and the pins' levels
// over the past day as step charts. Everything is in the page as tables, so
// it reads without JavaScript; assets/sensors.js draws the charts from the
// tables with uPlot (assets/uplot.min.js, vendored: channels/web/VENDORED.md)
// and follows the event stream (/api/events?sensors=1) for new readings.

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/clawedge/clawedge/store"
)

// SensorQuantity is one quantity of one sensor and its last reading.
type SensorQuantity struct {
	Sensor   string    `json:"sensor"`
	Quantity string    `json:"quantity"`
	Unit     string    `json:"unit"`
	Value    float64   `json:"value"`
	At       time.Time `json:"at,omitzero"` // zero: not read yet
	Error    string    `json:"error,omitempty"`
}

// PinStep is a pin's level from At on (0 or 1).
type PinStep struct {
	At    time.Time `json:"at"`
	Level int       `json:"level"`
	Who   string    `json:"who,omitempty"` // who wrote it, when the audit says
}

// PinLevels is a pin's levels over a span: Start is its level at the span's
// start (-1: unknown), Steps each change after.
type PinLevels struct {
	Pin   string    `json:"pin"`
	Start int       `json:"start"`
	Steps []PinStep `json:"steps"`
}

// SensorFacts is what the sensors page reads of the daemon: nothing here
// is a call (daemon/web_sensors.go).
type SensorFacts interface {
	// Quantities are every sensor's quantities with their last readings.
	Quantities() []SensorQuantity
	// History is the series of one quantity from since ago up to now, in
	// at most points points, as sensor/history reads it (store.History).
	History(sensor, quantity string, since time.Duration, points int) ([]store.Point, error)
	// PinLevels are the pins' levels over the past span.
	PinLevels(span time.Duration) []PinLevels
	// Next is closed at the next sample of any sensor: the event stream
	// sends the quantities again then.
	Next() <-chan struct{}
}

// sensorRange is one of the page's ranges: how far back, how far back the
// history is read and in how many points at most: a point a minute for an
// hour, ten minutes for a day, an hour for a week. The buckets of a span not
// aligned to their width are one more than it holds (61 minutes in an
// hour), and a query for fewer points than buckets merges them by twos:
// hence the one more. The week is read an hour further back, which takes
// the history to its hourly buckets (a query longer than the minute tier's
// 7 days): 170 reads a quantity instead of 10,080 (17 ms on amd64, far
// more on a Pi; BenchmarkSensorsPageHistory).
type sensorRange struct {
	name       string
	span, read time.Duration
	points     int
}

var sensorRanges = []sensorRange{
	{"1h", time.Hour, time.Hour, 61},
	{"24h", 24 * time.Hour, 24 * time.Hour, 145},
	{"7d", 7 * 24 * time.Hour, 7*24*time.Hour + time.Hour, 170},
}

// pinSpan is how far back the pins' step charts go.
const pinSpan = 24 * time.Hour

func (s *Server) sensorsRoutes() []route {
	return []route{{"GET /sensors", read, s.guard(s.page("sensors"), true)}}
}

// sensorsBody writes the sensors page; it returns the error to show, if any.
func (s *Server) sensorsBody(p *htmlPage, r *http.Request) string {
	p.WriteString("<h1>Sensors</h1>\n")
	if s.Sensors == nil {
		p.WriteString("<p>No sensor facts: the daemon does not serve them.</p>\n")
		return ""
	}
	rg, note := sensorRanges[0], ""
	if want := r.URL.Query().Get("range"); want != "" {
		found := false
		for _, c := range sensorRanges {
			if c.name == want {
				rg, found = c, true
			}
		}
		if !found {
			note = fmt.Sprintf("range %q: want 1h, 24h or 7d; showing 1h", clip(want, 16))
		}
	}
	p.WriteString(`<nav class="ranges" aria-label="Range">`)
	for _, c := range sensorRanges {
		if c == rg {
			p.f(`<a href="/sensors?range=%s" aria-current="true">%s</a> `, c.name, c.name)
		} else {
			p.f(`<a href="/sensors?range=%s">%s</a> `, c.name, c.name)
		}
	}
	p.WriteString("</nav>\n")
	qs := s.Sensors.Quantities()
	if len(qs) == 0 {
		p.WriteString("<p>No sensors configured (board.sensors).</p>\n")
	}
	for _, q := range qs {
		s.quantitySection(p, q, rg)
	}
	s.pinLevelsSection(p)
	return note
}

// clip is s cut to n bytes at most, for an error that quotes input; a
// rune cut in two is dropped.
func clip(s string, n int) string {
	if len(s) > n {
		return strings.ToValidUTF8(s[:n], "") + "…"
	}
	return s
}

// quantitySection is one quantity: its last reading, the chart's place and
// the table of its history, which the chart is drawn from.
func (s *Server) quantitySection(p *htmlPage, q SensorQuantity, rg sensorRange) {
	id := "s-" + q.Sensor + "-" + q.Quantity
	series := q.Sensor + "/" + q.Quantity
	p.f(`<section class="sensor" data-series="%s" data-unit="%s" data-span="%d" aria-labelledby="%s">
<h2 id="%s">%s · %s</h2>
<p class="last">`, series, q.Unit, int64(rg.span/time.Second), id, id, q.Sensor, q.Quantity)
	switch {
	case q.Error != "":
		p.f(`<span class="value" data-live="%s">no reading</span> <span class="at">%s</span>`, series, q.Error)
	case q.At.IsZero():
		p.f(`<span class="value" data-live="%s">–</span> <span class="unit">%s</span> <span class="at">not read yet</span>`, series, q.Unit)
	default:
		p.f(`<span class="value" data-live="%s">%s</span> <span class="unit">%s</span> <span class="at">at %s</span>`,
			series, num(q.Value), q.Unit, q.At.Local().Format(time.TimeOnly))
	}
	p.WriteString("</p>\n")
	pts, err := s.Sensors.History(q.Sensor, q.Quantity, rg.read, rg.points)
	if err != nil {
		p.f("<p class=\"error\">history: %s</p>\n</section>\n", err.Error())
		return
	}
	// The chart's place: sensors.js draws it, with a label that says what
	// it shows; hidden until then, so that a page without script shows
	// the table only.
	p.f(`<div class="chart" role="img" aria-label="%s %s over the past %s, in %s: the band spans each point's minimum to maximum, the line is the mean; the table below has the values" hidden></div>
<details><summary>Table: %d points over the past %s</summary>
<table class="points"><thead><tr><th scope="col">Time</th><th scope="col">Min (%s)</th><th scope="col">Mean (%s)</th><th scope="col">Max (%s)</th><th scope="col" class="nh">Samples</th></tr></thead>
<tbody>`, q.Sensor, q.Quantity, rg.name, q.Unit, len(pts), rg.name, q.Unit, q.Unit, q.Unit)
	for _, pt := range pts {
		p.f(`<tr data-t="%d" data-min="%s" data-mean="%s" data-max="%s"><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td class="nh">%d</td></tr>`+"\n",
			pt.Start.Unix(), num(pt.Min), num(pt.Mean), num(pt.Max), pt.Start.Local().Format("01-02 15:04"),
			fixed(pt.Min), fixed(pt.Mean), fixed(pt.Max), pt.Count)
	}
	if len(pts) == 0 {
		p.WriteString(`<tr><td colspan="5">No readings in this range.</td></tr>`)
	}
	p.WriteString("</tbody></table></details>\n</section>\n")
}

// pinLevelsSection is each pin's level over the past day: a step chart
// sensors.js draws from the table of its changes.
func (s *Server) pinLevelsSection(p *htmlPage) {
	pins := s.Sensors.PinLevels(pinSpan)
	if len(pins) == 0 {
		return
	}
	now := time.Now()
	p.f("<h2>Pins over the past 24h</h2>\n")
	for _, pl := range pins {
		id := "p-" + pl.Pin
		p.f(`<section class="pin" data-pin-levels="%s" data-from="%d" data-to="%d" data-start="%d" aria-labelledby="%s">
<h3 id="%s">%s</h3>
<div class="chart" role="img" aria-label="level of pin %s over the past 24h, a step from low (0) to high (1) at each change; the table below has the changes" hidden></div>
<details><summary>Table: %d changes</summary>
<table class="steps"><thead><tr><th scope="col">Time</th><th scope="col">Level</th><th scope="col">By</th></tr></thead>
<tbody>`, pl.Pin, now.Add(-pinSpan).Unix(), now.Unix(), pl.Start, id, id, pl.Pin, pl.Pin, len(pl.Steps))
		startText := "unknown"
		if pl.Start >= 0 {
			startText = levelText(pl.Start)
		}
		p.f(`<tr><td>%s</td><td>%s</td><td>(level then)</td></tr>`+"\n", now.Add(-pinSpan).Local().Format("01-02 15:04:05"), startText)
		for _, st := range pl.Steps {
			p.f(`<tr data-t="%d" data-level="%d"><td>%s</td><td>%s</td><td>%s</td></tr>`+"\n",
				st.At.Unix(), st.Level, st.At.Local().Format("01-02 15:04:05"), levelText(st.Level), st.Who)
		}
		p.WriteString("</tbody></table></details>\n</section>\n")
	}
}

func levelText(l int) string {
	if l == 1 {
		return "1 (high)"
	}
	return "0 (low)"
}

func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// fixed is a value for the table: two decimals, what a person compares.
func fixed(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

// sensorStream is what an event stream sends of the sensors: nothing
// unless asked (?sensors=1, the sensors page), then the readings at once
// and at each sample.
type sensorStream struct {
	on   bool
	next <-chan struct{} // nil (never ready) when off
	s    *Server
}

func (s *Server) sensorEvents(r *http.Request) *sensorStream {
	st := &sensorStream{s: s, on: s.Sensors != nil && r.URL.Query().Get("sensors") == "1"}
	if st.on {
		st.next = s.Sensors.Next()
	}
	return st
}

// due reports whether the readings are to be sent now: first, or a sample
// came since the last send (the next wait is armed again).
func (st *sensorStream) due(first bool) bool {
	if !st.on {
		return false
	}
	select {
	case <-st.next:
		st.next = st.s.Sensors.Next()
		return true
	default:
		return first
	}
}
