package daemon

// This file: what the dashboard's sensors page reads (web.SensorFacts,
// channels/web/page_sensors.go): the sensors' last readings, their history
// from the store (the same query as sensor/history), and the pins' levels
// over the past day, from the audit (the writes, by whom) and from a watch
// of the levels while the dashboard is on (every change, whoever made it:
// an input, max_on, a write).

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/clawedge/clawedge/channels/web"
	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/store"
)

// webSensors implements web.SensorFacts for the Core.
type webSensors struct {
	a    *Core
	pins *pinLevels
}

func (f webSensors) Quantities() []web.SensorQuantity {
	var out []web.SensorQuantity
	if f.a.sensors == nil {
		return out
	}
	for _, s := range f.a.sensors.Sensors() {
		last := s.Last()
		for _, q := range s.Quantities() {
			sq := web.SensorQuantity{Sensor: s.Name(), Quantity: string(q), Unit: q.Unit(), At: last.Time}
			if last.Err != nil {
				sq.Error = last.Err.Error()
			}
			for _, r := range last.Readings {
				if r.Quantity == q {
					sq.Value = r.Round()
				}
			}
			out = append(out, sq)
		}
	}
	return out
}

func (f webSensors) History(sensor, quantity string, since time.Duration, points int) ([]store.Point, error) {
	if f.a.history == nil {
		return nil, errors.New("no history is kept (no store)")
	}
	until := time.Now()
	return f.a.history.Query(sensor+"/"+quantity, until.Add(-since), until, points)
}

func (f webSensors) Next() <-chan struct{} { return f.a.samples.next() }

// PinLevels: before the watch began, the audit's writes; after, the
// watched changes, each credited to the audited write that made it, if
// any.
func (f webSensors) PinLevels(span time.Duration) []web.PinLevels {
	now := time.Now()
	from := now.Add(-span)
	writes := f.a.auditedWrites(from, now)
	return f.pins.levels(from, writes)
}

// pinWrite is one audited gpio/write that succeeded.
type pinWrite struct {
	at    time.Time
	pin   string
	level int
	who   string
}

// auditWindow bounds how many audit entries a page reads for the pins'
// levels: a board writing pins every few seconds for a day has more, and
// the page would be slow; the watch has the changes since the dashboard
// started anyway.
const auditWindow = 2000

// auditedWrites are the gpio/write calls that succeeded between from and
// to, oldest first, from the newest auditWindow entries at most.
func (a *Core) auditedWrites(from, to time.Time) []pinWrite {
	if a.store == nil {
		return nil
	}
	var out []pinWrite
	before := uint64(0)
	for read := 0; read < auditWindow; {
		page, err := a.store.TailBefore(before, 200)
		if err != nil || len(page) == 0 {
			break
		}
		read += len(page)
		for i := len(page) - 1; i >= 0; i-- {
			e := page[i]
			if e.Time.Before(from) {
				slices.Reverse(out)
				return out
			}
			if !e.Done || !e.OK || e.Time.After(to) {
				continue
			}
			for _, w := range writesOf(e.Command) {
				out = append(out, pinWrite{at: e.DoneTime, pin: w.pin, level: w.level, who: e.Who})
			}
		}
		before = page[0].ID
	}
	slices.Reverse(out)
	return out
}

// maxWriteCommand bounds the audited commands parsed for the pins' levels:
// a page view must not parse 2,000 commands of 64 KiB each that a caller
// filled the audit with; a gpio/write, or a chain of a few, is far shorter.
const maxWriteCommand = 4 << 10

// writesOf are the gpio/write calls of a command as the audit keeps it,
// last first (the order they are reversed into).
func writesOf(command string) []pinWrite {
	if len(command) > maxWriteCommand || !strings.Contains(command, "gpio/write") {
		return nil
	}
	cmd, err := grammar.Parse(command, grammar.ParseOptions{})
	if err != nil {
		return nil
	}
	var out []pinWrite
	for _, st := range cmd.Stages {
		for _, c := range st.Calls {
			if c.Tool() != "gpio/write" {
				continue
			}
			w := pinWrite{level: -1}
			for _, p := range c.Params {
				switch {
				case p.Key == "pin" && p.Value.Kind == grammar.String:
					w.pin = p.Value.Str
				case p.Key == "value" && p.Value.Kind == grammar.Int:
					w.level = int(p.Value.Int)
				}
			}
			if w.pin != "" && (w.level == 0 || w.level == 1) {
				out = append(out, w)
			}
		}
	}
	slices.Reverse(out)
	return out
}

