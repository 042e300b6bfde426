package sensors

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/store"
	"github.com/clawedge/clawedge/tools"
)

// Register adds sensor/list, sensor/read and, with a history,
// sensor/history to reg. All three are read-only (group:readonly): a read
// makes the chip measure, which changes nothing in the world. With no
// sensor configured only sensor/list is added.
func Register(reg *tools.Registry, set *Set, hist *store.History) error {
	names, qs := set.names()
	ts := []tools.Tool{&sensorList{set: set, spec: grammar.ToolSpec{
		Name: "sensor/list",
		Doc:  "List the sensors: driver, bus, quantities with their units, sampling interval, and the last reading.",
	}}}
	if len(names) > 0 {
		ts = append(ts, &sensorRead{set: set, spec: grammar.ToolSpec{
			Name: "sensor/read",
			Doc:  "Read a sensor now: every quantity it measures, or only quantity, each value in its unit (°C, %, hPa, V, A, W) with the time.",
			Params: []grammar.ArgSpec{
				{Name: "name", Doc: "the sensor", Type: grammar.TypeString, Required: true, Enum: names},
				{Name: "quantity", Doc: "one quantity; without it, all the sensor has", Type: grammar.TypeString, Enum: qs},
			},
		}})
		if hist != nil {
			ts = append(ts, &sensorHistory{set: set, hist: hist, spec: grammar.ToolSpec{
				Name: "sensor/history",
				Doc:  "A sensor's quantity over the past since (24h, 90m, 7d), in at most points points, each the min, mean and max of its span.",
				Params: []grammar.ArgSpec{
					{Name: "name", Doc: "the sensor", Type: grammar.TypeString, Required: true, Enum: names},
					{Name: "quantity", Doc: "the quantity", Type: grammar.TypeString, Required: true, Enum: qs},
					{Name: "since", Doc: "how far back: 90m, 24h, 7d (at most 366d)", Type: grammar.TypeString, MaxLen: 16, Default: "24h"},
					{Name: "points", Doc: "at most this many points", Type: grammar.TypeInteger, Min: tools.Float(1), Max: tools.Float(maxPoints), Default: 60},
				},
			}})
		}
	}
	if err := reg.Register(ts...); err != nil {
		return fmt.Errorf("sensors: %w", err)
	}
	return nil
}

// RegisterSim adds the simulated board's world (the sim board only):
// sim/set, which changes what a simulated sensor measures, and sim/drive,
// which drives an input pin as a button, a door or a float switch would.
func RegisterSim(reg *tools.Registry, set *Set) error {
	if !set.Simulated() {
		return fmt.Errorf("sensors: sim/set is for the simulated board only")
	}
	var ts []tools.Tool
	names, qs := set.names()
	if len(names) > 0 {
		var settable []string
		for _, q := range qs {
			if q != string(Power) {
				settable = append(settable, q)
			}
		}
		ts = append(ts, &simSet{set: set, spec: grammar.ToolSpec{
			Name: "sim/set",
			Doc:  "Set what a simulated sensor measures (the sim board only): the next reads give value, in the quantity's unit.",
			Params: []grammar.ArgSpec{
				{Name: "sensor", Doc: "the sensor", Type: grammar.TypeString, Required: true, Enum: names},
				{Name: "quantity", Doc: "the quantity", Type: grammar.TypeString, Required: true, Enum: settable},
				{Name: "value", Doc: "the value, in the quantity's unit", Type: grammar.TypeNumber, Required: true},
			},
		}})
	}
	if t := newSimDrive(set); t != nil {
		ts = append(ts, t)
	}
	if len(ts) == 0 {
		return nil
	}
	if err := reg.Register(ts...); err != nil {
		return fmt.Errorf("sensors: %w", err)
	}
	return nil
}

// names are the sensors' names and every quantity any of them measures,
// in Quantities' order.
func (set *Set) names() (names, qs []string) {
	has := map[Quantity]bool{}
	for _, s := range set.list {
		names = append(names, s.Name())
		for _, q := range s.Quantities() {
			has[q] = true
		}
	}
	for _, q := range Quantities {
		if has[q] {
			qs = append(qs, string(q))
		}
	}
	return names, qs
}

const maxPoints = 1000

// sensor/list

type sensorList struct {
	set  *Set
	spec grammar.ToolSpec
}

func (t *sensorList) Spec() grammar.ToolSpec { return t.spec }
func (*sensorList) ReadOnly()                {}

