package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/clawedge/clawedge/automations"
	"github.com/clawedge/clawedge/channels"
	"github.com/clawedge/clawedge/config"
	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/tools"
)

// minTrusted is the earliest clock the scheduler trusts when the binary carries
// no commit time (a build outside git): a date before this code existed.
var minTrusted = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// BuildTime is the commit time go build stamps into the binary (vcs.time), else
// minTrusted: a clock before it is certainly wrong.
func BuildTime() time.Time {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.time" {
				if t, err := time.Parse(time.RFC3339, s.Value); err == nil && t.After(minTrusted) {
					return t
				}
			}
		}
	}
	return minTrusted
}

// ClockStateFile is where clawedge-init (the SD image, a Pi without a clock that
// runs while it is off) says whether NTP has set the time yet: "unsynced" from
// boot, "synced" after. Elsewhere the file does not exist and only the build
// date gates the clock.
var ClockStateFile = "/run/clawedge-clock"

// ClockSynced reports whether the time is known to be real (see ClockStateFile).
func ClockSynced() bool {
	b, err := os.ReadFile(ClockStateFile)
	return err != nil || strings.TrimSpace(string(b)) != "unsynced"
}

// automationSpecs converts the config's automations; in: counts from now.
func automationSpecs(cfg *config.Config, loc *time.Location, now time.Time) ([]automations.Spec, error) {
	var out []automations.Spec
	for _, name := range slices.Sorted(maps.Keys(cfg.Automations)) {
		c := cfg.Automations[name]
		w := c.When
		sp := automations.Spec{Name: name, Cron: w.Cron, Every: time.Duration(w.Every), Sun: automations.SunEvent(w.Sun),
			Offset: time.Duration(w.Offset), Pin: w.Pin, Edge: w.Edge, Debounce: time.Duration(w.Debounce), For: time.Duration(w.For),
			Serial: w.Serial, Match: w.Match, MQTT: w.MQTT, Read: w.Read, Above: w.Above, Below: w.Below, Hysteresis: w.Hysteresis,
			Do: c.Do, Ask: c.Ask, Notify: c.Notify, CatchUp: c.CatchUp, AsksPerDay: c.AsksPerDay}
		if w.At != "" {
			at, err := config.ParseAt(w.At, loc)
			if err != nil {
				return nil, fmt.Errorf("automations.%s.when.at: %w", name, err)
			}
			sp.At = at
		}
		if w.In != 0 {
			sp.At = now.Add(time.Duration(w.In))
		}
		if i := c.If; i != nil {
			sp.If.Pin, sp.If.Is = i.Pin, i.Is
			if len(i.Between) == 2 {
				from, _ := config.ParseClock(i.Between[0])
				to, _ := config.ParseClock(i.Between[1])
				sp.If.Window, sp.If.From, sp.If.To = true, from, to
			}
			for _, d := range i.Weekdays {
				sp.If.Weekdays = append(sp.If.Weekdays, automations.Weekday(d))
			}
		}
		out = append(out, sp)
	}
	return out, nil
}

// newScheduler builds the scheduler of a's config over a's runner; d answers ask
// actions (nil: none).
func (a *Core) newScheduler(d *channels.Dispatcher) (*automations.Scheduler, error) {
	loc, err := config.LoadTimezone(a.cfg.Timezone)
	if err != nil {
		return nil, err
	}
	specs, err := automationSpecs(a.cfg, loc, time.Now())
	if err != nil {
		return nil, err
	}
	opt := automations.Options{
		Store: a.store, Log: a.log, Loc: loc, TrustedAfter: BuildTime(), Trusted: ClockSynced,
		AsksPerDay: a.cfg.AutomationBudget.AsksPerDay,
		Effects: automations.Effects{
			Runner: a.runner,
			Notify: a.autoNotify,
			PinHigh: func(pin string) (bool, error) {
				p, err := a.board.Pin(pin)
				if err != nil {
					return false, err
				}
				l, err := p.Read()
				return l == hal.High, err
			},
			Edges: func(pin string) (func(context.Context) (bool, error), error) {
				p, err := a.board.Pin(pin)
				if err != nil {
					return nil, err
				}
				if c := p.Config(); c.Mode != hal.ModeIn || c.Edge == hal.EdgeNone {
					return nil, fmt.Errorf("pin %s: a pin trigger needs an input with edge detection (edge: both in board.pins)", pin)
				}
				return func(ctx context.Context) (bool, error) {
					l, err := p.WaitForEdge(ctx, p.Config().Edge)
					return l == hal.High, err
				}, nil
			},
			Lines:    a.portLines,
			Messages: a.mqttMessages, // mqtt.go
		},
	}
	if l := a.cfg.Location; l != nil {
		opt.Lat, opt.Lon, opt.HasLocation = l.Lat, l.Lon, true
	}
	if d != nil && d.Agent != nil {
		opt.Effects.Ask = func(ctx context.Context, c tools.Caller, prompt string) (string, error) {
			return d.Agent.Reply(ctx, channels.Message{Channel: c.Channel, User: c.User, Creator: c.Creator, Text: prompt})
		}
	}
	return automations.New(specs, opt)
}