// pinLevels watches the pins' levels while the dashboard is on: each
// pin's level when the watch began and its changes since, the newest
// maxPinChanges of them.
type pinLevels struct {
	mu    sync.Mutex
	since time.Time
	pins  []*pinTrack
}

type pinTrack struct {
	name    string
	pin     *hal.Pin
	initial int // at since; -1: unreadable
	level   int // now
	changes []web.PinStep
}

// maxPinChanges bounds what the watch keeps of a pin: a flapping input
// costs 16 KB at most.
const maxPinChanges = 512

// pinWatchEvery is how often the levels are read: a change shorter than
// that (a pulse) may be missed by the watch; the audit still has the write.
const pinWatchEvery = 250 * time.Millisecond

func newPinLevels(b *hal.Board) *pinLevels {
	pl := &pinLevels{since: time.Now()}
	if b == nil {
		return pl
	}
	for _, p := range b.Pins() {
		lv := readLevel(p)
		pl.pins = append(pl.pins, &pinTrack{name: p.Name(), pin: p, initial: lv, level: lv})
	}
	return pl
}

func readLevel(p *hal.Pin) int {
	l, err := p.Read()
	switch {
	case err != nil:
		return -1
	case l == hal.High:
		return 1
	}
	return 0
}

// watch reads the levels every pinWatchEvery until ctx ends.
func (pl *pinLevels) watch(ctx context.Context) {
	t := time.NewTicker(pinWatchEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		pl.poll(time.Now())
	}
}

func (pl *pinLevels) poll(now time.Time) {
	for _, tr := range pl.pins {
		lv := readLevel(tr.pin)
		pl.mu.Lock()
		if lv >= 0 && lv != tr.level {
			tr.level = lv
			if len(tr.changes) == maxPinChanges {
				tr.changes = slices.Delete(tr.changes, 0, 1)
			}
			tr.changes = append(tr.changes, web.PinStep{At: now, Level: lv})
		}
		pl.mu.Unlock()
	}
}

// creditWithin is how far apart an audited write and a watched change may
// be for the change to be credited to the write's caller.
const creditWithin = time.Second

// levels are the pins' levels from from on: the audited writes before the
// watch began, then its changes.
func (pl *pinLevels) levels(from time.Time, writes []pinWrite) []web.PinLevels {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	var out []web.PinLevels
	for _, tr := range pl.pins {
		l := web.PinLevels{Pin: tr.name, Start: -1, Steps: []web.PinStep{}}
		level := -1 // as the steps go
		add := func(st web.PinStep) {
			if st.At.Before(from) {
				level, l.Start = st.Level, st.Level
				return
			}
			if st.Level != level {
				l.Steps = append(l.Steps, st)
				level = st.Level
			}
		}
		for _, w := range writes {
			if w.pin == tr.name && w.at.Before(pl.since) {
				add(web.PinStep{At: w.at, Level: w.level, Who: w.who})
			}
		}
		if tr.initial >= 0 {
			add(web.PinStep{At: pl.since, Level: tr.initial})
		}
		for _, ch := range tr.changes {
			for _, w := range writes {
				if w.pin == tr.name && w.level == ch.Level && w.at.Sub(ch.At).Abs() <= creditWithin {
					ch.Who = w.who
				}
			}
			add(ch)
		}
		out = append(out, l)
	}
	return out
}

// webSensors is the sensors page's facts, its watch of the pins running
// until ctx ends.
func (a *Core) webSensors(ctx context.Context, wg *sync.WaitGroup) web.SensorFacts {
	pl := newPinLevels(a.board)
	wg.Go(func() { pl.watch(ctx) })
	return webSensors{a: a, pins: pl}
}