func (t *sensorList) Run(ctx context.Context, _ grammar.Args) (tools.Result, error) {
	var lines []string
	var names []grammar.Value
	for _, s := range t.set.Sensors() {
		names = append(names, grammar.StringValue(s.Name()))
		var qs []string
		for _, q := range s.Quantities() {
			qs = append(qs, fmt.Sprintf("%s %s", q, q.Unit()))
		}
		line := fmt.Sprintf("%s: %s; %s; every %s", s.Name(), s.where, strings.Join(qs, ", "), s.Every())
		if s.Simulated() {
			line += "; simulated"
		}
		switch last := s.Last(); {
		case last.Time.IsZero():
		case last.Err != nil:
			line += fmt.Sprintf("; last read failed %s ago", age(last.Time))
		default:
			line += fmt.Sprintf("; last %s, %s ago", readingsText(last.Readings), age(last.Time))
		}
		lines = append(lines, line)
	}
	text := "no sensors configured"
	if len(lines) > 0 {
		text = strings.Join(lines, "\n")
	}
	return tools.Result{Text: text, Fields: map[string]grammar.Value{"sensors": grammar.ArrayValue(names...)}}, nil
}

func age(t time.Time) time.Duration { return time.Since(t).Round(time.Second) }

func readingsText(rs []Reading) string {
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = r.String()
	}
	return strings.Join(s, ", ")
}

// sensor/read

type sensorRead struct {
	set  *Set
	spec grammar.ToolSpec
}

func (t *sensorRead) Spec() grammar.ToolSpec { return t.spec }
func (*sensorRead) ReadOnly()                {}

// Run gives, for one quantity, the fields value, unit, quantity, sensor and
// time (a read trigger's or a goal's number is value); for all, one field
// a quantity, and time.
func (t *sensorRead) Run(ctx context.Context, a grammar.Args) (tools.Result, error) {
	s, err := t.set.Sensor(a.String("name"))
	if err != nil {
		return tools.Result{}, err
	}
	if a.Has("quantity") {
		r, err := s.ReadQuantity(ctx, Quantity(a.String("quantity")))
		if err != nil {
			return tools.Result{}, err
		}
		return tools.Result{
			Text: fmt.Sprintf("%s %s at %s", s.Name(), r, r.Time.Format(time.TimeOnly)),
			Fields: map[string]grammar.Value{
				"sensor":   grammar.StringValue(s.Name()),
				"quantity": grammar.StringValue(string(r.Quantity)),
				"value":    grammar.FloatValue(r.Round()),
				"unit":     grammar.StringValue(r.Unit()),
				"time":     grammar.StringValue(r.Time.UTC().Format(time.RFC3339)),
			},
		}, nil
	}
	rs, err := s.Read(ctx)
	if err != nil {
		return tools.Result{}, err
	}
	f := map[string]grammar.Value{"sensor": grammar.StringValue(s.Name())}
	for _, r := range rs {
		f[string(r.Quantity)] = grammar.FloatValue(r.Round())
	}
	f["time"] = grammar.StringValue(rs[0].Time.UTC().Format(time.RFC3339))
	return tools.Result{Text: fmt.Sprintf("%s: %s at %s", s.Name(), readingsText(rs), rs[0].Time.Format(time.TimeOnly)), Fields: f}, nil
}

// sensor/history

type sensorHistory struct {
	set  *Set
	hist *store.History
	spec grammar.ToolSpec
}

func (t *sensorHistory) Spec() grammar.ToolSpec { return t.spec }
func (*sensorHistory) ReadOnly()                {}

func (t *sensorHistory) Run(ctx context.Context, a grammar.Args) (tools.Result, error) {
	s, err := t.set.Sensor(a.String("name"))
	if err != nil {
		return tools.Result{}, err
	}
	q := Quantity(a.String("quantity"))
	if !s.Has(q) {
		return tools.Result{}, s.noQuantity(q)
	}
	back, err := ParseSince(a.String("since"))
	if err != nil {
		return tools.Result{}, err
	}
	until := time.Now()
	pts, err := t.hist.Query(s.Name()+"/"+string(q), until.Add(-back), until, int(a.Int("points")))
	if err != nil {
		return tools.Result{}, err
	}
	return historyResult(s.Name(), q, a.String("since"), pts), nil
}

// historyResult is the text (a table) and the fields (one array a column)
// of a series.
func historyResult(name string, q Quantity, since string, pts []store.Point) tools.Result {
	round := func(v float64) float64 { return Reading{Quantity: q, Value: v}.Round() }
	var starts, mins, means, maxs, counts []grammar.Value
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s (%s) over the past %s: ", name, q, q.Unit(), since)
	if len(pts) == 0 {
		b.WriteString("no readings")
	} else {
		fmt.Fprintf(&b, "%d points\nstart                 min       mean      max       n", len(pts))
	}
	for _, p := range pts {
		starts = append(starts, grammar.StringValue(p.Start.UTC().Format(time.RFC3339)))
		mins = append(mins, grammar.FloatValue(round(p.Min)))
		means = append(means, grammar.FloatValue(round(p.Mean)))
		maxs = append(maxs, grammar.FloatValue(round(p.Max)))
		counts = append(counts, grammar.IntValue(int64(p.Count)))
		fmt.Fprintf(&b, "\n%s  %-9s %-9s %-9s %d", p.Start.UTC().Format("2006-01-02T15:04Z"), num(round(p.Min)), num(round(p.Mean)), num(round(p.Max)), p.Count)
	}
	return tools.Result{Text: b.String(), Fields: map[string]grammar.Value{
		"sensor": grammar.StringValue(name), "quantity": grammar.StringValue(string(q)), "unit": grammar.StringValue(q.Unit()),
		"start": grammar.ArrayValue(starts...), "min": grammar.ArrayValue(mins...), "mean": grammar.ArrayValue(means...),
		"max": grammar.ArrayValue(maxs...), "count": grammar.ArrayValue(counts...),
	}}
}