// serveAutomations runs the scheduler; it reports whether there is anything to run.
func (a *Core) serveAutomations(ctx context.Context, d *channels.Dispatcher, wg *sync.WaitGroup) (bool, error) {
	s, err := a.newScheduler(d)
	if err != nil {
		return false, err
	}
	if err := s.Start(ctx); err != nil {
		return false, err
	}
	a.sched = s
	a.autoTools.Set(s)
	if !s.ClockTrusted() {
		a.log.Warn("the clock is not trusted yet (before this build's date, or not set by NTP since boot): time triggers wait until it is", "now", time.Now())
	}
	wg.Go(func() {
		if err := s.Run(ctx); err != nil {
			a.log.Error("automations stopped", "err", err)
		}
	})
	return true, nil
}

// autoNotify sends an automation's message where the board's owners are told.
func (a *Core) autoNotify(ctx context.Context, text string) {
	a.tell.Owners(ctx, text)
}

// AutoRequest is the control socket's auto op: list, or an action on one name.
type AutoRequest struct {
	Op   string `json:"op"` // list | run | pause | resume | rm
	Name string `json:"name,omitempty"`
}

// AutoReply is its answer (and `clawedge auto list --json`).
type AutoReply struct {
	ClockTrusted bool                 `json:"clock_trusted"`
	Timezone     string               `json:"timezone"`
	Automations  []automations.Status `json:"automations"`
}

// Location is the daemon's zone, for printing its times here; UTC when this
// side cannot load it.
func (r AutoReply) Location() *time.Location {
	switch r.Timezone {
	case "", "UTC":
		return time.UTC
	case "Local":
		return time.Local
	}
	if loc, err := config.LoadTimezone(r.Timezone); err == nil {
		return loc
	}
	return time.UTC
}

func (a *Core) autoOp(raw json.RawMessage) (any, error) {
	var req AutoRequest
	if err := json.Unmarshal(raw, &req); err != nil {
		return nil, err
	}
	if a.sched == nil {
		return nil, errors.New("the automations are not running")
	}
	return AutoDo(a.sched, req)
}

func AutoDo(s *automations.Scheduler, req AutoRequest) (AutoReply, error) {
	var err error
	// Only the list, a pure read: run, pause, resume and rm are the audited
	// auto/* tools, called on the one call path by whoever asks.
	switch req.Op {
	case "list":
	case "run", "pause", "resume", "rm":
		err = fmt.Errorf("auto %s is a call: @auto/%s{name=...} on the call path (clawedge auto %s NAME sends it)", req.Op, req.Op, req.Op)
	default:
		err = fmt.Errorf("unknown auto op %q", req.Op)
	}
	if err != nil {
		return AutoReply{}, err
	}
	l := s.List()
	if l == nil {
		l = []automations.Status{}
	}
	return AutoReply{ClockTrusted: s.ClockTrusted(), Timezone: s.Location().String(), Automations: l}, nil
}

// maxLine bounds a serial line kept for a serial trigger; a longer one is cut
// there (a device that never sends a newline must not fill the memory).
const maxLine = 4096

// portLines reads the lines of a configured port for a serial trigger. The port
// is held for one read of at most a second at a time, so the serial tools can
// use it in between.
func (a *Core) portLines(name string) (func(context.Context) (string, error), error) {
	p, err := a.board.Port(name)
	if err != nil {
		return nil, err
	}
	var buf []byte
	return func(ctx context.Context) (string, error) {
		for {
			if i := bytes.IndexByte(buf, '\n'); i >= 0 || len(buf) >= maxLine {
				if i < 0 {
					i = maxLine
				}
				line := strings.TrimRight(string(buf[:min(i, len(buf))]), "\r")
				buf = buf[min(i+1, len(buf)):]
				return line, nil
			}
			var chunk [512]byte
			n := 0
			err := p.Do(ctx, func(c hal.PortConn) error {
				if err := c.SetReadTimeout(time.Second); err != nil {
					return err
				}
				var err error
				n, err = c.Read(chunk[:])
				return err
			})
			buf = append(buf, chunk[:n]...)
			if err != nil {
				return "", err
			}
		}
	}, nil
}