func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// ParseSince reads how far back a history goes: a duration (90m, 24h,
// 1h30m) or whole days (7d), from a minute to 366 days.
func ParseSince(s string) (time.Duration, error) {
	bad := func(why string) (time.Duration, error) {
		return 0, fmt.Errorf("since %q: %s", s, why)
	}
	var d time.Duration
	if n, ok := strings.CutSuffix(s, "d"); ok && n != "" && strings.Trim(n, "0123456789") == "" {
		days, err := strconv.Atoi(n)
		if err != nil || days > 366 {
			return bad("at most 366d")
		}
		d = time.Duration(days) * 24 * time.Hour
	} else {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return bad("want a duration such as 90m, 24h or 7d")
		}
	}
	switch {
	case d < time.Minute:
		return bad("at least 1m")
	case d > 366*24*time.Hour:
		return bad("at most 366d")
	}
	return d, nil
}

// sim/set

type simSet struct {
	set  *Set
	spec grammar.ToolSpec
}

func (t *simSet) Spec() grammar.ToolSpec { return t.spec }

func (t *simSet) Run(ctx context.Context, a grammar.Args) (tools.Result, error) {
	name, q, v := a.String("sensor"), Quantity(a.String("quantity")), a.Float("value")
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return tools.Result{}, fmt.Errorf("sim/set: %v is not a value", v)
	}
	if err := t.set.Simulate(name, q, v); err != nil {
		return tools.Result{}, err
	}
	r := Reading{Sensor: name, Quantity: q, Value: v}
	return tools.Result{
		Text: fmt.Sprintf("%s %s set to %s (simulated)", name, q, strings.TrimPrefix(r.String(), string(q)+" ")),
		Fields: map[string]grammar.Value{
			"sensor": grammar.StringValue(name), "quantity": grammar.StringValue(string(q)),
			"value": grammar.FloatValue(v), "unit": grammar.StringValue(q.Unit()),
		},
	}, nil
}

// sim/drive

// driver is the sim board's driver as sim/drive uses it: hal/sim's Drive,
// an outside signal on a GPIO line (electrical levels).
type lineDriver interface{ Drive(gpio int, l hal.Level) }

type simDrive struct {
	set  *Set
	drv  lineDriver
	spec grammar.ToolSpec
}

// newSimDrive is sim/drive for the set's board, or nil when its driver
// cannot drive a line or it has no input.
func newSimDrive(set *Set) tools.Tool {
	if set.board == nil {
		return nil
	}
	sim, _ := set.board.Simulator()
	drv, ok := sim.(lineDriver)
	if !ok {
		return nil
	}
	var inputs []string
	for _, p := range set.board.Pins() {
		if p.Mode() == hal.ModeIn {
			inputs = append(inputs, p.Name())
		}
	}
	if len(inputs) == 0 {
		return nil
	}
	return &simDrive{set: set, drv: drv, spec: grammar.ToolSpec{
		Name: "sim/drive",
		Doc:  "Drive a simulated input pin (the sim board only) as the world would, a button pressed or a door opened: it reads value from now on.",
		Params: []grammar.ArgSpec{
			{Name: "pin", Doc: "the input", Type: grammar.TypeString, Required: true, Enum: inputs},
			{Name: "value", Doc: "1 = high (on), 0 = low (off)", Type: grammar.TypeInteger, Required: true, Min: tools.Float(0), Max: tools.Float(1)},
		},
	}}
}

func (t *simDrive) Spec() grammar.ToolSpec { return t.spec }

func (t *simDrive) Run(_ context.Context, a grammar.Args) (tools.Result, error) {
	name, v := a.String("pin"), a.Int("value")
	p, err := t.set.board.Pin(name)
	if err != nil {
		return tools.Result{}, fmt.Errorf("sim/drive: %w", err)
	}
	if p.Mode() != hal.ModeIn {
		return tools.Result{}, fmt.Errorf("sim/drive: pin %q is an output: write it with gpio/write", name)
	}
	level := hal.Level(v == 1)
	electrical := level
	if p.Config().ActiveLow {
		electrical = !level
	}
	t.drv.Drive(p.GPIO(), electrical)
	return tools.Result{
		Text:   fmt.Sprintf("%s driven %s (simulated)", name, level),
		Fields: map[string]grammar.Value{"pin": grammar.StringValue(name), "value": grammar.IntValue(v)},
	}, nil
}
